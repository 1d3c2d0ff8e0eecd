"""WAV (RIFF, PCM16 mono) in and out, with the standard library's ``wave`` module."""

from __future__ import annotations

import io
import wave

from gateway.errors import BundledGatewayError

__all__ = ["WavError", "pcm16_to_wav", "wav_to_pcm16"]


class WavError(BundledGatewayError, ValueError):
    """The bytes are not a PCM16 mono WAV file."""


def pcm16_to_wav(pcm16: bytes, sample_rate: int) -> bytes:
    """PCM16 little-endian mono samples as a WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(sample_rate)
        writer.writeframes(pcm16)
    return out.getvalue()


def wav_to_pcm16(data: bytes) -> tuple[bytes, int]:
    """The samples and rate of a PCM16 mono WAV file.

    espeak-ng writes a placeholder length into the header when it writes to a pipe; the
    frames are then read up to the end of the data (``wave`` trusts the header, so a
    length that is too large is clamped to what is there).

    Raises:
        WavError: not RIFF/WAVE, not 16-bit, or not mono.
    """
    try:
        with wave.open(io.BytesIO(data), "rb") as reader:
            if reader.getsampwidth() != 2 or reader.getnchannels() != 1:
                raise WavError(
                    f"expected 16-bit mono, got {8 * reader.getsampwidth()}-bit "
                    f"{reader.getnchannels()}-channel audio"
                )
            rate = reader.getframerate()
            frames = reader.readframes(len(data))
    except (wave.Error, EOFError) as exc:
        raise WavError(f"not a WAV file: {exc}") from None
    return frames[: len(frames) // 2 * 2], rate
