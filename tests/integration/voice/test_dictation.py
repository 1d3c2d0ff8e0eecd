"""Dictation end to end: espeak-ng speech played into a real ALSA capture device, captured
by PortAudio, streamed over a real loopback WebSocket to our gateway's transcription
session (pocketsphinx) and back as transcript events."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.server import GatewayServer
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice import (
    AudioContract,
    Dictation,
    DictationResult,
    TalkSession,
    open_microphone,
)
from tests.helpers.alsa_mic import AlsaTestMic
from tests.helpers.bundled_gateway import TOKEN, bundled_gateway
from tests.helpers.fake_audio_api import FakeAudioAPI, Upload
from tests.helpers.speech import espeak_pcm16
from tests.integration.gateway.talk.test_gw_talk_sessions import write_talk_json

pytestmark = pytest.mark.timeout(120)

SCOPES = ("operator.read", "operator.write", "operator.talk")


def speech(text: str, rate: int = 16_000) -> np.ndarray[Any, Any]:
    """``text`` as the int16 samples the test microphone plays."""
    return np.frombuffer(espeak_pcm16(text, rate), dtype="<i2")


async def dictate(
    url: str, mic: AlsaTestMic, *clips: np.ndarray[Any, Any]
) -> tuple[DictationResult, list[str], list[float]]:
    """Dictate ``clips`` (one utterance each, a pause between) through the microphone."""
    partials: list[str] = []
    levels: list[float] = []
    async with OpenClaw.connect(url, token=TOKEN, identity="ephemeral", scopes=SCOPES) as client:
        dictation = Dictation(
            client,
            lambda rate: open_microphone(None, rate),
            on_partial=partials.append,
            on_level=levels.append,
            audio=AudioContract("pcm16", 24_000),
        )
        stop = asyncio.Event()
        running = asyncio.ensure_future(dictation.run(stop))
        await asyncio.sleep(0.5)
        for clip in clips:
            mic.play(clip)
            await asyncio.sleep(len(clip) / 24_000 + 1.0)
        stop.set()
        result = await asyncio.wait_for(running, 30)
    return result, partials, levels


async def test_dictation_streams_the_microphone_and_keeps_utterances_in_order(
    tmp_path: Path,
) -> None:
    """Two utterances through a real capture device reach the gateway's recognizer (an
    OpenAI-compatible server over real HTTP) as two uploads of the right length, and come
    back as one transcript in order; levels are reported."""

    def answer(upload: Upload) -> str:
        return f"utterance {len(api.uploads)} of {upload.samples} samples"

    first, second = speech("hello world", 24_000), speech("good morning to you", 24_000)
    with FakeAudioAPI(transcript=answer) as api:
        state = tmp_path / "state"
        write_talk_json(
            state,
            {
                "transcription": {"provider": "openai", "baseUrl": api.base_url},
                "silenceDurationMs": 600,
            },
        )
        async with bundled_gateway(state) as gw:
            with AlsaTestMic(tmp_path, sample_rate=24_000, idle="noise") as mic:
                result, _partials, levels = await dictate(gw.url, mic, first, second)
    assert [u.split(" of ")[0] for u in result.utterances] == ["utterance 1", "utterance 2"]
    assert result.text == " ".join(result.utterances)
    seconds = [u.samples / 16_000 for u in api.uploads]
    assert len(seconds) == 2 and seconds[0] < seconds[1], seconds
    assert result.frames_sent > 150 and result.frames_dropped == 0
    assert max(levels) > -40 > min(levels)


async def test_dictation_with_the_offline_recognizer(gw: GatewayServer, tmp_path: Path) -> None:
    """pocketsphinx (the offline default) recognizes "hello world" spoken into the
    microphone; partials come while speaking. The microphone hums with a faint noise floor
    as real ones do: with digital silence before the speech, pocketsphinx's noise estimate
    starts wrong and it hears "fellow world"."""
    with AlsaTestMic(tmp_path, sample_rate=24_000, idle="noise") as mic:
        result, partials, _levels = await dictate(gw.url, mic, speech("hello world", 24_000))
    assert result.text == "hello world", result
    assert partials, "partial transcripts while speaking"


async def test_g711_sessions_and_closed_sessions(gw: GatewayServer) -> None:
    """A telephony-style session takes µ-law at 8 kHz; after close the gateway forgets it
    and a late frame is not an error on our side (it is counted as not delivered)."""
    async with OpenClaw.connect(gw.url, token=TOKEN, identity="ephemeral", scopes=SCOPES) as client:
        session = await TalkSession.open(client, audio=AudioContract("g711_ulaw", 8000))
        assert session.contract == AudioContract("g711_ulaw", 8000)
        await session.send(b"\xff" * 160, 0)
        await session.drain()
        assert session.sent_frames == 1
        await session.close()
        await session.close()  # idempotent
        with pytest.raises(OpenClawError, match="Unknown Talk session"):
            await client.call(
                "talk.session.appendAudio", {"sessionId": session.session_id, "audioBase64": ""}
            )
        await session.aclose()


async def test_no_transcription_scope_is_a_clear_error(gw: GatewayServer) -> None:
    """Without operator.talk/write the SDK refuses before sending."""
    async with OpenClaw.connect(
        gw.url, token=TOKEN, identity="ephemeral", scopes=("operator.read",)
    ) as client:
        with pytest.raises(OpenClawError):
            await TalkSession.open(client)
