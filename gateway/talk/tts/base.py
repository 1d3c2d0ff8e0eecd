"""What a speech provider offers ``talk.speak``, and the output formats.

``outputFormat`` names follow the reference's clients: ``pcm_<rate>`` (raw PCM16 mono
little-endian), ``wav`` / ``wav_<rate>``, ``ulaw_8000`` (G.711 µ-law), ``mp3_<...>`` and
``opus_<...>`` (only where the provider can encode them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.errors import BundledGatewayError

__all__ = [
    "OutputFormat",
    "SpeakRequest",
    "SpeechError",
    "SpeechProvider",
    "SpeechResult",
    "encode_pcm16",
    "parse_output_format",
]

_FORMAT_RE = re.compile(r"^(pcm|wav|ulaw|mp3|opus)(?:_(\d{4,6})(?:_\d+)?)?$")
_RATES = frozenset({8000, 16000, 22050, 24000, 44100, 48000})


class SpeechError(BundledGatewayError):
    """Synthesis failed (the provider's message, without secrets)."""


@dataclass(frozen=True)
class OutputFormat:
    """A parsed ``outputFormat``: container/codec and rate (None: the provider's own)."""

    kind: str
    rate: int | None = None

    @property
    def name(self) -> str:
        """As the result's ``outputFormat`` states it."""
        return self.kind if self.rate is None else f"{self.kind}_{self.rate}"


def parse_output_format(value: str | None) -> OutputFormat | None:
    """``pcm_24000`` -> OutputFormat("pcm", 24000); None for no preference.

    Raises:
        ValueError: an unknown format or an unsupported rate.
    """
    if value is None:
        return None
    match = _FORMAT_RE.match(value.strip().lower())
    if match is None:
        raise ValueError(f"unknown outputFormat {value!r} (pcm_<rate>, wav, ulaw_8000, mp3, opus)")
    kind, rate_text = match.group(1), match.group(2)
    rate = int(rate_text) if rate_text else None
    if kind in ("pcm", "wav", "ulaw") and rate is not None and rate not in _RATES:
        raise ValueError(f"unsupported sample rate {rate} in outputFormat {value!r}")
    if kind == "ulaw":
        rate = 8000
    if kind == "pcm" and rate is None:
        rate = 24000
    return OutputFormat(kind, rate)


@dataclass(frozen=True)
class SpeakRequest:
    """What ``talk.speak`` asked for."""

    text: str
    voice: str | None = None
    model: str | None = None
    output: OutputFormat | None = None
    speed: float | None = None
    rate_wpm: int | None = None
    language: str | None = None


@dataclass(frozen=True)
class SpeechResult:
    """The clip and how to play it."""

    audio: bytes
    provider: str
    output_format: str
    mime_type: str
    file_extension: str
    voice_compatible: bool = False

    def to_wire(self, audio_base64: str) -> dict[str, Any]:
        """The ``talk.speak`` result."""
        return {
            "audioBase64": audio_base64,
            "provider": self.provider,
            "outputFormat": self.output_format,
            "voiceCompatible": self.voice_compatible,
            "mimeType": self.mime_type,
            "fileExtension": self.file_extension,
        }


def encode_pcm16(pcm16: bytes, rate: int, wanted: OutputFormat, provider: str) -> SpeechResult:
    """PCM16 at ``rate`` as the wanted pcm/wav/ulaw format (resampled when needed)."""
    from gateway.talk.wav import pcm16_to_wav
    from openclaw_desktop.protocol.audio import resample_pcm16, ulaw_encode

    target = wanted.rate or rate
    samples = resample_pcm16(pcm16, rate, target) if target != rate else pcm16
    if wanted.kind == "pcm":
        return SpeechResult(samples, provider, f"pcm_{target}", "audio/pcm", ".pcm")
    if wanted.kind == "ulaw":
        return SpeechResult(ulaw_encode(samples), provider, "ulaw_8000", "audio/basic", ".ulaw")
    return SpeechResult(
        pcm16_to_wav(samples, target), provider, f"wav_{target}", "audio/wav", ".wav"
    )


class SpeechProvider(Protocol):
    """A text-to-speech provider (async; blocking work goes to a thread or subprocess)."""

    id: str
    label: str
    voices: list[str]
    models: list[str]

    async def speak(self, request: SpeakRequest) -> SpeechResult:
        """Synthesize ``request.text``; raises SpeechError."""
        ...
