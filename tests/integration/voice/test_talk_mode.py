"""Talk mode end to end, and playback, with real audio devices: espeak-ng speech is played
into a real ALSA capture device; what the app plays goes through PortAudio to an ALSA
device that writes it to a file. The gateway is ours (its recognizer: an
OpenAI-compatible server over real HTTP; its speech: espeak-ng); the model is the fake."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_desktop.devices.playback import play_pcm16
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice import AudioContract, open_microphone
from openclaw_desktop.voice.speech import speak_reply
from openclaw_desktop.voice.talk_mode import TalkMode, TalkPhase
from tests.helpers.alsa_mic import AlsaTestMic
from tests.helpers.bundled_gateway import TOKEN, bundled_gateway
from tests.helpers.fake_audio_api import FakeAudioAPI, Upload
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.speech import espeak_pcm16
from tests.integration.gateway.talk.test_gw_talk_sessions import write_talk_json

pytestmark = pytest.mark.timeout(120)

SCOPES = ("operator.read", "operator.write", "operator.talk")


@pytest.fixture
def speaker(tmp_path: Path) -> Iterator[tuple[AlsaTestMic, Path]]:
    """The test microphone, whose ALSA device also writes playback to a file."""
    out = tmp_path / "speaker.raw"
    out.touch()
    with AlsaTestMic(tmp_path, sample_rate=24_000, speaker_file=out) as mic:
        yield mic, out


def level(raw: bytes) -> float:
    """Mean absolute sample value."""
    return (
        float(np.abs(np.frombuffer(raw[: len(raw) // 2 * 2], dtype="<i2")).mean()) if raw else 0.0
    )


async def test_playback_writes_the_samples_and_stops_when_asked(
    speaker: tuple[AlsaTestMic, Path],
) -> None:
    """A short clip reaches the device whole; a long one stops within a block of Stop."""
    _mic, out = speaker
    clip = (8000 * np.sin(2 * np.pi * 440 * np.arange(12_000) / 24_000)).astype("<i2").tobytes()
    assert await play_pcm16(clip, 24_000, threading.Event()) is True
    written = out.read_bytes()
    assert len(written) >= len(clip) and level(written) > 4000
    stop = threading.Event()
    long_clip = clip * 20  # 10 s
    loop = asyncio.get_running_loop()
    loop.call_later(0.4, stop.set)
    started = loop.time()
    assert await play_pcm16(long_clip, 24_000, stop) is False
    assert loop.time() - started < 2.0


def connect(url: str) -> OpenClaw:
    """An SDK client allowed to talk."""
    return OpenClaw.connect(url, token=TOKEN, identity="ephemeral", scopes=SCOPES)


def make_state(tmp_path: Path, api: FakeAudioAPI, llm: FakeLLM, speech: str) -> Path:
    """Gateway state: the fake model, the fake recognizer, and ``speech`` as TTS."""
    from tests.helpers.chat_trace import write_fake_providers

    state = tmp_path / "state"
    write_fake_providers(state, llm.port)
    write_talk_json(
        state,
        {
            "transcription": {"provider": "openai", "baseUrl": api.base_url},
            "speech": {"provider": speech},
            "silenceDurationMs": 600,
        },
    )
    return state


async def talk(
    url: str, mic: AlsaTestMic, clip: np.ndarray[Any, Any], phases: list[TalkPhase]
) -> TalkMode:
    """Run talk mode for one spoken question, until the reply was spoken."""
    async with connect(url) as client:
        mode = TalkMode(
            client,
            "main",
            lambda rate: open_microphone(None, rate),
            on_phase=phases.append,
            audio=AudioContract("pcm16", 24_000),
        )
        running = asyncio.ensure_future(mode.run())
        async with asyncio.timeout(20):
            while TalkPhase.LISTENING not in phases:
                await asyncio.sleep(0.05)
        mic.play(clip)
        async with asyncio.timeout(60):
            while not (mode.turns and mode.turns[0].spoken_by):
                await asyncio.sleep(0.05)
            while mode.phase is not TalkPhase.LISTENING:
                await asyncio.sleep(0.05)
        mode.stop()
        await asyncio.wait_for(running, 20)
        return mode


async def test_talk_mode_listens_thinks_speaks_and_listens_again(
    tmp_path: Path, speaker: tuple[AlsaTestMic, Path]
) -> None:
    """One spoken turn: the recognized question goes to the chat, the reply comes back as
    the gateway's speech, is played (the speaker file gets it), and listening resumes."""
    mic, out = speaker
    phases: list[TalkPhase] = []
    question = np.frombuffer(espeak_pcm16("what time is it", 24_000), dtype="<i2")

    def answer(upload: Upload) -> str:
        return "what time is it"

    with FakeAudioAPI(transcript=answer) as api, FakeLLM() as llm:
        async with bundled_gateway(make_state(tmp_path, api, llm, "espeak-ng")) as gw:
            mode = await talk(gw.url, mic, question, phases)
    (turn, *_rest) = mode.turns
    assert turn.heard == "what time is it"
    assert turn.reply.startswith("FAKE-LLM reply") and turn.status == "completed"
    assert turn.spoken_by == "espeak-ng" and not turn.interrupted and not turn.errors
    assert phases[:4] == [
        TalkPhase.LISTENING,
        TalkPhase.THINKING,
        TalkPhase.SPEAKING,
        TalkPhase.LISTENING,
    ]
    assert phases[-1] is TalkPhase.STOPPED
    assert level(out.read_bytes()) > 300, "the reply was played"


async def test_without_gateway_speech_the_reply_is_spoken_locally(tmp_path: Path) -> None:
    """The gateway answers talk_unconfigured: this computer's espeak-ng speaks instead."""
    with FakeAudioAPI() as api, FakeLLM() as llm:
        state = make_state(tmp_path, api, llm, "none")
        async with bundled_gateway(state) as gw, connect(gw.url) as client:
            speech = await speak_reply(client, "the answer is forty two")
    assert speech.provider == "espeak-ng (local)"
    assert speech.pcm.seconds > 0.5 and level(speech.pcm.samples) > 300
