"""G.711 µ-law (ITU-T G.711, the North American / Japanese companding law), vectorized.

Linear samples are 16-bit (PCM16); G.711 itself works on 14-bit magnitudes, so every
16-bit value here is the 14-bit one times four: decoded values lie in ±32124, and the
encoder's decision thresholds are four times the standard's.

The encoder adds the bias 132 (33 in 14-bit) to the magnitude, finds the segment from the
highest set bit, keeps the four bits below it as the interval, and inverts every bit of
``sign | segment | interval`` (µ-law sends all bits inverted, so silence is ``0xFF``).
The decoder is a 256-entry table built the same way backwards.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["ULAW_BIAS", "ULAW_CLIP", "ULAW_DECODE_TABLE", "ulaw_decode", "ulaw_encode"]

#: Bias added to the 16-bit magnitude before the segment search (33 in 14-bit units).
ULAW_BIAS = 0x84
#: Largest magnitude that still encodes (above it, the top code is used).
ULAW_CLIP = 32635


def _decode_table() -> npt.NDArray[np.int16]:
    codes = np.arange(256, dtype=np.int32)
    inverted = ~codes & 0xFF
    segment = (inverted >> 4) & 0x07
    interval = inverted & 0x0F
    magnitude = (((interval << 3) + ULAW_BIAS) << segment) - ULAW_BIAS
    signed = np.where(inverted & 0x80, -magnitude, magnitude)
    return signed.astype(np.int16)


#: ``ULAW_DECODE_TABLE[code]`` is the PCM16 value of a µ-law code.
ULAW_DECODE_TABLE: npt.NDArray[np.int16] = _decode_table()
ULAW_DECODE_TABLE.setflags(write=False)


def ulaw_encode(pcm16: bytes) -> bytes:
    """PCM16 little-endian samples to µ-law codes (one byte per sample).

    Raises:
        ValueError: ``pcm16`` has an odd number of bytes.
    """
    if len(pcm16) % 2:
        raise ValueError("PCM16 data must have an even number of bytes")
    samples = np.frombuffer(pcm16, dtype="<i2").astype(np.int32)
    sign = np.where(samples < 0, 0x80, 0x00)
    magnitude = np.minimum(np.abs(samples), ULAW_CLIP) + ULAW_BIAS
    # magnitude >> 7 is 1..255: its highest set bit (0..7) is the segment.
    segment = np.floor(np.log2(magnitude >> 7)).astype(np.int32)
    interval = (magnitude >> (segment + 3)) & 0x0F
    codes: npt.NDArray[np.int32] = ~(sign | (segment << 4) | interval) & 0xFF
    return codes.astype(np.uint8).tobytes()


def ulaw_decode(ulaw: bytes) -> bytes:
    """µ-law codes to PCM16 little-endian samples (two bytes per code)."""
    codes = np.frombuffer(ulaw, dtype=np.uint8)
    decoded: npt.NDArray[np.int16] = ULAW_DECODE_TABLE[codes]
    return decoded.astype("<i2").tobytes()
