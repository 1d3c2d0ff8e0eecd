"""screen.record against a real X server (Xvfb) whose colours change while it records, the
mp4 decoded again with PyAV; the microphone track from a real ALSA capture device through
real PortAudio (the FIFO-fed test microphone of ``tests/helpers/alsa_mic.py``)."""

from __future__ import annotations

import asyncio
import base64
import io
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.devices import audio, screen_record
from openclaw_desktop.devices.screen_record import AUDIO_RATE, RecordConfig
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.screen_record import screen_record_area
from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.node.results import InvokeResult
from tests.helpers.alsa_mic import PCM_NAME, AlsaTestMic
from tests.helpers.desktop_session import (
    XPainter,
    XServer,
    xvfb_fixture,  # noqa: F401 - provides the x_server fixture
)

pytestmark = pytest.mark.timeout(60)

RED = (200, 30, 40)
GREEN = (10, 220, 30)


class Flipper:
    """Repaints the root red/green every ``period_s`` from a thread (its own X connection)."""

    def __init__(self, display: str, period_s: float = 0.1) -> None:
        self.display = display
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="x-flipper", daemon=True)

    def _run(self) -> None:
        with XPainter(self.display) as paint:
            flips = 0
            while not self._stop.wait(self.period_s):
                flips += 1
                paint.fill_root(GREEN if flips % 2 else RED)

    def __enter__(self) -> Flipper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@pytest.fixture
def flipping(x_server: XServer) -> Iterator[Flipper]:
    """The 640x480 screen, alternating red and green ten times a second."""
    with XPainter(x_server.display) as paint:
        paint.fill_root(RED)
        with Flipper(x_server.display) as flipper:
            yield flipper


class Rig:
    """A dispatcher over the screen.record area, with the capture activity recorded."""

    def __init__(
        self,
        *,
        screen: bool = True,
        microphone: bool = False,
        config: RecordConfig | None = None,
        microphone_device: str | None = None,
    ) -> None:
        self.settings = NodeSettings(
            screen=screen, microphone=microphone, microphone_device=microphone_device
        )
        self.ctx = NodeContext(settings=lambda: self.settings)
        self.events: list[tuple[str, str, bool]] = []
        self.ctx.activity.listeners.append(lambda *event: self.events.append(event))
        area = screen_record_area(self.ctx, config=config)
        self.dispatcher = InvokeDispatcher(
            CommandRegistry(area.specs), area.handlers, lambda: self.settings.toggles()
        )

    async def record(self, params: Any = None) -> InvokeResult:
        """One screen.record."""
        return await self.dispatcher.dispatch("screen.record", params)


class Decoded:
    """A returned mp4, decoded."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.data = base64.b64decode(payload["base64"])
        with av.open(io.BytesIO(self.data), mode="r") as container:
            self.format = container.format.name
            video = container.streams.video[0]
            self.codec = video.codec_context.name
            self.rate = float(video.average_rate or 0)
            self.size = (video.codec_context.width, video.codec_context.height)
            self.duration_s = float(container.duration or 0) / av.time_base
            self.frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
        with av.open(io.BytesIO(self.data), mode="r") as container:
            self.audio: list[np.ndarray[Any, Any]] = []
            self.audio_rate = 0
            self.audio_codec = ""
            if container.streams.audio:
                track = container.streams.audio[0]
                self.audio_rate = track.rate
                self.audio_codec = track.codec_context.name
                self.audio = [f.to_ndarray() for f in container.decode(audio=0)]

    def colours(self) -> set[str]:
        """Which of red and green the frames show (judged at the screen's corner)."""
        seen = set()
        for frame in self.frames:
            pixel = frame[10, 10].astype(int)
            if np.abs(pixel - RED).max() <= 24:
                seen.add("red")
            elif np.abs(pixel - GREEN).max() <= 24:
                seen.add("green")
        return seen

    def samples(self) -> np.ndarray[Any, Any]:
        """The audio track as one float array (mono)."""
        return np.concatenate([chunk.reshape(-1) for chunk in self.audio])


def _dominant_hz(samples: np.ndarray[Any, Any], rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples.astype(np.float64)))
    return float(np.argmax(spectrum)) * rate / samples.size


@pytest.mark.usefixtures("flipping")
async def test_one_second_of_a_changing_screen() -> None:
    """1 s at 10 fps: an H.264 mp4 of 10 frames at the screen's size, lasting 1 s, whose
    frames show the colours changing; the reference's result fields; the indicator lit
    for the recording only."""
    rig = Rig()
    result = await rig.record({"durationMs": 1000, "fps": 10, "includeAudio": False})
    assert result.ok, result.error_message
    payload = result.payload
    assert set(payload) == {"format", "base64", "durationMs", "fps", "screenIndex", "hasAudio"}
    assert {k: v for k, v in payload.items() if k != "base64"} == {
        "format": "mp4",
        "durationMs": 1000,
        "fps": 10,
        "screenIndex": 0,
        "hasAudio": False,
    }
    clip = Decoded(payload)
    assert "mp4" in clip.format
    assert clip.codec == "h264"
    assert clip.size == (640, 480)
    assert clip.rate == 10
    assert 8 <= len(clip.frames) <= 10  # a slot may be skipped on a loaded machine
    assert clip.duration_s == pytest.approx(1.0, abs=0.15)
    assert clip.colours() == {"red", "green"}
    assert clip.audio == []
    assert rig.events == [("screen", "screen.record", True), ("screen", "screen.record", False)]


