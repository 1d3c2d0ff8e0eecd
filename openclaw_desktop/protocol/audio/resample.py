"""A streaming band-limited resampler for PCM16 mono: windowed-sinc interpolation with a
precomputed polyphase table, for any pair of integer rates (8, 16, 22.05, 24, 44.1, 48 kHz).

Output sample ``n`` sits at input position ``n * src / dst``; it is the weighted sum of the
``2 * half_width`` input samples around that position. When the rate goes down, the kernel is
stretched so that it also low-passes below the new Nyquist frequency (no aliasing). Each
distinct fractional position (``dst / gcd(src, dst)`` of them) has its own row of weights,
normalized to sum to one, so a constant signal passes unchanged.

Chunks fed one after another give the same samples as the whole signal fed at once; the
resampler keeps only the few input samples the next outputs still need.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_PHASES", "Resampler", "resample_pcm16"]

#: Taps on each side of the output position, at the lower of the two rates.
DEFAULT_HALF_WIDTH = 16
#: Bound on the polyphase table (rows); rates whose ratio needs more are refused.
MAX_PHASES = 4096
#: Outputs computed per block (bounds the temporary ``outputs x taps`` arrays).
_BLOCK = 4096


def _blackman(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The Blackman window on ``x`` in [-1, 1] (zero outside)."""
    w = 0.42 + 0.5 * np.cos(np.pi * x) + 0.08 * np.cos(2 * np.pi * x)
    result: npt.NDArray[np.float64] = np.where(np.abs(x) <= 1.0, w, 0.0)
    return result


class Resampler:
    """Converts a stream of PCM16 mono samples from ``src_rate`` to ``dst_rate`` Hz.

    Args:
        src_rate: input rate in Hz (positive integer).
        dst_rate: output rate in Hz (positive integer).
        half_width: kernel half-width in samples of the lower rate (quality vs cost).

    Raises:
        ValueError: a rate is not positive, or the ratio needs more than
            :data:`MAX_PHASES` polyphase rows.
    """

    def __init__(self, src_rate: int, dst_rate: int, half_width: int = DEFAULT_HALF_WIDTH):
        if src_rate <= 0 or dst_rate <= 0:
            raise ValueError("sample rates must be positive")
        if half_width < 1:
            raise ValueError("half_width must be at least 1")
        g = math.gcd(src_rate, dst_rate)
        self.src_rate, self.dst_rate = src_rate, dst_rate
        self._up, self._down = dst_rate // g, src_rate // g
        if self._up > MAX_PHASES:
            raise ValueError(f"cannot resample {src_rate} Hz to {dst_rate} Hz (ratio too fine)")
        cutoff = min(1.0, dst_rate / src_rate)  # relative to the input Nyquist frequency
        self._half = math.ceil(half_width / cutoff)  # taps each side, in input samples
        offsets = np.arange(-self._half + 1, self._half + 1, dtype=np.float64)
        phases = np.arange(self._up, dtype=np.float64) / self._up
        distance = phases[:, None] - offsets[None, :]
        table = cutoff * np.sinc(cutoff * distance) * _blackman(distance / self._half)
        self._table = table / table.sum(axis=1, keepdims=True)
        self._offsets = offsets.astype(np.int64)
        # Input history; _base is the absolute input index of its first sample. It starts with
        # silence before the signal so that the first outputs are centred on real samples.
        self._history: npt.NDArray[np.float64] = np.zeros(self._half, dtype=np.float64)
        self._base = -self._half
        self._next = 0  # absolute index of the next output sample
        self._consumed = 0  # input samples fed so far

    @property
    def passthrough(self) -> bool:
        """Whether the rates are equal (samples pass unchanged)."""
        return self.src_rate == self.dst_rate

    def process(self, pcm16: bytes) -> bytes:
        """Feed PCM16 little-endian samples; returns the output samples now complete.

        Raises:
            ValueError: ``pcm16`` has an odd number of bytes.
        """
        if len(pcm16) % 2:
            raise ValueError("PCM16 data must have an even number of bytes")
        samples = np.frombuffer(pcm16, dtype="<i2")
        self._consumed += samples.size
        if self.passthrough:
            return bytes(pcm16)
        return self._run(samples.astype(np.float64))

    def flush(self) -> bytes:
        """The outputs still owed at the end of the stream (the input is padded with silence).

        After ``flush`` the total output is ``round(inputs * dst / src)`` samples.
        """
        if self.passthrough:
            return b""
        owed = round(self._consumed * self.dst_rate / self.src_rate) - self._next
        if owed <= 0:
            return b""
        out = self._run(np.zeros(self._half * 2 + 1, dtype=np.float64))
        return out[: owed * 2]

    def _run(self, samples: npt.NDArray[np.float64]) -> bytes:
        history = np.concatenate([self._history, samples])
        end = self._base + history.size  # absolute index one past the last input
        # Output n needs inputs up to floor(n*src/dst) + half; the last one we can make:
        last_ip = end - 1 - self._half
        if last_ip < 0:
            self._history = history
            return b""
        stop = ((last_ip + 1) * self._up - 1) // self._down + 1  # outputs [next, stop)
        blocks: list[npt.NDArray[np.int16]] = []
        for first in range(self._next, stop, _BLOCK):
            n = np.arange(first, min(first + _BLOCK, stop), dtype=np.int64)
            position = n * self._down
            integer, phase = position // self._up, position % self._up
            index = integer[:, None] + self._offsets[None, :] - self._base
            values = np.einsum("ij,ij->i", history[index], self._table[phase])
            blocks.append(np.clip(np.rint(values), -32768, 32767).astype("<i2"))
        self._next = max(self._next, stop)
        # Keep what the next output still needs (from floor(next*src/dst) - half + 1 on).
        keep_from = (self._next * self._down) // self._up - self._half + 1
        drop = max(0, min(keep_from - self._base, history.size))
        self._history = history[drop:]
        self._base += drop
        return b"".join(block.tobytes() for block in blocks)


def resample_pcm16(pcm16: bytes, src_rate: int, dst_rate: int) -> bytes:
    """Resample a whole PCM16 mono clip (``round(len * dst / src)`` samples out)."""
    resampler = Resampler(src_rate, dst_rate)
    return resampler.process(pcm16) + resampler.flush()
