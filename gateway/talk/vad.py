"""An energy voice-activity detector: 20 ms frames above a level are speech; an utterance
ends after a stretch of silence following speech."""

from __future__ import annotations

import math

__all__ = ["EnergyEndpointer", "threshold_dbfs"]

FRAME_MS = 20
#: ``vadThreshold`` 0..1 maps linearly onto this dBFS range (0.5 -> -45 dBFS).
_LOW_DBFS, _HIGH_DBFS = -70.0, -20.0


def threshold_dbfs(vad_threshold: float | None) -> float:
    """The speech level of a ``vadThreshold`` (0..1; None: 0.5)."""
    fraction = 0.5 if vad_threshold is None else min(1.0, max(0.0, vad_threshold))
    return _LOW_DBFS + fraction * (_HIGH_DBFS - _LOW_DBFS)


class EnergyEndpointer:
    """Feeds on PCM16 at ``sample_rate``; :meth:`feed` says when an utterance just ended.

    Speech needs ``min_speech_ms`` above the threshold (a click is not speech); the
    utterance ends after ``silence_ms`` below it.
    """

    def __init__(
        self,
        sample_rate: int,
        *,
        silence_ms: int,
        level_dbfs: float,
        min_speech_ms: int = 100,
    ) -> None:
        self._frame_bytes = sample_rate * FRAME_MS // 1000 * 2
        self._silence_frames = max(1, silence_ms // FRAME_MS)
        self._speech_frames = max(1, min_speech_ms // FRAME_MS)
        self._level = level_dbfs
        self._pending = b""
        self._loud = 0
        self._quiet = 0
        self._in_speech = False

    @property
    def in_speech(self) -> bool:
        """Whether the last frames were speech (an utterance is under way)."""
        return self._in_speech

    def feed(self, pcm16: bytes) -> int:
        """Consume samples; returns how many utterances ended inside them."""
        data = self._pending + pcm16
        usable = len(data) // self._frame_bytes * self._frame_bytes
        self._pending = data[usable:]
        ended = 0
        for start in range(0, usable, self._frame_bytes):
            if self._frame_loud(data[start : start + self._frame_bytes]):
                self._loud += 1
                self._quiet = 0
                if self._loud >= self._speech_frames:
                    self._in_speech = True
            else:
                self._loud = 0
                self._quiet += 1
                if self._in_speech and self._quiet >= self._silence_frames:
                    self._in_speech = False
                    ended += 1
        return ended

    def _frame_loud(self, frame: bytes) -> bool:
        import numpy as np  # loaded with the first audio, not when the gateway starts

        samples = np.frombuffer(frame, dtype="<i2").astype(np.float64)
        rms = math.sqrt(float(np.mean(samples * samples))) / 32768.0
        return rms > 0 and 20 * math.log10(rms) > self._level