@pytest.mark.usefixtures("flipping")
async def test_fps_and_duration_are_what_was_asked() -> None:
    """20 fps for 0.5 s and 2 fps for 1.5 s: the stream's rate, frame count and length."""
    rig = Rig()
    fast = Decoded((await rig.record({"durationMs": 500, "fps": 20})).payload)
    assert fast.rate == 20
    assert 8 <= len(fast.frames) <= 10  # a slot may be skipped on a loaded machine
    assert fast.duration_s == pytest.approx(0.5, abs=0.1)
    slow_result = await rig.record({"durationMs": 1500, "fps": 2.0})
    assert slow_result.payload["fps"] == 2 and slow_result.payload["durationMs"] == 1500
    slow = Decoded(slow_result.payload)
    assert (slow.rate, len(slow.frames)) == (2, 3)
    assert slow.duration_s == pytest.approx(1.5, abs=0.2)


@pytest.mark.usefixtures("flipping")
async def test_the_size_cap_stops_the_recording_while_it_encodes() -> None:
    """A 1 KiB cap: PAYLOAD_TOO_LARGE naming the cap, found during the recording (it says
    how far it got), not after; the indicator goes off again."""
    rig = Rig(config=RecordConfig(max_bytes=1024))
    result = await rig.record({"durationMs": 20_000, "fps": 10, "includeAudio": False})
    assert result.error_code == "PAYLOAD_TOO_LARGE"
    message = result.error_message or ""
    assert "over the 1 KiB cap. Reduce durationMs or fps" in message
    assert " after " in message and " of 20.0 s" in message
    assert rig.events[-1] == ("screen", "screen.record", False)


@pytest.mark.usefixtures("flipping")
async def test_cancel_stops_and_frees_at_once() -> None:
    """A 20 s recording cancelled after half a second: the cancellation goes through,
    the indicator is off and the recorder takes the next recording straight away."""
    rig = Rig()
    task = asyncio.create_task(rig.record({"durationMs": 20_000}))
    loop = asyncio.get_running_loop()
    for _ in range(100):
        if rig.events:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    cancelled_at = loop.time()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert loop.time() - cancelled_at < 3.0  # the grace bound; a stopped loop ends in one frame
    assert rig.events == [("screen", "screen.record", True), ("screen", "screen.record", False)]
    again = await rig.record({"durationMs": 200, "fps": 10})
    assert again.ok, again.error_message


@pytest.mark.usefixtures("flipping")
async def test_turning_screen_off_ends_a_running_recording() -> None:
    """Screen switched off in Settings half a second into a 20 s recording: it ends at once
    with NOT_AUTHORIZED and returns nothing; the indicator goes off."""
    rig = Rig()
    task = asyncio.create_task(rig.record({"durationMs": 20_000, "includeAudio": False}))
    for _ in range(100):
        if rig.events:
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.5)
    rig.settings = NodeSettings(screen=False)
    async with asyncio.timeout(5):
        result = await task
    assert result.error_message == (
        "NOT_AUTHORIZED: the screen recording stopped: Screen was turned off in Settings"
    )
    assert rig.events == [("screen", "screen.record", True), ("screen", "screen.record", False)]


@pytest.mark.usefixtures("flipping")
async def test_mpeg4_when_ffmpeg_has_no_h264(monkeypatch: pytest.MonkeyPatch) -> None:
    """An FFmpeg without libx264 records MPEG-4 Part 2 (same length, same frames); one with
    neither answers UNAVAILABLE, and the availability check says why."""
    monkeypatch.setattr(screen_record, "_VIDEO_CODECS", ("openclaw-no-such-encoder", "mpeg4"))
    result = await Rig().record({"durationMs": 1000, "fps": 10, "includeAudio": False})
    assert result.ok, result.error_message
    clip = Decoded(result.payload)
    assert (clip.codec, clip.size, clip.rate) == ("mpeg4", (640, 480), 10)
    assert 8 <= len(clip.frames) <= 10
    assert clip.colours() == {"red", "green"}
    monkeypatch.setattr(screen_record, "_VIDEO_CODECS", ("openclaw-no-such-encoder",))
    rig = Rig()
    none = await rig.record({"durationMs": 200})
    assert none.error_message == "UNAVAILABLE: this FFmpeg has no H.264 or MPEG-4 encoder"
    (entry,) = await rig.dispatcher.registry.survey({"screen": True})
    assert entry.availability.reason == "this FFmpeg has no H.264 or MPEG-4 encoder"


