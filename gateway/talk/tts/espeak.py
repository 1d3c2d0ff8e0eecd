"""espeak-ng as the offline speech provider: ``espeak-ng --stdout`` in a subprocess (text
on stdin, a WAV on stdout, killed after a timeout), converted to the wanted format.

espeak-ng cannot encode MP3 or Opus; those requests get a WAV, and ``outputFormat`` in the
result says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import re

from gateway.talk.tts.base import (
    OutputFormat,
    SpeakRequest,
    SpeechError,
    SpeechResult,
    encode_pcm16,
)
from gateway.talk.wav import WavError, wav_to_pcm16

__all__ = ["EspeakSpeech"]

_VOICE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_+\-]{0,63}$")
#: espeak-ng's default speaking rate (words per minute) and its accepted range.
DEFAULT_WPM = 175
_WPM_MIN, _WPM_MAX = 80, 450
_MAX_OUTPUT = 64 * 1024 * 1024


class EspeakSpeech:
    """Speaks with the espeak-ng binary at ``path``."""

    id = "espeak-ng"
    label = "espeak-ng (offline, robotic)"
    models: list[str] = []

    def __init__(self, path: str, *, voice: str | None = None, timeout_s: float = 20.0) -> None:
        self.path = path
        self.default_voice = voice
        self.voices = ["en-us", "en", "en-gb-x-rp", "de", "fr", "es", "it", "pt", "nl"]
        self.timeout_s = timeout_s

    def _args(self, request: SpeakRequest) -> list[str]:
        args = [self.path, "--stdout", "--stdin"]
        voice = request.voice or request.language or self.default_voice
        if voice is not None:
            if not _VOICE_RE.match(voice):
                raise SpeechError(f"invalid espeak-ng voice {voice!r}")
            args += ["-v", voice]
        wpm = request.rate_wpm
        if wpm is None and request.speed is not None:
            wpm = round(DEFAULT_WPM * request.speed)
        if wpm is not None:
            args += ["-s", str(min(_WPM_MAX, max(_WPM_MIN, wpm)))]
        return args

    async def speak(self, request: SpeakRequest) -> SpeechResult:
        proc = await asyncio.create_subprocess_exec(
            *self._args(request),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            async with asyncio.timeout(self.timeout_s):
                out, err = await proc.communicate(request.text.encode("utf-8"))
        except TimeoutError:
            raise SpeechError(f"espeak-ng took longer than {self.timeout_s:g} s") from None
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        if proc.returncode != 0 or not out:
            problem = err.decode("utf-8", "replace").strip()[:200] or f"exit {proc.returncode}"
            raise SpeechError(f"espeak-ng failed: {problem}")
        if len(out) > _MAX_OUTPUT:
            raise SpeechError("espeak-ng produced more audio than allowed")
        try:
            pcm16, rate = wav_to_pcm16(out)
        except WavError as exc:
            raise SpeechError(f"espeak-ng output: {exc}") from None
        wanted = request.output
        if wanted is None or wanted.kind in ("mp3", "opus"):
            wanted = OutputFormat("wav", None)
        return encode_pcm16(pcm16, rate, wanted, self.id)
