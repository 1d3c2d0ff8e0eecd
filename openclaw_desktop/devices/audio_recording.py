"""One microphone recording: frames from a :class:`MicrophoneStream` collected into PCM,
with a hard length cap, an optional end on silence, and the capture indicator held for
exactly as long as the device is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.devices.audio import MicrophoneStream
from openclaw_desktop.devices.audio_frames import SILENCE_DBFS, EnergyVad, rms_dbfs
from openclaw_desktop.devices.errors import DeviceError

__all__ = ["Recording", "RecordingResult"]

log = logging.getLogger("openclaw.devices.audio")

#: How often (in frames) the recording asks ``keep_going`` whether it may continue.
_CHECK_EVERY = 25


@dataclass(frozen=True, slots=True)
class RecordingResult:
    """What a finished recording captured."""

    pcm: bytes
    sample_rate: int
    heard_speech: bool
    limit_reached: bool
    peak_dbfs: float

    @property
    def duration_ms(self) -> int:
        """Length of :attr:`pcm`."""
        return len(self.pcm) // 2 * 1000 // self.sample_rate


class Recording:
    """Records from ``stream`` until stopped, ``max_s`` of audio, or (``end_on_silence``)
    the end of an utterance; whatever comes first.

    Args:
        stream: an unopened stream; the recording opens and always closes it.
        max_s: the hard cap: the recording stops itself after this much audio (or this
            much wall time plus a second, should the device deliver slowly).
        stall_s: no audio for this long means the device is gone: the recording fails.
        vad: the speech detector; also decides whether anything was said at all.
        end_on_silence: stop when ``vad`` says the utterance ended.
        activity: held from before the device opens until it is closed again (the
            capture indicator), exited on every path.
        keep_going: asked about twice a second; a returned text stops the recording with
            that reason as an error (e.g. the microphone was turned off in Settings).
    """

    def __init__(
        self,
        stream: MicrophoneStream,
        *,
        max_s: float,
        stall_s: float = 2.0,
        vad: EnergyVad | None = None,
        end_on_silence: bool = False,
        activity: contextlib.AbstractContextManager[Any] | None = None,
        keep_going: Callable[[], str | None] | None = None,
    ) -> None:
        self.stream = stream
        self.max_s = max_s
        self.stall_s = stall_s
        self.vad = vad or EnergyVad(frame_ms=stream.frame_ms)
        self.end_on_silence = end_on_silence
        self.level_dbfs = SILENCE_DBFS
        self.peak_dbfs = SILENCE_DBFS
        self.limit_reached = False
        self.error: DeviceError | None = None
        self._activity = activity or contextlib.nullcontext()
        self._keep_going = keep_going
        self._exit = contextlib.ExitStack()
        self._pcm = bytearray()
        self._pump: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        """Whether the device is still recording."""
        return self._pump is not None and not self._pump.done()

    async def start(self) -> None:
        """Open the device and start collecting.

        Raises:
            DeviceError: The device could not be opened (the indicator is released).
        """
        self._exit.enter_context(self._activity)
        try:
            await self.stream.open()
        except BaseException:
            self._exit.close()
            raise
        self._pump = asyncio.create_task(self._collect(), name="microphone-recording")

    async def _collect(self) -> None:
        stream = self.stream
        cap = int(self.max_s * stream.sample_rate) * 2
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.max_s + 1.0
        frames = 0
        try:
            while (frame := await stream.read(self.stall_s)) is not None:
                frames += 1
                self._pcm += frame[: cap - len(self._pcm)]
                self.level_dbfs = rms_dbfs(frame)
                self.peak_dbfs = max(self.peak_dbfs, self.level_dbfs)
                self.vad.push(self.level_dbfs)
                if len(self._pcm) >= cap or loop.time() >= deadline:
                    self.limit_reached = True
                    # Expected for a one-shot recording; worth a warning for a forgotten one.
                    level = logging.INFO if self.end_on_silence else logging.WARNING
                    log.log(level, "microphone recording reached its %g s limit", self.max_s)
                    break
                if self.end_on_silence and self.vad.ended:
                    break
                if self._keep_going is not None and frames % _CHECK_EVERY == 0:
                    reason = self._keep_going()
                    if reason:
                        raise DeviceError("UNAVAILABLE", reason)
        except DeviceError as exc:
            self.error = exc
        finally:
            try:
                await self.stream.close()
            finally:
                self._exit.close()

    async def wait(self) -> None:
        """Until the recording ends by itself (limit, silence, failure)."""
        if self._pump is not None:
            await asyncio.shield(self._pump)

    async def finish(self) -> RecordingResult:
        """Stop (if still running) and return what was recorded.

        Raises:
            DeviceError: The recording failed (device gone, stopped by ``keep_going``).
        """
        await self._stop()
        if self.error is not None:
            raise self.error
        return RecordingResult(
            bytes(self._pcm),
            self.stream.sample_rate,
            self.vad.heard_speech,
            self.limit_reached,
            self.peak_dbfs,
        )

    async def discard(self) -> None:
        """Stop and throw the audio away."""
        await self._stop()
        self._pcm.clear()

    async def _stop(self) -> None:
        # Closing the stream ends the pump once it has drained the queued frames.
        await self.stream.close()
        if self._pump is not None:
            await asyncio.shield(self._pump)
        self._exit.close()
