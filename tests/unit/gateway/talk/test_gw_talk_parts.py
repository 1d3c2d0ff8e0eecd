"""Unit tests of the talk pieces that need no socket: the endpointer, output formats, WAV,
the talk.event envelope and talk.json."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gateway.talk.config import TalkConfigError, load_talk_settings
from gateway.talk.events import TalkEvents, TalkEventType
from gateway.talk.tts.base import OutputFormat, parse_output_format
from gateway.talk.vad import EnergyEndpointer, threshold_dbfs
from gateway.talk.wav import WavError, pcm16_to_wav, wav_to_pcm16

RATE = 16000


def noise(ms: int, level: float, seed: int = 0) -> bytes:
    samples = np.random.default_rng(seed).normal(0, level, RATE * ms // 1000)
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes()


def test_threshold_maps_vad_threshold_onto_dbfs() -> None:
    """0 -> -70 dBFS, 0.5 (and None) -> -45 dBFS, 1 -> -20 dBFS; out of range clamps."""
    assert threshold_dbfs(0) == -70
    assert threshold_dbfs(None) == threshold_dbfs(0.5) == -45
    assert threshold_dbfs(1) == -20
    assert threshold_dbfs(7) == -20


def test_endpointer_ends_an_utterance_after_the_silence_window() -> None:
    """Speech (about -20 dBFS), then 700 ms of -60 dBFS noise: one end, at the window."""
    vad = EnergyEndpointer(RATE, silence_ms=700, level_dbfs=-45)

    def step(audio: bytes) -> tuple[int, bool]:
        return vad.feed(audio), vad.in_speech

    assert step(noise(300, 30)) == (0, False)
    assert step(noise(500, 3000)) == (0, True)
    assert step(noise(680, 30)) == (0, True)
    assert step(noise(40, 30)) == (1, False)
    assert step(noise(2000, 30)) == (0, False)


def test_endpointer_ignores_clicks_and_counts_two_utterances() -> None:
    """A 40 ms burst is not speech; two phrases with a pause between end twice."""
    vad = EnergyEndpointer(RATE, silence_ms=500, level_dbfs=-45)
    assert vad.feed(noise(40, 3000) + noise(1000, 30)) == 0
    both = noise(400, 3000) + noise(600, 30) + noise(400, 3000, 1) + noise(600, 30, 1)
    assert vad.feed(both) == 2


def test_endpointer_frames_across_odd_chunks() -> None:
    """Chunks that split frames (and samples' bytes) give the same result."""
    audio = noise(500, 3000) + noise(800, 30)
    whole = EnergyEndpointer(RATE, silence_ms=700, level_dbfs=-45).feed(audio)
    vad = EnergyEndpointer(RATE, silence_ms=700, level_dbfs=-45)
    parts = sum(vad.feed(audio[i : i + 333]) for i in range(0, len(audio), 333))
    assert whole == parts == 1


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("pcm_16000", OutputFormat("pcm", 16000)),
        ("pcm", OutputFormat("pcm", 24000)),
        ("PCM_44100", OutputFormat("pcm", 44100)),
        ("wav", OutputFormat("wav", None)),
        ("wav_22050", OutputFormat("wav", 22050)),
        ("ulaw_8000", OutputFormat("ulaw", 8000)),
        ("mp3_44100_128", OutputFormat("mp3", 44100)),
        ("opus_48000_64", OutputFormat("opus", 48000)),
    ],
)
def test_output_formats(value: str | None, expected: OutputFormat | None) -> None:
    """The reference clients' names parse into kind and rate."""
    assert parse_output_format(value) == expected


@pytest.mark.parametrize("value", ["flac", "pcm_12345", "pcm_", "wav_1", "../x"])
def test_bad_output_formats(value: str) -> None:
    """Unknown kinds and rates are refused with a message naming the value."""
    with pytest.raises(ValueError, match="outputFormat"):
        parse_output_format(value)