async def test_screen_index_records_that_monitor(x_server: XServer) -> None:
    """Two RandR monitors (red left, green right): screenIndex 1 records the right one at
    its own size, and the result says which screen it was."""
    with XPainter(x_server.display) as paint:
        paint.fill_root(RED)
        paint.add_window(320, 0, 320, 480, GREEN)
        paint.set_monitors([(0, 0, 320, 480), (320, 0, 320, 480)])
        result = await Rig().record({"screenIndex": 1, "durationMs": 300, "includeAudio": False})
    assert result.ok, result.error_message
    assert result.payload["screenIndex"] == 1
    clip = Decoded(result.payload)
    assert clip.size == (320, 480)
    assert clip.colours() == {"green"}


@pytest.mark.usefixtures("flipping")
async def test_bad_screen_and_bad_params() -> None:
    """A screen past the last one and malformed params are INVALID_REQUEST with the limit;
    Screen off is NOT_AUTHORIZED and never lights the indicator."""
    rig = Rig()
    missing = await rig.record({"screenIndex": 3, "durationMs": 200})
    assert missing.error_message == "INVALID_REQUEST: no screen 3, there is 1"
    long = await rig.record({"durationMs": 60_001})
    assert long.error_message == "INVALID_REQUEST: durationMs must be an integer from 100 to 60000"
    fast = await rig.record({"fps": 61})
    assert fast.error_message == "INVALID_REQUEST: fps must be a number from 1 to 60"
    off = Rig(screen=False)
    assert (await off.record({})).error_message == "NOT_AUTHORIZED: enable Screen in Settings"
    assert off.events == []


# ---------------------------------------------------------------- the microphone track


@pytest.fixture
def mic(tmp_path: Path) -> Iterator[AlsaTestMic]:
    """A live 440 Hz tone at 48 kHz on the default ALSA input."""
    with AlsaTestMic(tmp_path, sample_rate=AUDIO_RATE, idle="tone") as test_mic:
        yield test_mic


@pytest.mark.usefixtures("flipping")
async def test_sound_from_the_microphone_is_muxed_as_aac(mic: AlsaTestMic) -> None:
    """includeAudio with Microphone on: an AAC track at 48 kHz as long as the video,
    carrying the device's 440 Hz tone; both indicators lit and released; the device
    closed afterwards."""
    rig = Rig(microphone=True, microphone_device=PCM_NAME)
    result = await rig.record({"durationMs": 1000, "fps": 10, "includeAudio": True})
    assert result.ok, result.error_message
    assert result.payload["hasAudio"] is True
    clip = Decoded(result.payload)
    assert (clip.audio_codec, clip.audio_rate) == ("aac", AUDIO_RATE)
    samples = clip.samples()
    assert samples.size / AUDIO_RATE == pytest.approx(1.0, abs=0.15)
    assert _dominant_hz(samples, AUDIO_RATE) == pytest.approx(440, abs=5)
    assert clip.colours() == {"red", "green"}
    assert ("microphone", "screen.record", True) in rig.events
    assert ("microphone", "screen.record", False) in rig.events
    assert rig.events[0] == ("screen", "screen.record", True)
    assert rig.events[-1] == ("screen", "screen.record", False)
    assert audio.streams_open() == 0


@pytest.mark.usefixtures("flipping")
async def test_no_sound_unless_both_asked_and_allowed(mic: AlsaTestMic) -> None:
    """Microphone off (sound asked for by default), or includeAudio false: no audio track,
    hasAudio false, and the microphone is never opened."""
    for rig, params in (
        (Rig(microphone=False, microphone_device=PCM_NAME), {"durationMs": 300}),
        (
            Rig(microphone=True, microphone_device=PCM_NAME),
            {"durationMs": 300, "includeAudio": False},
        ),
    ):
        result = await rig.record(params)
        assert result.ok, result.error_message
        assert result.payload["hasAudio"] is False
        assert Decoded(result.payload).audio == []
        assert all(kind == "screen" for kind, _, _ in rig.events)
        assert audio.streams_open() == 0


@pytest.mark.usefixtures("flipping")
async def test_a_stalled_microphone_keeps_the_video(mic: AlsaTestMic) -> None:
    """The microphone freezes mid-recording: the video is whole and the sound is what came
    before the stall (hasAudio true); the wedged stream's close is abandoned, and it is
    released once the device returns."""
    rig = Rig(microphone=True, microphone_device=PCM_NAME)
    task = asyncio.create_task(rig.record({"durationMs": 4000, "fps": 5, "includeAudio": True}))
    await asyncio.sleep(1.0)
    mic.stall()
    result = await task
    mic.resume()
    assert result.ok, result.error_message
    clip = Decoded(result.payload)
    assert clip.duration_s == pytest.approx(4.0, abs=0.3)
    assert result.payload["hasAudio"] is True
    assert 0.3 < clip.samples().size / AUDIO_RATE < 3.0
    for _ in range(250):
        if not audio.streams_open():
            break
        await asyncio.sleep(0.02)
    assert audio.streams_open() == 0
