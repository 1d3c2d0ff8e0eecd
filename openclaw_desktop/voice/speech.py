"""Speaking a reply: the gateway's ``talk.speak`` first, this computer's espeak-ng when the
gateway has no speech provider (``UNAVAILABLE`` with ``details.reason:
"talk_unconfigured"``) or fails."""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
import shutil
from dataclasses import dataclass

from openclaw_desktop.errors import GatewayError, OpenClawError
from openclaw_desktop.protocol.enums import Method
from openclaw_desktop.protocol.methods.talk import TalkSpeakParams
from openclaw_desktop.protocol.results.talk import TalkSpeakResult
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.sdk.answers import parse_result
from openclaw_desktop.voice.decode import AudioDecodeError, Pcm, decode_audio

__all__ = ["LocalSpeechUnavailable", "Speech", "speak_locally", "speak_reply"]

log = logging.getLogger("openclaw.voice")

#: Longest text spoken at once (the reference's talk.speak limit is about this).
MAX_CHARS = 4096
#: A local synthesis that takes longer than this is given up.
LOCAL_TIMEOUT_S = 30.0


class LocalSpeechUnavailable(OpenClawError):
    """Neither the gateway nor this computer can speak (no espeak-ng)."""


@dataclass(frozen=True)
class Speech:
    """Audio to play and who made it."""

    pcm: Pcm
    provider: str


async def speak_locally(text: str) -> Speech:
    """espeak-ng on this computer (WAV on stdout), bounded.

    Raises:
        LocalSpeechUnavailable: espeak-ng is not installed or failed.
    """
    binary = shutil.which("espeak-ng") or shutil.which("espeak")
    if binary is None:
        raise LocalSpeechUnavailable(
            "no speech: the gateway has no speech provider and espeak-ng is not installed"
        )
    proc = await asyncio.create_subprocess_exec(
        binary,
        "--stdout",
        text[:MAX_CHARS],
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with asyncio.timeout(LOCAL_TIMEOUT_S):
            out, err = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise LocalSpeechUnavailable("espeak-ng took too long") from None
    if proc.returncode != 0:
        raise LocalSpeechUnavailable(f"espeak-ng failed: {err.decode(errors='replace')[:200]}")
    try:
        return Speech(decode_audio(out, "wav"), "espeak-ng (local)")
    except AudioDecodeError as exc:
        raise LocalSpeechUnavailable(f"espeak-ng gave no usable audio: {exc}") from None


def _unconfigured(exc: OpenClawError) -> bool:
    return isinstance(exc, GatewayError) and exc.detail("reason") == "talk_unconfigured"


async def speak_reply(client: OpenClaw, text: str) -> Speech:
    """The reply's audio: ``talk.speak`` when the gateway can, else local speech.

    Raises:
        LocalSpeechUnavailable: no speech anywhere.
    """
    text = text.strip()[:MAX_CHARS]
    try:
        answer = await client.call(
            Method.TALK_SPEAK, TalkSpeakParams(text=text).to_wire(), timeout=60
        )
        result = parse_result(Method.TALK_SPEAK, answer, TalkSpeakResult)
        data = base64.b64decode(result.audio_base64, validate=True)
        hint = " ".join(
            part or "" for part in (result.output_format, result.mime_type, result.file_extension)
        )
        return Speech(decode_audio(data, hint), result.provider or "gateway")
    except (OpenClawError, TimeoutError, binascii.Error, ValueError) as exc:
        if isinstance(exc, OpenClawError) and _unconfigured(exc):
            log.info("the gateway has no speech provider: speaking locally")
        else:
            log.warning("talk.speak failed (%s): speaking locally", exc)
    return await speak_locally(text)