def test_wav_round_trip_and_refusals() -> None:
    """PCM16 mono through WAV and back; stereo, 8-bit and garbage are WavError."""
    pcm = noise(100, 1000)
    assert wav_to_pcm16(pcm16_to_wav(pcm, RATE)) == (pcm, RATE)
    import io
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as writer:
        writer.setnchannels(2)
        writer.setsampwidth(2)
        writer.setframerate(RATE)
        writer.writeframes(pcm)
    with pytest.raises(WavError, match="2-channel"):
        wav_to_pcm16(out.getvalue())
    with pytest.raises(WavError, match="not a WAV"):
        wav_to_pcm16(b"RIFF nonsense")


def test_event_envelopes_count_from_one() -> None:
    """Envelopes carry the session's fields, seq 1, 2, ... and optional turnId/final."""
    sent: list[dict[str, object]] = []
    events = TalkEvents(
        sent.append,
        session_id="s1",
        mode="transcription",
        transport="gateway-relay",
        brain="none",
        provider="pocketsphinx",
    )
    events.emit(TalkEventType.SESSION_STARTED)
    events.emit(TalkEventType.TRANSCRIPT_DONE, {"text": "hi"}, turn_id="turn-1", final=True)
    first, second = sent
    assert first["seq"] == 1 and second["seq"] == 2 and events.seq == 2
    assert "turnId" not in first and "final" not in first
    assert second["turnId"] == "turn-1" and second["final"] is True
    assert second["payload"] == {"text": "hi"}
    assert {k: first[k] for k in ("sessionId", "mode", "transport", "brain", "provider")} == {
        "sessionId": "s1",
        "mode": "transcription",
        "transport": "gateway-relay",
        "brain": "none",
        "provider": "pocketsphinx",
    }
    assert first["id"] != second["id"]
    assert str(first["timestamp"]).endswith("Z")


def test_talk_json_defaults_and_choices(tmp_path: Path) -> None:
    """No file: pocketsphinx and espeak-ng when present; the file picks OpenAI-compatible
    servers with keys from the environment; "none" turns a side off."""
    settings = load_talk_settings(tmp_path, {"PATH": "/nonexistent"})
    assert settings.transcription.provider == "pocketsphinx"
    assert settings.speech.provider is None
    assert settings.speech.note == "espeak-ng is not installed"
    (tmp_path / "talk.json").write_text(
        json.dumps(
            {
                "transcription": {
                    "provider": "openai",
                    "baseUrl": "http://127.0.0.1:9/v1/",
                    "apiKeyEnv": "STT_KEY",
                },
                "speech": {"provider": "none"},
                "maxSessionAudioBytes": 100000,
            }
        )
    )
    settings = load_talk_settings(tmp_path, {"STT_KEY": "k-1"})
    stt = settings.transcription
    assert (stt.provider, stt.base_url, stt.model) == (
        "openai",
        "http://127.0.0.1:9/v1",
        "whisper-1",
    )
    assert stt.api_key is not None and stt.api_key.known == "k-1"
    assert settings.speech.provider is None
    assert settings.max_session_audio_bytes == 100000


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"speech": {"provider": "espeak"}}, "speech.provider"),
        ({"transcription": {"provider": "openai"}}, "transcription.baseUrl is required"),
        ({"bogus": 1}, "bogus"),
        ({"maxSessionAudioBytes": 10}, "maxSessionAudioBytes"),
        ({"transcription": {"language": "english"}}, "transcription.language"),
    ],
)
def test_invalid_talk_json_says_where(tmp_path: Path, document: object, problem: str) -> None:
    """Every mistake names its place in the file."""
    (tmp_path / "talk.json").write_text(json.dumps(document))
    with pytest.raises(TalkConfigError, match=problem):
        load_talk_settings(tmp_path, {})


def test_talk_json_that_is_not_json(tmp_path: Path) -> None:
    """Broken JSON is a TalkConfigError, not a crash."""
    (tmp_path / "talk.json").write_text("{")
    with pytest.raises(TalkConfigError, match="not valid JSON"):
        load_talk_settings(tmp_path, {})
