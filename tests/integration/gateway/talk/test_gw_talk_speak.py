"""``talk.speak`` and ``talk.config`` of the bundled gateway over real loopback WebSockets:
espeak-ng in a subprocess, a fake OpenAI-compatible speech server over real HTTP, and the
reference's ``talk_unconfigured`` answer when there is no speech provider."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.talk.wav import wav_to_pcm16
from openclaw_desktop.protocol.audio import ulaw_decode
from tests.helpers.bundled_gateway import bundled_gateway, raw_operator
from tests.helpers.fake_audio_api import FakeAudioAPI, tone_pcm16
from tests.helpers.speech import need_espeak

pytestmark = pytest.mark.timeout(60)


def talk_json(state: Path, document: dict[str, Any]) -> Path:
    state.mkdir(parents=True, exist_ok=True)
    (state / "talk.json").write_text(json.dumps(document), encoding="utf-8")
    return state


def level(pcm16: bytes) -> float:
    samples = np.frombuffer(pcm16, dtype="<i2").astype(np.float64)
    return float(np.sqrt(np.mean(samples**2)))


async def test_espeak_speaks_a_wav_by_default(tmp_path: Path) -> None:
    """No outputFormat: a WAV from espeak-ng, about a second long for two words, not silent."""
    need_espeak()
    async with bundled_gateway(tmp_path / "s") as gw, raw_operator(gw.url) as op:
        result = await op.ok("talk.speak", {"text": "hello world"}, timeout=30)
        catalog = await op.ok("talk.catalog", {})
    assert set(result) == {
        "audioBase64",
        "provider",
        "outputFormat",
        "voiceCompatible",
        "mimeType",
        "fileExtension",
    }
    assert (result["provider"], result["mimeType"], result["fileExtension"]) == (
        "espeak-ng",
        "audio/wav",
        ".wav",
    )
    pcm, rate = wav_to_pcm16(base64.b64decode(result["audioBase64"], validate=True))
    assert result["outputFormat"] == f"wav_{rate}"
    assert 0.5 < len(pcm) / 2 / rate < 3.0
    assert level(pcm) > 1000
    assert catalog["speech"]["activeProvider"] == "espeak-ng"


@pytest.mark.parametrize(
    ("output_format", "rate", "bytes_per_sample"),
    [("pcm_16000", 16000, 2), ("pcm_24000", 24000, 2), ("ulaw_8000", 8000, 1)],
)
async def test_espeak_respects_raw_output_formats(
    tmp_path: Path, output_format: str, rate: int, bytes_per_sample: int
) -> None:
    """Raw PCM at the asked rate (resampled), or G.711 µ-law at 8 kHz."""
    need_espeak()
    async with bundled_gateway(tmp_path / "s") as gw, raw_operator(gw.url) as op:
        result = await op.ok(
            "talk.speak", {"text": "hello world", "outputFormat": output_format}, timeout=30
        )
        wav = await op.ok("talk.speak", {"text": "hello world"}, timeout=30)
    audio = base64.b64decode(result["audioBase64"])
    assert result["outputFormat"] == output_format
    reference, native = wav_to_pcm16(base64.b64decode(wav["audioBase64"]))
    seconds = len(audio) / bytes_per_sample / rate
    assert seconds == pytest.approx(len(reference) / 2 / native, abs=0.01)
    pcm = ulaw_decode(audio) if bytes_per_sample == 1 else audio
    assert level(pcm) > 1000


async def test_espeak_cannot_make_mp3_and_says_so(tmp_path: Path) -> None:
    """mp3 asked, WAV given: outputFormat and mimeType tell the client what it got."""
    need_espeak()
    async with bundled_gateway(tmp_path / "s") as gw, raw_operator(gw.url) as op:
        result = await op.ok(
            "talk.speak", {"text": "hi", "outputFormat": "mp3_44100_128"}, timeout=30
        )
        error = await op.error("talk.speak", {"text": "hi", "outputFormat": "flac"})
    assert result["mimeType"] == "audio/wav" and result["outputFormat"].startswith("wav_")
    assert error["code"] == "INVALID_REQUEST"
    assert "unknown outputFormat 'flac'" in error["message"]


async def test_openai_compatible_speech(tmp_path: Path) -> None:
    """The request carries model, voice, input, the format and the key; the clip comes back
    as the server sent it (mp3) or converted (pcm_16000 from its 24 kHz pcm)."""
    with FakeAudioAPI() as api:
        state = talk_json(
            tmp_path / "s",
            {
                "speech": {
                    "provider": "openai",
                    "baseUrl": api.base_url,
                    "apiKey": "sk-speech-key",
                    "model": "tts-1",
                    "voice": "nova",
                }
            },
        )
        async with bundled_gateway(state) as gw, raw_operator(gw.url) as op:
            mp3 = await op.ok("talk.speak", {"text": "hello there"})
            pcm = await op.ok(
                "talk.speak", {"text": "again", "outputFormat": "pcm_16000", "voiceId": "echo"}
            )
            config = await op.ok("talk.config", {"includeSecrets": True})
            plain = await op.ok("talk.config", {})
    assert not api.problems
    first, second = api.speech_requests
    assert first == {
        "model": "tts-1",
        "input": "hello there",
        "voice": "nova",
        "response_format": "mp3",
        "__authorization": "Bearer sk-speech-key",
    }
    assert (second["voice"], second["response_format"]) == ("echo", "pcm")
    assert mp3["provider"] == "openai" and mp3["mimeType"] == "audio/mpeg"
    assert base64.b64decode(mp3["audioBase64"]) == b"ID3fake-mp3-bytes"
    assert pcm["outputFormat"] == "pcm_16000"
    assert len(base64.b64decode(pcm["audioBase64"])) == len(tone_pcm16()) * 2 // 3
    talk = config["config"]["talk"]
    assert talk["provider"] == "openai"
    assert talk["resolved"]["config"]["apiKey"] == "sk-speech-key"
    assert "sk-speech-key" not in json.dumps(plain)


async def test_a_failing_speech_server_allows_the_fallback(tmp_path: Path) -> None:
    """HTTP 500: UNAVAILABLE with fallbackEligible, and never the key."""
    with FakeAudioAPI(status=500) as api:
        state = talk_json(
            tmp_path / "s",
            {"speech": {"provider": "openai", "baseUrl": api.base_url, "apiKey": "sk-hidden-key"}},
        )
        async with bundled_gateway(state) as gw, raw_operator(gw.url) as op:
            error = await op.error("talk.speak", {"text": "hello"})
    assert error["code"] == "UNAVAILABLE"
    assert error["details"]["fallbackEligible"] is True
    assert error["details"]["reason"] == "synthesis_failed"
    assert "HTTP 500" in error["message"] and "sk-hidden-key" not in json.dumps(error)


async def test_no_speech_provider_is_talk_unconfigured(tmp_path: Path) -> None:
    """Exactly the reference's answer, and talk.config is {config: {}} as on the reference."""
    state = talk_json(tmp_path / "s", {"speech": {"provider": "none"}})
    async with bundled_gateway(state) as gw, raw_operator(gw.url) as op:
        error = await op.error("talk.speak", {"text": "hello"})
        config = await op.ok("talk.config", {})
        catalog = await op.ok("talk.catalog", {})
    assert {k: error[k] for k in ("code", "message", "details")} == {
        "code": "UNAVAILABLE",
        "message": "talk.speak unavailable: talk provider not configured",
        "details": {"reason": "talk_unconfigured", "fallbackEligible": True},
    }
    assert config == {"config": {}}
    assert catalog["speech"]["ready"] is False


async def test_an_invalid_talk_json_keeps_the_gateway_up(tmp_path: Path) -> None:
    """A typo in talk.json: no talk providers (logged), every other method still works."""
    state = talk_json(tmp_path / "s", {"speech": {"provider": "espeak"}})
    async with bundled_gateway(state) as gw, raw_operator(gw.url) as op:
        error = await op.error("talk.speak", {"text": "hello"})
        await op.ok("health", {})
    assert error["details"]["reason"] == "talk_unconfigured"
