"""Dictation: the microphone streamed to a gateway transcription session until the user
stops (push-to-talk released, mic button clicked again), then the transcript.

``transcript.delta`` events are reported live (the partial text of the current utterance,
after the utterances already done); each ``transcript.done`` commits an utterance. The
result is every committed utterance, in order. Capture runs in PortAudio's thread and is
handed over through :class:`~openclaw_desktop.devices.audio.MicrophoneStream`'s bounded
drop-oldest queue, so a slow link loses the oldest audio, never blocks the microphone.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from openclaw_desktop.devices.audio_frames import rms_dbfs
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice.talk_session import AudioContract, TalkSession, parse_event

__all__ = ["Dictation", "DictationResult", "FrameSource", "MicOpener"]

log = logging.getLogger("openclaw.voice")

#: Longest dictation (the microphone is closed after it, like push-to-talk's cap).
MAX_SECONDS = 120.0
#: A microphone silent this long (no frames at all, not quiet audio) has stopped.
MIC_STALL_S = 2.0
#: How long to wait for the final transcript after closing the session.
FINAL_TIMEOUT_S = 15.0


class FrameSource(Protocol):
    """Where frames come from (:class:`~openclaw_desktop.devices.audio.MicrophoneStream`)."""

    @property
    def dropped(self) -> int:
        """Frames lost to backpressure."""
        ...

    async def read(self, timeout: float) -> bytes | None:
        """The next PCM16 mono frame, or None when none came in ``timeout`` seconds."""
        ...

    async def close(self) -> None:
        """Stop capturing."""
        ...


#: Opens the microphone at a sample rate (the session's).
MicOpener = Callable[[int], Awaitable[FrameSource]]


@dataclass
class DictationResult:
    """The transcript and what happened on the way."""

    text: str
    utterances: list[str] = field(default_factory=list)
    frames_sent: int = 0
    frames_dropped: int = 0
    errors: list[str] = field(default_factory=list)


class Dictation:
    """One dictation; :meth:`run` until ``stop`` is set."""

    def __init__(
        self,
        client: OpenClaw,
        open_mic: MicOpener,
        *,
        on_partial: Callable[[str], None] | None = None,
        on_level: Callable[[float], None] | None = None,
        language: str | None = None,
        audio: AudioContract | None = None,
        max_seconds: float = MAX_SECONDS,
    ) -> None:
        self.client = client
        self.open_mic = open_mic
        self.on_partial = on_partial or (lambda _text: None)
        self.on_level = on_level or (lambda _dbfs: None)
        self.language = language
        self.audio = audio or AudioContract()
        self.max_seconds = max_seconds
        self._done: list[str] = []
        self._errors: list[str] = []
        self._closed = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> DictationResult:
        """Stream until ``stop`` (or :data:`MAX_SECONDS`); returns the transcript.

        Raises:
            OpenClawError: the gateway has no transcription (``talk.session.create``
                refused) or the connection is gone.
            DeviceError: the microphone cannot be opened.
        """
        session = await TalkSession.open(self.client, audio=self.audio, language=self.language)
        collector = asyncio.get_running_loop().create_task(self._collect(session))
        dropped = 0
        try:
            mic = await self.open_mic(session.contract.sample_rate)
            try:
                await self._pump(session, mic, stop)
            finally:
                dropped = mic.dropped
                await mic.close()
            await session.close()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(FINAL_TIMEOUT_S):
                    await self._closed.wait()
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector
            await session.aclose()
        return DictationResult(
            " ".join(t for t in self._done if t),
            list(self._done),
            session.sent_frames,
            dropped,
            list(self._errors),
        )

    async def _pump(self, session: TalkSession, mic: FrameSource, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_seconds
        while not stop.is_set() and loop.time() < deadline:
            frame = await mic.read(MIC_STALL_S)
            if frame is None:
                break  # the stream was closed
            self.on_level(rms_dbfs(frame))
            await session.send_pcm(frame)

    async def _collect(self, session: TalkSession) -> None:
        while True:
            event = await session.next_event(3600)
            if event is None:
                continue
            kind, text, payload = parse_event(event)
            if kind == "transcript.delta":
                self.on_partial(" ".join([*self._done, text]).strip())
            elif kind == "transcript.done":
                if text:
                    self._done.append(text)
                self.on_partial(" ".join(self._done))
            elif kind == "session.error":
                self._errors.append(str(payload.get("message") or "recognition failed"))
            elif kind == "session.closed":
                self._closed.set()
                return
