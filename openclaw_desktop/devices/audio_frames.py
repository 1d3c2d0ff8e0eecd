"""Pure helpers of the microphone path: the frame queue between the PortAudio thread and
asyncio, the input level, and a simple energy voice-activity detector.

Nothing here touches sounddevice, so all of it is unit-testable with plain numbers.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

__all__ = ["SILENCE_DBFS", "EnergyVad", "FrameQueue", "rms_dbfs"]

T = TypeVar("T")

#: The level reported for digital silence (all-zero samples) instead of minus infinity.
SILENCE_DBFS = -100.0


def rms_dbfs(pcm16: bytes) -> float:
    """The RMS level of PCM16 little-endian samples in dB relative to full scale.

    A full-scale square wave is 0 dBFS, a full-scale sine about -3 dBFS; silence (or an
    empty frame) is :data:`SILENCE_DBFS`.
    """
    samples = np.frombuffer(pcm16, dtype="<i2").astype(np.float64)
    if samples.size == 0:
        return SILENCE_DBFS
    rms = math.sqrt(float(np.mean(np.square(samples)))) / 32768.0
    if rms <= 0.0:
        return SILENCE_DBFS
    return max(SILENCE_DBFS, 20.0 * math.log10(rms))


class FrameQueue(Generic[T]):
    """A bounded queue that drops the OLDEST item when full and counts the drops.

    Live audio must never block its producer (the PortAudio callback thread hands frames
    over with ``loop.call_soon_threadsafe(queue.put_nowait, frame)``), and under
    backpressure the newest audio is the most useful. Every method runs on the event loop.
    :meth:`close` ends the stream: :meth:`get` still returns what is queued, then None, or
    raises the error given to :meth:`close`.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("maxsize must be at least 1")
        self.maxsize = maxsize
        self.dropped = 0
        self._items: deque[T] = deque()
        self._closed = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None

    def __len__(self) -> int:
        return len(self._items)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def put_nowait(self, item: T) -> None:
        """Append ``item``, dropping the oldest item when full; ignored once closed."""
        if self._closed:
            return
        if len(self._items) >= self.maxsize:
            self._items.popleft()
            self.dropped += 1
        self._items.append(item)
        self._wake()

    def close(self, error: BaseException | None = None) -> None:
        """End the stream; a later :meth:`get` raises ``error`` (if any) once drained.

        The first close wins: an error reported after a clean close is ignored.
        """
        if self._closed:
            return
        self._closed = True
        self._error = error
        self._wake()

    async def get(self, timeout: float) -> T | None:
        """The oldest item; None when closed and drained.

        Raises:
            TimeoutError: Nothing arrived within ``timeout`` seconds.
            BaseException: The error given to :meth:`close`, once drained.
        """
        while not self._items:
            if self._closed:
                if self._error is not None:
                    raise self._error
                return None
            waiter = asyncio.get_running_loop().create_future()
            self._waiter = waiter
            try:
                async with asyncio.timeout(timeout):
                    await waiter
            finally:
                self._waiter = None
        return self._items.popleft()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


@dataclass
class EnergyVad:
    """Speech, then silence, by frame energy: enough for "record one utterance".

    A frame is speech when its level is at least ``threshold_dbfs`` and ``margin_db`` above
    the noise floor. The floor follows quiet frames down at once and rises slowly
    (``floor_rise_db_per_s``), so a steady noise (a fan) turns into "silence" after a few
    seconds while pauses between words keep it low. Speech counts once ``min_speech_ms``
    of consecutive speech frames were seen (a click is not speech); the utterance has
    ended after ``silence_ms`` of non-speech following it.
    """

    frame_ms: int = 20
    silence_ms: int = 1200
    threshold_dbfs: float = -45.0
    margin_db: float = 15.0
    min_speech_ms: int = 60
    floor_rise_db_per_s: float = 3.0
    floor_dbfs: float = field(default=-60.0)
    heard_speech: bool = field(default=False, init=False)
    ended: bool = field(default=False, init=False)
    _run_ms: int = field(default=0, init=False)
    _silent_ms: int = field(default=0, init=False)

    def push(self, level_dbfs: float) -> bool:
        """Feed one frame's level; returns whether that frame counts as speech."""
        if level_dbfs < self.floor_dbfs:
            self.floor_dbfs = level_dbfs
        else:
            self.floor_dbfs += self.floor_rise_db_per_s * self.frame_ms / 1000.0
        is_speech = level_dbfs >= max(self.threshold_dbfs, self.floor_dbfs + self.margin_db)
        if is_speech:
            self._run_ms += self.frame_ms
            self._silent_ms = 0
            if self._run_ms >= self.min_speech_ms:
                self.heard_speech = True
        else:
            self._run_ms = 0
            self._silent_ms += self.frame_ms
            if self.heard_speech and self._silent_ms >= self.silence_ms:
                self.ended = True
        return is_speech
