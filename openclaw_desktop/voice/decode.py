"""Spoken replies to PCM16 for playback: raw PCM, WAV (standard library), MP3 and Opus
(FFmpeg's decoders through PyAV). What a ``talk.speak`` result is, is read from its
``outputFormat`` / ``mimeType`` / ``fileExtension``, then from the bytes themselves."""

from __future__ import annotations

import io
import re
import wave
from dataclasses import dataclass

import numpy as np

from openclaw_desktop.errors import OpenClawError

__all__ = ["AudioDecodeError", "Pcm", "decode_audio", "sniff_kind"]

#: Rate of raw ``pcm`` replies that name none (OpenAI's ``pcm`` is 24 kHz PCM16 mono).
DEFAULT_PCM_RATE = 24_000
#: Longest reply decoded (bytes of PCM16 at 48 kHz: about 10 minutes).
MAX_PCM_BYTES = 60 * 1024 * 1024


class AudioDecodeError(OpenClawError):
    """The reply's audio cannot be played (unknown or broken format)."""


@dataclass(frozen=True)
class Pcm:
    """PCM16 mono samples and their rate."""

    samples: bytes
    rate: int

    @property
    def seconds(self) -> float:
        """Duration."""
        return len(self.samples) / 2 / self.rate


def sniff_kind(data: bytes, hint: str = "") -> str:
    """``wav`` / ``mp3`` / ``ogg`` / ``pcm`` from the hint (format, MIME type, extension),
    else from the first bytes."""
    hint = hint.lower()
    for kind, words in (
        ("wav", ("wav", "wave")),
        ("mp3", ("mp3", "mpeg")),
        ("ogg", ("opus", "ogg")),
        ("pcm", ("pcm", "l16", "raw")),
    ):
        if any(word in hint for word in words):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "wav"
    if data[:4] == b"OggS":
        return "ogg"
    if data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0):
        return "mp3"
    return "pcm"


def _rate_in(hint: str) -> int | None:
    match = re.search(r"(8000|16000|22050|24000|44100|48000)", hint)
    return int(match.group(1)) if match else None


def _wav(data: bytes) -> Pcm:
    try:
        with wave.open(io.BytesIO(data)) as reader:
            channels, width, rate = (
                reader.getnchannels(),
                reader.getsampwidth(),
                reader.getframerate(),
            )
            frames = reader.readframes(reader.getnframes())
    except (wave.Error, EOFError) as exc:
        raise AudioDecodeError(f"broken WAV audio: {exc}") from None
    if width != 2:
        raise AudioDecodeError(f"WAV with {8 * width}-bit samples is not supported")
    samples = np.frombuffer(frames, dtype="<i2")
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1).astype("<i2")
    return Pcm(samples.tobytes(), rate)


def _ffmpeg(data: bytes) -> Pcm:
    import av  # a large library: loaded only for compressed replies

    out = bytearray()
    rate = 24_000
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            stream = container.streams.audio[0]
            resampler = av.AudioResampler(format="s16", layout="mono", rate=stream.rate)
            rate = int(stream.rate)
            for frame in container.decode(stream):
                for chunk in resampler.resample(frame):
                    out += bytes(chunk.planes[0])[: chunk.samples * 2]
                if len(out) > MAX_PCM_BYTES:
                    raise AudioDecodeError("the spoken reply is too long to play")
    except (av.error.FFmpegError, IndexError) as exc:
        raise AudioDecodeError(f"cannot decode the spoken reply: {exc}") from None
    return Pcm(bytes(out), rate)


def decode_audio(data: bytes, hint: str = "") -> Pcm:
    """PCM16 mono of a reply (``hint``: its ``outputFormat``, MIME type or extension).

    Raises:
        AudioDecodeError: empty, broken or unsupported audio.
    """
    if not data:
        raise AudioDecodeError("the spoken reply has no audio")
    kind = sniff_kind(data, hint)
    if kind == "wav":
        return _wav(data)
    if kind in ("mp3", "ogg"):
        return _ffmpeg(data)
    if len(data) % 2:
        raise AudioDecodeError("raw PCM16 audio must have an even number of bytes")
    return Pcm(data, _rate_in(hint) or DEFAULT_PCM_RATE)
