"""The talk audio encodings of the wire and their declared rates (``pcm16`` at 24 kHz for
relay sessions, ``g711_ulaw`` at 8 kHz for telephony-style ones), mono."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["AUDIO_FORMATS", "AudioEncoding", "AudioFormat", "decode_to_pcm16", "encode_from_pcm16"]


class AudioEncoding(StrEnum):
    """``encoding`` of an audio format in ``talk.catalog`` and audio contracts."""

    PCM16 = "pcm16"
    G711_ULAW = "g711_ulaw"


@dataclass(frozen=True)
class AudioFormat:
    """One wire audio format: encoding, rate and channels (always mono here)."""

    encoding: AudioEncoding
    sample_rate_hz: int
    channels: int = 1

    @property
    def bytes_per_sample(self) -> int:
        """Bytes of one (mono) sample on the wire."""
        return 2 if self.encoding is AudioEncoding.PCM16 else 1

    def bytes_per_ms(self) -> float:
        """Wire bytes per millisecond of audio."""
        return self.sample_rate_hz * self.bytes_per_sample * self.channels / 1000

    def to_wire(self) -> dict[str, Any]:
        """``{encoding, sampleRateHz, channels}`` as ``talk.catalog`` lists it."""
        return {
            "encoding": self.encoding.value,
            "sampleRateHz": self.sample_rate_hz,
            "channels": self.channels,
        }


#: The declared format of each encoding.
AUDIO_FORMATS: dict[AudioEncoding, AudioFormat] = {
    AudioEncoding.G711_ULAW: AudioFormat(AudioEncoding.G711_ULAW, 8000),
    AudioEncoding.PCM16: AudioFormat(AudioEncoding.PCM16, 24000),
}


def decode_to_pcm16(encoding: AudioEncoding, data: bytes) -> bytes:
    """Wire audio of ``encoding`` as PCM16 little-endian at the same rate.

    Raises:
        ValueError: PCM16 data with an odd number of bytes.
    """
    if encoding is AudioEncoding.G711_ULAW:
        from openclaw_desktop.protocol.audio.g711 import ulaw_decode  # numpy, on first use

        return ulaw_decode(data)
    if len(data) % 2:
        raise ValueError("PCM16 data must have an even number of bytes")
    return bytes(data)


def encode_from_pcm16(encoding: AudioEncoding, pcm16: bytes) -> bytes:
    """PCM16 little-endian samples as wire audio of ``encoding`` (same rate)."""
    if encoding is AudioEncoding.G711_ULAW:
        from openclaw_desktop.protocol.audio.g711 import ulaw_encode  # numpy, on first use

        return ulaw_encode(pcm16)
    if len(pcm16) % 2:
        raise ValueError("PCM16 data must have an even number of bytes")
    return bytes(pcm16)
