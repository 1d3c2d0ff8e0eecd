"""Spoken replies decode to PCM16 mono: WAV, raw PCM (rate from the hint), MP3 and Opus
(encoded here with FFmpeg through PyAV); broken input is a typed error."""

from __future__ import annotations

import io
import wave

import av
import numpy as np
import pytest

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.voice.decode import AudioDecodeError, decode_audio, sniff_kind

RATE = 24_000


def tone(seconds: float = 0.5, rate: int = RATE, channels: int = 1) -> np.ndarray:  # type: ignore[type-arg]
    """A 440 Hz tone, int16."""
    t = np.arange(int(rate * seconds)) / rate
    mono = (8000 * np.sin(2 * np.pi * 440 * t)).astype("<i2")
    return np.repeat(mono[:, None], channels, axis=1) if channels > 1 else mono


def wav_bytes(samples: np.ndarray, rate: int = RATE, channels: int = 1) -> bytes:  # type: ignore[type-arg]
    """A WAV file of ``samples``."""
    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(channels)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.astype("<i2").tobytes())
    return out.getvalue()


def encoded(codec: str, container: str, rate: int) -> bytes:
    """The tone encoded by FFmpeg (``mp3`` in mp3, ``libopus`` in ogg)."""
    out = io.BytesIO()
    with av.open(out, mode="w", format=container) as box:
        stream = box.add_stream(codec, rate=rate)
        stream.layout = "mono"  # type: ignore[union-attr]
        samples = tone(1.0, rate)
        frame = av.AudioFrame.from_ndarray(samples[None, :], format="s16", layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):  # type: ignore[union-attr]
            box.mux(packet)
        for packet in stream.encode(None):  # type: ignore[union-attr]
            box.mux(packet)
    return out.getvalue()


def test_wav_mono_and_stereo() -> None:
    """Stereo is mixed down; the rate is the file's."""
    pcm = decode_audio(wav_bytes(tone(0.5, 22_050), 22_050))
    assert pcm.rate == 22_050 and abs(pcm.seconds - 0.5) < 0.01
    stereo = decode_audio(wav_bytes(tone(0.5, channels=2), channels=2))
    assert stereo.rate == RATE and len(stereo.samples) == 2 * int(RATE * 0.5)


def test_raw_pcm_takes_the_rate_from_the_hint() -> None:
    """``pcm_16000`` says 16 kHz; plain ``pcm`` is 24 kHz like OpenAI's."""
    raw = tone(0.25, 16_000).tobytes()
    assert decode_audio(raw, "pcm_16000 audio/L16").rate == 16_000
    assert decode_audio(raw, "pcm").rate == RATE


@pytest.mark.parametrize(
    ("codec", "container", "hint"), [("mp3", "mp3", "mp3"), ("libopus", "ogg", "opus")]
)
def test_compressed_replies_decode(codec: str, container: str, hint: str) -> None:
    """MP3 and Opus come out as about one second of the tone, by hint and by sniffing."""
    rate = 48_000 if codec == "libopus" else 24_000
    data = encoded(codec, container, rate)
    for given in (hint, ""):
        pcm = decode_audio(data, given)
        assert 0.9 < pcm.seconds < 1.2, (codec, given, pcm.seconds)
        level = np.abs(np.frombuffer(pcm.samples, dtype="<i2")).mean()
        assert level > 2000, "the tone, not silence"


def test_sniffing() -> None:
    """Magic bytes decide when no hint is given."""
    assert sniff_kind(wav_bytes(tone(0.01))) == "wav"
    assert sniff_kind(b"OggS\0\0") == "ogg"
    assert sniff_kind(b"ID3\x04") == "mp3"
    assert sniff_kind(b"\x01\x02\x03\x04") == "pcm"
    assert sniff_kind(b"", "audio/mpeg") == "mp3"


@pytest.mark.parametrize(
    ("data", "hint", "message"),
    [
        (b"", "", "no audio"),
        (b"RIFF\0\0\0\0WAVEjunk", "", "broken WAV"),
        (b"\x01\x02\x03", "pcm", "even number of bytes"),
        (b"OggS" + bytes(100), "", "cannot decode"),
    ],
)
def test_bad_audio_is_a_typed_error(data: bytes, hint: str, message: str) -> None:
    """Never a crash: AudioDecodeError (an OpenClawError) saying what is wrong."""
    with pytest.raises(AudioDecodeError, match=message) as caught:
        decode_audio(data, hint)
    assert isinstance(caught.value, OpenClawError)
