"""Unit tests for camera.list / camera.snap / camera.clip through the real dispatcher, with
real OpenCV reading generated video files as the camera (no sockets: the stream tests are in
tests/integration/devices)."""

from __future__ import annotations

import asyncio
import base64
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from openclaw_desktop.config.settings import NodeSettings
from openclaw_desktop.devices import DeviceError
from openclaw_desktop.devices.camera import CameraConfig
from openclaw_desktop.node import CommandRegistry, InvokeDispatcher, InvokeResult, NodeContext
from openclaw_desktop.node.handlers.camera import camera_area, run_stoppable
from tests.helpers.video_sources import (
    level_of,
    pattern_frame,
    write_noise_video,
    write_video,
)

Frame = np.ndarray[Any, Any]


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Camera stand-ins: 1 s of 1080p and of VGA pattern video, incompressible noise, and a
    file that is not a video."""
    folder = tmp_path_factory.mktemp("camera-videos")
    broken = folder / "broken.mp4"
    broken.write_text("not a video\n")
    return {
        "hd": write_video(folder / "hd.mp4", width=1920, height=1080),
        "vga": write_video(folder / "vga.mp4", width=640, height=480),
        "noise": write_noise_video(folder / "noise.avi", width=1600, height=1200),
        "broken": broken,
    }


class Rig:
    """A camera area behind a real InvokeDispatcher, with live settings."""

    def __init__(
        self,
        tmp_path: Path,
        source: Path | str | None,
        *,
        camera: bool = True,
        present: bool = True,
        **config: Any,
    ) -> None:
        self.settings = NodeSettings(
            camera=camera, camera_source=str(source) if source is not None else None
        )
        self.clips = tmp_path / "clips"
        self.clips.mkdir(exist_ok=True)
        options: dict[str, Any] = {"temp_dir": self.clips, "open_timeout_s": 3.0}
        options.update(config)

        async def presence() -> bool:
            return present

        self.ctx = NodeContext(settings=lambda: self.settings, presence=presence)
        self.events: list[tuple[str, str, bool]] = []
        self.ctx.activity.listeners.append(lambda *event: self.events.append(event))
        self.area = camera_area(self.ctx, CameraConfig(**options))
        self.dispatcher = InvokeDispatcher(
            CommandRegistry(self.area.specs),
            self.area.handlers,
            lambda: self.ctx.settings().toggles(),
            self.ctx.presence,
        )

    def use(self, source: Path | str | None) -> None:
        """Point camera_source elsewhere (as the settings window would)."""
        value = str(source) if source is not None else None
        self.settings = self.settings.model_copy(update={"camera_source": value})

    async def call(self, command: str, params: Any = None) -> InvokeResult:
        """Dispatch one command."""
        return await self.dispatcher.dispatch(command, params)


def jpeg_of(result: InvokeResult) -> Frame:
    """The decoded photo of a successful camera.snap."""
    assert result.ok, result.error_message
    payload = result.payload
    assert set(payload) == {"format", "base64", "width", "height"}
    assert payload["format"] == "jpg"
    data = base64.b64decode(payload["base64"], validate=True)
    assert data[:3] == b"\xff\xd8\xff"
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    assert image.shape[:2] == (payload["height"], payload["width"])
    return image


def mp4_of(result: InvokeResult, folder: Path) -> tuple[int, float, tuple[int, int]]:
    """(frames, fps, (width, height)) of a successful camera.clip, read back by OpenCV."""
    assert result.ok, result.error_message
    payload = result.payload
    assert set(payload) == {"format", "base64", "durationMs", "hasAudio"}
    assert payload["format"] == "mp4"
    assert payload["hasAudio"] is False
    data = base64.b64decode(payload["base64"], validate=True)
    assert data[4:8] == b"ftyp"
    path = folder / "readback.mp4"
    path.write_bytes(data)
    capture = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    try:
        assert capture.isOpened()
        frames = 0
        size = (0, 0)
        while True:
            ok, frame = capture.read()
            if not ok:
                break
            frames += 1
            size = (frame.shape[1], frame.shape[0])
        return frames, float(capture.get(cv2.CAP_PROP_FPS)), size
    finally:
        capture.release()
        path.unlink()


async def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``check`` until true (bounded)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


# ---------------------------------------------------------------- gates and surface


@pytest.mark.parametrize("command", ["camera.list", "camera.snap", "camera.clip"])
async def test_camera_is_off_by_default(
    tmp_path: Path, videos: dict[str, Path], command: str
) -> None:
    """With default settings every camera command says how to turn it on."""
    rig = Rig(tmp_path, videos["vga"])
    rig.settings = NodeSettings(camera_source=str(videos["vga"]))
    result = await rig.call(command, {})
    assert (result.error_code, result.error_message) == (
        "CAMERA_DISABLED",
        "CAMERA_DISABLED: enable Camera in Settings",
    )
    assert rig.events == []


async def test_surface_follows_the_setting(tmp_path: Path, videos: dict[str, Path]) -> None:
    """Advertised only when enabled and a camera exists; the permission mirrors that."""
    rig = Rig(tmp_path, videos["vga"], camera=False)
    registry = rig.dispatcher.registry
    off = await registry.surface(rig.settings.toggles())
    assert (off.caps, off.commands, off.permissions) == ((), (), {"camera": False})
    rig.settings = rig.settings.model_copy(update={"camera": True})
    on = await registry.surface(rig.settings.toggles())
    assert on.caps == ("camera",)
    assert on.commands == ("camera.list", "camera.snap", "camera.clip")
    assert on.permissions == {"camera": True}


async def test_missing_source_is_unavailable_and_a_fix_applies_at_once(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """A camera_source that does not exist makes the probe say so; fixing the setting is
    seen by the next invoke (the probe cache is per source)."""
    rig = Rig(tmp_path, tmp_path / "nope.mp4")
    result = await rig.call("camera.list")
    assert result.error_message == "UNAVAILABLE: camera_source nope.mp4 not found"
    rig.use(videos["vga"])
    assert (await rig.call("camera.list")).ok


async def test_snap_and_clip_need_the_user_present(tmp_path: Path, videos: dict[str, Path]) -> None:
    """A locked session refuses captures but still lists cameras."""
    rig = Rig(tmp_path, videos["vga"], present=False)
    assert (await rig.call("camera.list")).ok
    for command in ("camera.snap", "camera.clip"):
        result = await rig.call(command)
        assert result.error_code == "NODE_BACKGROUND_UNAVAILABLE"
    assert rig.events == []


# ---------------------------------------------------------------- camera.list


async def test_list_shows_the_configured_file_first(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """The configured file is the default camera, external, named by its file name."""
    rig = Rig(tmp_path, videos["hd"])
    result = await rig.call("camera.list")
    assert result.ok
    assert result.payload["devices"][0] == {
        "id": "configured",
        "name": "Configured camera (hd.mp4)",
        "position": "external",
        "deviceType": "external",
    }
    assert rig.events == []  # listing does not capture


@pytest.mark.parametrize("params", [[], "x", 3])
async def test_list_rejects_non_object_params(
    tmp_path: Path, videos: dict[str, Path], params: Any
) -> None:
    """params, when given, must be an object."""
    result = await Rig(tmp_path, videos["vga"]).call("camera.list", params)
    assert result.error_message == "INVALID_REQUEST: params must be an object"


# ---------------------------------------------------------------- camera.snap


async def test_snap_defaults_to_1600_px_and_shows_the_first_frame(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """A 1920x1080 camera gives a 1600x900 JPEG of what the camera shows, inside the
    camera capture indicator."""
    rig = Rig(tmp_path, videos["hd"])
    image = jpeg_of(await rig.call("camera.snap"))
    assert image.shape == (900, 1600, 3)
    expected = pattern_frame(0, 1600, 900)
    assert float(np.abs(image.astype(np.int16) - expected).mean()) < 6
    assert rig.events == [("camera", "camera.snap", True), ("camera", "camera.snap", False)]
    assert rig.ctx.activity.active == {}


@pytest.mark.parametrize(
    ("video", "params", "size"),
    [
        ("hd", {"maxWidth": 800}, (800, 450)),
        ("hd", {"maxWidth": 999.6}, (1000, 562)),
        ("hd", {"maxWidth": 100000}, (1920, 1080)),  # clamped to 7680, never enlarged
        ("vga", {}, (640, 480)),
        ("vga", {"maxWidth": 4}, (16, 12)),  # clamped up to 16
        ("vga", {"maxWidth": 320, "quality": 0, "facing": "back"}, (320, 240)),
        ("vga", {"deviceId": "configured", "format": "jpeg", "quality": 1}, (640, 480)),
    ],
)
async def test_snap_honours_max_width_and_keeps_the_aspect(
    tmp_path: Path,
    videos: dict[str, Path],
    video: str,
    params: dict[str, Any],
    size: tuple[int, int],
) -> None:
    """maxWidth scales down (aspect kept, clamped to 16..7680) and never up."""
    result = await Rig(tmp_path, videos[video]).call("camera.snap", params)
    image = jpeg_of(result)
    assert (image.shape[1], image.shape[0]) == size


async def test_snap_delay_lets_the_camera_run_first(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """delayMs waits while reading frames: the photo shows a later frame."""
    rig = Rig(tmp_path, videos["vga"])
    started = time.monotonic()
    image = jpeg_of(await rig.call("camera.snap", {"delayMs": 500}))
    elapsed = time.monotonic() - started
    assert 0.5 <= elapsed < 3
    frame_index = (level_of(image) - level_of(pattern_frame(0, 640, 480))) / 4
    assert 12 <= frame_index <= 18  # 500 ms at 30 fps = frame 15


async def test_snap_payload_guard_steps_quality_then_size(
    tmp_path: Path, videos: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """An incompressible picture over the (here 300 KiB) limit comes back under it, smaller
    and at the minimum quality (the log line says which)."""
    limit = 300 * 1024
    rig = Rig(tmp_path, videos["noise"], snap_max_base64=limit)
    with caplog.at_level(logging.INFO, logger="openclaw.node"):
        result = await rig.call("camera.snap")
    image = jpeg_of(result)
    assert len(result.payload["base64"]) <= limit
    assert image.shape[1] < 1600
    assert abs(image.shape[1] / image.shape[0] - 4 / 3) < 0.01
    line = next(r.getMessage() for r in caplog.records if "attempt" in r.getMessage())
    match = re.search(r"(\d+)x(\d+) q(\d+) \((\d+) attempt", line)
    assert match is not None
    assert int(match.group(3)) == 20
    assert int(match.group(4)) > 9


async def test_snap_at_the_real_5_mib_limit(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With the product limit (5 MiB of base64), an incompressible 4K camera frame at
    maxWidth 7680 comes back under it at a stepped-down quality."""
    video = write_noise_video(tmp_path / "noise4k.avi", width=3840, height=2160, frames=1)
    rig = Rig(tmp_path, video)
    with caplog.at_level(logging.INFO, logger="openclaw.node"):
        result = await rig.call("camera.snap", {"maxWidth": 7680})
    image = jpeg_of(result)
    assert 3 * 1024 * 1024 < len(result.payload["base64"]) <= 5 * 1024 * 1024
    assert image.shape[1] <= 3840
    line = next(r.getMessage() for r in caplog.records if "attempt" in r.getMessage())
    match = re.search(r" q(\d+) \((\d+) attempt", line)
    assert match is not None
    assert int(match.group(1)) < 95
    assert int(match.group(2)) > 1


