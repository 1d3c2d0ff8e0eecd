"""talk.ptt.* through a real InvokeDispatcher on a real ALSA capture device.

The microphone path is real (ALSA file plugin -> PortAudio -> sounddevice -> our capture);
the transcriber is a stand-in for speech to text that checks it received the captured
audio (dominant frequency, length, rate) and answers with fixed text.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openclaw_desktop.config.settings import NodeSettings
from openclaw_desktop.devices import audio
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.talk import PttLimits, talk_area
from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.node.results import InvokeResult
from tests.helpers.alsa_mic import PCM_NAME, AlsaTestMic, no_input_config, silence, tone


@dataclass
class Heard:
    """One call of the stand-in transcriber: what the audio was."""

    seconds: float
    dominant_hz: float
    rate: int


@dataclass
class Node:
    """A dispatcher over the talk area with switchable settings and a recording transcriber."""

    settings: NodeSettings = field(
        default_factory=lambda: NodeSettings(microphone=True, microphone_device=PCM_NAME)
    )
    heard: list[Heard] = field(default_factory=list)
    events: list[tuple[str, str, bool]] = field(default_factory=list)
    reply: str = "turn on the lights"
    ctx: NodeContext = field(init=False)
    dispatcher: InvokeDispatcher = field(init=False)

    def build(self, limits: PttLimits | None = None, transcriber: Any = "default") -> Node:
        self.ctx = NodeContext(
            settings=lambda: self.settings,
            transcriber=self.transcribe if transcriber == "default" else transcriber,
        )
        self.ctx.activity.listeners.append(lambda *event: self.events.append(event))
        area = talk_area(self.ctx, limits=limits)
        self.dispatcher = InvokeDispatcher(
            CommandRegistry(area.specs), area.handlers, lambda: self.settings.toggles()
        )
        return self

    async def transcribe(self, pcm: bytes, rate: int) -> str:
        samples = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
        spectrum = np.abs(np.fft.rfft(samples))
        self.heard.append(
            Heard(samples.size / rate, float(np.argmax(spectrum)) * rate / samples.size, rate)
        )
        return self.reply

    async def call(self, command: str, params: Any = None) -> InvokeResult:
        return await asyncio.wait_for(self.dispatcher.dispatch(command, params), 30)

    def mic_in_use(self) -> bool:
        return "microphone" in self.ctx.activity.active


async def _until(predicate: Any, timeout: float) -> float:
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            pytest.fail("condition not reached in time")
        await asyncio.sleep(0.02)
    return time.monotonic() - started


@pytest.fixture
def mic(tmp_path: Path) -> Iterator[AlsaTestMic]:
    with AlsaTestMic(tmp_path, idle="tone") as test_mic:
        yield test_mic
    assert audio.streams_open() == 0


async def test_start_stop_transcribes_the_captured_audio(mic: AlsaTestMic) -> None:
    """start records, stop hands ~1 s of the real 440 Hz PCM at 16 kHz to speech to text;
    the capture indicator is on from start to stop."""
    node = Node().build()
    started = await node.call("talk.ptt.start", {})
    assert started.ok, started
    capture_id = started.payload["captureId"]
    assert started.payload == {"captureId": capture_id, "status": "recording"}
    assert len(capture_id) == 32
    assert int(capture_id, 16) >= 0
    assert node.mic_in_use()
    await asyncio.sleep(1.0)
    stopped = await node.call("talk.ptt.stop", {"captureId": capture_id})
    assert stopped.ok, stopped
    assert stopped.payload["transcript"] == "turn on the lights"
    assert stopped.payload["status"] == "transcribed"
    assert stopped.payload["captureId"] == capture_id
    assert 900 <= stopped.payload["durationMs"] <= 1500
    [heard] = node.heard
    assert heard.rate == 16_000
    assert heard.dominant_hz == pytest.approx(440, abs=3)
    assert heard.seconds == pytest.approx(stopped.payload["durationMs"] / 1000, abs=0.02)
    assert node.events == [
        ("microphone", "talk.ptt.start", True),
        ("microphone", "talk.ptt.start", False),
    ]
    assert not node.mic_in_use()
    again = await node.call("talk.ptt.stop", {"captureId": capture_id})
    assert again.error_code == "INVALID_REQUEST"
    assert again.error_message == (
        f"INVALID_REQUEST: unknown captureId {capture_id} (not running or already ended)"
    )


async def test_stop_without_speech_to_text_discards_with_the_reason(mic: AlsaTestMic) -> None:
    """No transcriber: the recording is closed and discarded, the error says why."""
    node = Node().build(transcriber=None)
    started = await node.call("talk.ptt.start", {"captureId": "ptt-1"})
    assert started.payload == {"captureId": "ptt-1", "status": "recording"}
    await asyncio.sleep(0.2)
    stopped = await node.call("talk.ptt.stop", {"captureId": "ptt-1"})
    assert stopped.ok is False
    assert stopped.error_code == "UNAVAILABLE"
    assert stopped.error_message == (
        "UNAVAILABLE: no speech-to-text on this node: run it from the desktop app, which "
        "transcribes through its gateway session; the recording was discarded"
    )
    assert not node.mic_in_use()


async def test_cancel_discards_without_transcribing(mic: AlsaTestMic) -> None:
    """cancel closes the microphone, nothing is transcribed, the id is gone afterwards."""
    node = Node().build()
    await node.call("talk.ptt.start", {"captureId": "c1"})
    await asyncio.sleep(0.2)
    cancelled = await node.call("talk.ptt.cancel", {"captureId": "c1"})
    assert cancelled.payload == {"captureId": "c1", "status": "cancelled"}
    assert node.heard == []
    assert not node.mic_in_use()
    assert (await node.call("talk.ptt.cancel", {"captureId": "c1"})).error_code == (
        "INVALID_REQUEST"
    )


async def test_silence_gives_status_empty(mic: AlsaTestMic) -> None:
    """Nothing but silence: status empty, no transcript, speech to text not asked."""
    mic.idle = "silence"
    node = Node().build()
    await node.call("talk.ptt.start", {"captureId": "quiet"})
    await asyncio.sleep(0.5)
    stopped = await node.call("talk.ptt.stop", {"captureId": "quiet"})
    assert stopped.ok, stopped
    assert stopped.payload["status"] == "empty"
    assert "transcript" not in stopped.payload
    assert node.heard == []


async def test_second_start_is_refused_with_the_running_id(mic: AlsaTestMic) -> None:
    """One capture at a time: a second start names the running capture; after stop a new
    one can start."""
    node = Node().build()
    await node.call("talk.ptt.start", {"captureId": "first"})
    second = await node.call("talk.ptt.start", {"captureId": "second"})
    assert second.error_code == "INVALID_REQUEST"
    assert second.error_message == (
        "INVALID_REQUEST: a push-to-talk capture is already running (captureId first); "
        "stop or cancel it first"
    )
    once = await node.call("talk.ptt.once", {})
    assert once.error_code == "INVALID_REQUEST"
    assert (await node.call("talk.ptt.cancel", {"captureId": "first"})).ok
    third = await node.call("talk.ptt.start", {"captureId": "third"})
    assert third.ok
    assert (await node.call("talk.ptt.cancel", {"captureId": "third"})).ok


async def test_once_ends_on_silence_after_speech(mic: AlsaTestMic) -> None:
    """once: 0.3 s silence, 0.8 s tone, then silence: it returns ~silenceMs after the
    tone ends with the transcript of that audio."""
    mic.idle = "silence"
    mic.play(silence(0.3), tone(440, 0.8))
    node = Node().build()
    started = time.monotonic()
    result = await node.call("talk.ptt.once", {"silenceMs": 400, "maxDurationMs": 8000})
    elapsed = time.monotonic() - started
    assert result.ok, result
    assert result.payload["status"] == "transcribed"
    assert result.payload["transcript"] == "turn on the lights"
    assert "limitReached" not in result.payload
    assert 1300 <= result.payload["durationMs"] <= 1800
    assert 1.0 < elapsed < 3.0
    [heard] = node.heard
    assert heard.dominant_hz == pytest.approx(440, abs=3)
    assert node.events == [
        ("microphone", "talk.ptt.once", True),
        ("microphone", "talk.ptt.once", False),
    ]


async def test_once_with_only_silence_stops_at_max_duration_empty(mic: AlsaTestMic) -> None:
    """No speech: once records until maxDurationMs and reports empty."""
    mic.idle = "silence"
    node = Node().build()
    result = await node.call("talk.ptt.once", {"maxDurationMs": 800})
    assert result.ok, result
    assert result.payload["status"] == "empty"
    assert result.payload["durationMs"] == 800
    assert result.payload["limitReached"] is True
    assert node.heard == []


async def test_once_clamps_max_duration_to_half_a_second(mic: AlsaTestMic) -> None:
    """maxDurationMs below 500 is raised to 500 (the continuous tone never goes silent)."""
    node = Node().build()
    result = await node.call("talk.ptt.once", {"maxDurationMs": 100, "silenceMs": 300})
    assert result.ok, result
    assert result.payload["durationMs"] == 500
    assert result.payload["status"] == "transcribed"


async def test_cancelling_once_releases_the_microphone(mic: AlsaTestMic) -> None:
    """The session cancels the invoke task (node.invoke.cancel): the stream is closed, the
    indicator released, CancelledError propagates, and the microphone is free again."""
    node = Node().build()
    task = asyncio.create_task(node.call("talk.ptt.once", {"maxDurationMs": 30000}))
    await _until(node.mic_in_use, 5)
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not node.mic_in_use()
    assert audio.streams_open() == 0
    assert node.heard == []
    again = await node.call("talk.ptt.start", {"captureId": "after"})
    assert again.ok
    assert (await node.call("talk.ptt.cancel", {"captureId": "after"})).ok


async def test_a_forgotten_capture_stops_itself_at_the_hard_cap(mic: AlsaTestMic) -> None:
    """With a 0.5 s cap the capture closes the microphone by itself; stop later returns
    the first 0.5 s and says the limit was reached."""
    node = Node().build(PttLimits(max_capture_s=0.5))
    await node.call("talk.ptt.start", {"captureId": "forgotten"})
    assert node.mic_in_use()
    released_after = await _until(lambda: not node.mic_in_use(), 5)
    assert released_after < 2.0
    assert audio.streams_open() == 0
    stopped = await node.call("talk.ptt.stop", {"captureId": "forgotten"})
    assert stopped.ok, stopped
    assert stopped.payload["durationMs"] == 500
    assert stopped.payload["limitReached"] is True
    assert node.heard[0].seconds == pytest.approx(0.5)


async def test_a_device_that_stops_ends_the_capture_with_a_clear_error(
    mic: AlsaTestMic,
) -> None:
    """The microphone goes quiet mid-capture (frozen or unplugged): the capture ends by
    itself, and stop returns UNAVAILABLE saying so, in bounded time."""
    node = Node().build(PttLimits(stall_timeout_s=0.5))
    await node.call("talk.ptt.start", {"captureId": "unplug"})
    await asyncio.sleep(0.2)
    mic.stall()
    await _until(lambda: not node.mic_in_use(), 10)
    started = time.monotonic()
    stopped = await node.call("talk.ptt.stop", {"captureId": "unplug"})
    assert time.monotonic() - started < 1.0
    assert stopped.error_code == "UNAVAILABLE"
    assert stopped.error_message == (
        f"UNAVAILABLE: the microphone stopped: no audio from {PCM_NAME!r} for 0.5 s"
    )
    assert node.heard == []


async def test_turning_the_microphone_off_stops_a_running_capture(mic: AlsaTestMic) -> None:
    """Settings off mid-capture: the device is released within a second; stop is refused
    while off, and after turning it on again reports why the capture ended."""
    node = Node().build()
    await node.call("talk.ptt.start", {"captureId": "privacy"})
    node.settings = NodeSettings(microphone=False, microphone_device=PCM_NAME)
    assert await _until(lambda: not node.mic_in_use(), 5) < 1.5
    refused = await node.call("talk.ptt.stop", {"captureId": "privacy"})
    assert refused.error_code == "NOT_AUTHORIZED"
    node.settings = NodeSettings(microphone=True, microphone_device=PCM_NAME)
    stopped = await node.call("talk.ptt.stop", {"captureId": "privacy"})
    assert stopped.error_message == (
        "UNAVAILABLE: the microphone stopped: it was turned off in Settings"
    )


async def test_speech_to_text_failures_are_reported(mic: AlsaTestMic) -> None:
    """A failing transcriber gives UNAVAILABLE with the error type (no details on the
    wire); a slow one gives TIMEOUT after its deadline."""

    async def broken(pcm: bytes, rate: int) -> str:
        raise RuntimeError("secret token xyz")

    node = Node().build(transcriber=broken)
    await node.call("talk.ptt.start", {"captureId": "b"})
    await asyncio.sleep(0.2)
    failed = await node.call("talk.ptt.stop", {"captureId": "b"})
    assert failed.error_message == "UNAVAILABLE: speech-to-text failed (RuntimeError)"

    async def slow(pcm: bytes, rate: int) -> str:
        await asyncio.sleep(30)
        return "late"

    node = Node().build(PttLimits(transcribe_timeout_s=0.2), transcriber=slow)
    await node.call("talk.ptt.start", {"captureId": "s"})
    await asyncio.sleep(0.2)
    timed_out = await node.call("talk.ptt.stop", {"captureId": "s"})
    assert timed_out.error_message == "TIMEOUT: speech-to-text did not answer within 0.2 s"


async def test_a_missing_configured_device_falls_back_to_the_default(
    mic: AlsaTestMic, caplog: pytest.LogCaptureFixture
) -> None:
    """microphone_device names nothing present: the default input records, logged."""
    node = Node(settings=NodeSettings(microphone=True, microphone_device=f"usb-{uuid.uuid4()}"))
    node.build()
    with caplog.at_level(logging.WARNING, "openclaw.devices.audio"):
        await node.call("talk.ptt.start", {"captureId": "fallback"})
    assert "not found; using the default input instead" in caplog.text
    await asyncio.sleep(0.3)
    stopped = await node.call("talk.ptt.stop", {"captureId": "fallback"})
    assert stopped.ok, stopped
    assert node.heard[0].dominant_hz == pytest.approx(440, abs=5)


async def test_no_microphone_is_not_advertised_and_refused_with_the_reason(
    tmp_path: Path,
) -> None:
    """No input device: the surface leaves talk out and an invoke says why."""
    node = Node().build()
    with no_input_config(tmp_path):
        registry = node.dispatcher.registry
        surface = await registry.surface(node.settings.toggles())
        assert "talk" not in surface.caps
        assert surface.permissions == {"microphone": False}
        entries = await registry.survey(node.settings.toggles())
        assert {e.availability.reason for e in entries} == {
            "no microphone found (PortAudio lists no input device)"
        }
        result = await node.call("talk.ptt.start", {})
        assert result.error_message == (
            "UNAVAILABLE: no microphone found (PortAudio lists no input device)"
        )


async def test_with_a_microphone_the_talk_cap_is_advertised(mic: AlsaTestMic) -> None:
    """Enabled and present: all four commands and the microphone permission."""
    node = Node().build()
    surface = await node.dispatcher.registry.surface(node.settings.toggles())
    assert surface.caps == ("talk",)
    assert surface.commands == (
        "talk.ptt.start",
        "talk.ptt.stop",
        "talk.ptt.cancel",
        "talk.ptt.once",
    )
    assert surface.permissions == {"microphone": True}
