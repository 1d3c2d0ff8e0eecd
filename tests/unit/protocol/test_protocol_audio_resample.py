"""The streaming resampler: lengths, tones keep their frequency and level, no aliasing
when the rate goes down, chunked equals whole, and the wire formats round-trip."""

from __future__ import annotations

import numpy as np
import pytest

from openclaw_desktop.protocol.audio import (
    AUDIO_FORMATS,
    AudioEncoding,
    Resampler,
    decode_to_pcm16,
    encode_from_pcm16,
    resample_pcm16,
)

RATES = [(24000, 16000), (8000, 16000), (16000, 24000), (16000, 8000), (22050, 24000)]


def tone(freq: float, rate: int, seconds: float = 0.5, level: float = 10000.0) -> bytes:
    """A sine tone as PCM16."""
    t = np.arange(int(rate * seconds)) / rate
    return (level * np.sin(2 * np.pi * freq * t)).astype("<i2").tobytes()


def samples(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float64)


def peak_frequency(pcm: bytes, rate: int) -> float:
    x = samples(pcm)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size)))
    return float(np.fft.rfftfreq(x.size, 1 / rate)[int(np.argmax(spectrum))])


def rms(pcm: bytes, trim: int = 200) -> float:
    x = samples(pcm)[trim:-trim]
    return float(np.sqrt(np.mean(x**2)))


@pytest.mark.parametrize(("src", "dst"), RATES)
def test_length_is_the_rate_ratio(src: int, dst: int) -> None:
    """round(n * dst / src) samples come out of n."""
    for n in (0, 1, 7, 480, 12345):
        out = resample_pcm16(b"\x01\x00" * n, src, dst)
        assert len(out) // 2 == round(n * dst / src)


@pytest.mark.parametrize(("src", "dst"), RATES)
def test_a_tone_keeps_its_frequency_and_level(src: int, dst: int) -> None:
    """A 440 Hz tone is still 440 Hz (within one FFT bin) and within 1 % of its RMS."""
    pcm = tone(440, src)
    out = resample_pcm16(pcm, src, dst)
    assert abs(peak_frequency(out, dst) - 440) <= dst / (len(out) // 2)
    assert rms(out) == pytest.approx(rms(pcm), rel=0.01)


def test_a_constant_passes_unchanged() -> None:
    """DC gain is exactly one (each phase's weights sum to one)."""
    out = samples(resample_pcm16(np.full(4800, 1234, "<i2").tobytes(), 24000, 16000))
    assert np.all(out[40:-40] == 1234)


def test_going_down_filters_what_the_new_rate_cannot_carry() -> None:
    """A 10 kHz tone at 24 kHz would alias to 6 kHz at 16 kHz; it is attenuated 40 dB+."""
    out = resample_pcm16(tone(10000, 24000), 24000, 16000)
    assert rms(out) < rms(tone(10000, 24000)) / 100


@pytest.mark.parametrize(("src", "dst"), RATES)
def test_chunked_equals_whole(src: int, dst: int) -> None:
    """20 ms chunks (and odd-sized ones) give exactly the samples of one call."""
    pcm = tone(300, src, 0.3)
    whole = resample_pcm16(pcm, src, dst)
    for chunk in (src // 50 * 2, 2, 334):
        resampler = Resampler(src, dst)
        parts = [resampler.process(pcm[i : i + chunk]) for i in range(0, len(pcm), chunk)]
        assert b"".join(parts) + resampler.flush() == whole


def test_equal_rates_pass_through() -> None:
    """Same rate: the bytes come back as they went in."""
    pcm = tone(300, 16000, 0.1)
    assert resample_pcm16(pcm, 16000, 16000) == pcm


@pytest.mark.parametrize(
    ("args", "message"),
    [((0, 16000), "positive"), ((16000, -1), "positive"), ((9973, 7919), "too fine")],
)
def test_bad_rates_are_refused(args: tuple[int, int], message: str) -> None:
    """Zero, negative and absurdly fine ratios raise a clear ValueError."""
    with pytest.raises(ValueError, match=message):
        Resampler(*args)


def test_odd_bytes_are_refused() -> None:
    """Half a sample is an error."""
    with pytest.raises(ValueError, match="even"):
        Resampler(24000, 16000).process(b"\x00")


def test_wire_formats_declare_the_reference_rates() -> None:
    """pcm16 at 24 kHz and g711_ulaw at 8 kHz, mono, as talk.catalog lists them."""
    assert AUDIO_FORMATS[AudioEncoding.PCM16].to_wire() == {
        "encoding": "pcm16",
        "sampleRateHz": 24000,
        "channels": 1,
    }
    assert AUDIO_FORMATS[AudioEncoding.G711_ULAW].to_wire() == {
        "encoding": "g711_ulaw",
        "sampleRateHz": 8000,
        "channels": 1,
    }
    assert AUDIO_FORMATS[AudioEncoding.G711_ULAW].bytes_per_ms() == 8


def test_g711_wire_round_trip_keeps_a_tone() -> None:
    """A tone through µ-law and back stays within the companding error (SNR > 30 dB)."""
    pcm = tone(440, 8000)
    back = decode_to_pcm16(AudioEncoding.G711_ULAW, encode_from_pcm16(AudioEncoding.G711_ULAW, pcm))
    error = samples(back) - samples(pcm)
    snr = 10 * np.log10(np.mean(samples(pcm) ** 2) / np.mean(error**2))
    assert snr > 30
    assert decode_to_pcm16(AudioEncoding.PCM16, pcm) == pcm