BAD_SNAP = [
    ("params", ["maxWidth"], "params must be an object"),
    ("maxWidth", -5, "maxWidth must be a positive number of pixels"),
    ("maxWidth", 0, "maxWidth must be a positive number of pixels"),
    ("maxWidth", "1600", "maxWidth must be a number of pixels"),
    ("maxWidth", True, "maxWidth must be a number of pixels"),
    ("maxWidth", float("inf"), "maxWidth must be a number of pixels"),
    ("quality", 1.5, "quality must be a number from 0 to 1"),
    ("quality", 80, "quality must be a number from 0 to 1"),
    ("quality", -0.1, "quality must be a number from 0 to 1"),
    ("quality", "high", "quality must be a number from 0 to 1"),
    ("delayMs", -1, "delayMs must not be negative"),
    ("delayMs", [100], "delayMs must be a number of milliseconds"),
    ("deviceId", 0, "deviceId must be a non-empty string from camera.list"),
    ("deviceId", " ", "deviceId must be a non-empty string from camera.list"),
    ("deviceId", "/dev/video99", "unknown camera deviceId"),
    ("facing", "left", "facing must be one of front, back"),
    ("format", "png", "format must be one of jpg, jpeg"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD_SNAP)
async def test_snap_rejects_bad_params(
    tmp_path: Path, videos: dict[str, Path], key: str, value: Any, message: str
) -> None:
    """Each bad param is INVALID_REQUEST with a text naming it; nothing is captured."""
    rig = Rig(tmp_path, videos["vga"])
    params = value if key == "params" else {key: value}
    result = await rig.call("camera.snap", params)
    assert (result.error_code, result.error_message) == (
        "INVALID_REQUEST",
        f"INVALID_REQUEST: {message}",
    )
    assert rig.events == []


async def test_snap_of_a_file_that_is_not_a_video_is_unavailable(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """OpenCV cannot open it: a clear UNAVAILABLE naming the source, device released."""
    rig = Rig(tmp_path, videos["broken"])
    result = await rig.call("camera.snap")
    assert result.error_message == "UNAVAILABLE: cannot open camera broken.mp4"
    assert rig.ctx.activity.active == {}


# ---------------------------------------------------------------- camera.clip


async def test_clip_is_a_readable_mp4_of_the_asked_duration(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """1.5 s from a 1 s file (it loops): 45 frames at 30 fps, no audio, temp file gone."""
    rig = Rig(tmp_path, videos["vga"])
    started = time.monotonic()
    result = await rig.call("camera.clip", {"durationMs": 1500, "includeAudio": True})
    elapsed = time.monotonic() - started
    frames, fps, size = mp4_of(result, tmp_path)
    assert result.payload["durationMs"] == 1500
    assert (frames, fps, size) == (45, 30.0, (640, 480))
    assert 1.3 <= elapsed < 5
    assert list(rig.clips.iterdir()) == []
    assert rig.events == [("camera", "camera.clip", True), ("camera", "camera.clip", False)]


async def test_clip_duration_is_clamped_and_width_capped(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """durationMs 0 records the 200 ms minimum; 1080p is recorded at 1280x720."""
    rig = Rig(tmp_path, videos["hd"])
    result = await rig.call("camera.clip", {"durationMs": 0, "format": "mp4"})
    frames, fps, size = mp4_of(result, tmp_path)
    assert result.payload["durationMs"] == 200
    assert (frames, fps, size) == (6, 30.0, (1280, 720))


BAD_CLIP = [
    ("format", "webm", "format must be mp4"),
    ("format", "MP4 ", "format must be mp4"),
    ("includeAudio", "yes", "includeAudio must be true or false"),
    ("durationMs", -1, "durationMs must not be negative"),
    ("durationMs", "3s", "durationMs must be a number of milliseconds"),
    ("deviceId", "nope", "unknown camera deviceId"),
    ("facing", 1, "facing must be one of front, back"),
]


@pytest.mark.parametrize(("key", "value", "message"), BAD_CLIP)
async def test_clip_rejects_bad_params(
    tmp_path: Path, videos: dict[str, Path], key: str, value: Any, message: str
) -> None:
    """Each bad param is INVALID_REQUEST with a text naming it; nothing is recorded."""
    rig = Rig(tmp_path, videos["vga"])
    result = await rig.call("camera.clip", {key: value})
    assert result.error_message == f"INVALID_REQUEST: {message}"
    assert rig.events == []


async def test_clip_over_the_cap_stops_early(tmp_path: Path, videos: dict[str, Path]) -> None:
    """A clip that passes the raw cap (here 200 KiB) stops recording at once with
    PAYLOAD_TOO_LARGE and removes its temporary file."""
    rig = Rig(tmp_path, videos["noise"], clip_max_bytes=200 * 1024)
    started = time.monotonic()
    result = await rig.call("camera.clip", {"durationMs": 10_000})
    elapsed = time.monotonic() - started
    assert result.error_code == "PAYLOAD_TOO_LARGE"
    assert re.fullmatch(
        r"PAYLOAD_TOO_LARGE: clip is [\d.]+ [KM]iB after 0\.\d of 10\.0 s, over the 200 KiB cap\. "
        r"Reduce durationMs",
        result.error_message or "",
    ), result.error_message
    assert elapsed < 2
    assert list(rig.clips.iterdir()) == []


async def test_clip_over_the_cap_when_finished(tmp_path: Path, videos: dict[str, Path]) -> None:
    """A short clip is measured once written: PAYLOAD_TOO_LARGE with its size."""
    rig = Rig(tmp_path, videos["noise"], clip_max_bytes=20 * 1024)
    result = await rig.call("camera.clip", {"durationMs": 200})
    assert re.fullmatch(
        r"PAYLOAD_TOO_LARGE: clip is [\d.]+ [KM]iB, over the 20 KiB cap\. Reduce durationMs",
        result.error_message or "",
    ), result.error_message
    assert list(rig.clips.iterdir()) == []


async def test_cancel_stops_a_running_clip_promptly(
    tmp_path: Path, videos: dict[str, Path]
) -> None:
    """Cancelling the invoke task (node.invoke.cancel) stops the recording within a frame or
    two, releases the camera and deletes the temporary file before the task ends."""
    rig = Rig(tmp_path, videos["vga"])
    task = asyncio.create_task(rig.call("camera.clip", {"durationMs": 30_000}))
    await wait_for(lambda: any(rig.clips.iterdir()) and bool(rig.ctx.activity.active))
    await asyncio.sleep(0.3)  # recording for real
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - cancelled_at < 1.0
    assert list(rig.clips.iterdir()) == []
    assert rig.ctx.activity.active == {}
    assert rig.events[-1] == ("camera", "camera.clip", False)
    assert (await rig.call("camera.snap", {"maxWidth": 64})).ok  # the lock was released


async def test_captures_run_one_at_a_time(tmp_path: Path, videos: dict[str, Path]) -> None:
    """Two concurrent captures both succeed, one after the other (a device streams to one
    reader)."""
    rig = Rig(tmp_path, videos["vga"])
    peak = 0

    def watch(kind: str, command: str, active: bool) -> None:
        nonlocal peak
        peak = max(peak, rig.ctx.activity.active.get("camera", 0))

    rig.ctx.activity.listeners.append(watch)
    results = await asyncio.gather(
        rig.call("camera.clip", {"durationMs": 300}), rig.call("camera.snap")
    )
    assert all(r.ok for r in results)
    assert peak == 1


# ---------------------------------------------------------------- the worker runner


async def test_worker_that_does_not_answer_is_abandoned_with_unavailable() -> None:
    """Past the deadline the worker is told to stop and the invoke ends in UNAVAILABLE."""
    stopped = threading.Event()

    def stuck(stop: threading.Event) -> None:
        stop.wait(30)
        stopped.set()

    started = time.monotonic()
    with pytest.raises(DeviceError) as info:
        await run_stoppable(stuck, deadline_s=0.3, grace_s=2)
    assert info.value.message == "camera did not answer within 0.3 s"
    assert stopped.is_set()
    assert time.monotonic() - started < 2


async def test_worker_result_and_errors_pass_through() -> None:
    """A finished worker's value is returned and its DeviceError raised as is."""

    def fail(stop: threading.Event) -> None:
        raise DeviceError("UNAVAILABLE", "camera /dev/video0 stopped delivering frames")

    run: Callable[..., Awaitable[Any]] = run_stoppable
    assert await run(lambda stop: 42, deadline_s=5, grace_s=1) == 42
    with pytest.raises(DeviceError, match="stopped delivering frames"):
        await run(fail, deadline_s=5, grace_s=1)
