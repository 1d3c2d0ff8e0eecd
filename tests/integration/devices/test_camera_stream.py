"""Integration tests: the camera commands reading an MJPEG-over-HTTP stream served on
127.0.0.1 (what an IP camera serves), through real OpenCV/FFmpeg and the real dispatcher:
snapshots, clips, a stream that ends or hangs mid-capture, and cancellation."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from openclaw_desktop.config.settings import NodeSettings
from openclaw_desktop.devices.camera import CameraConfig
from openclaw_desktop.node import CommandRegistry, InvokeDispatcher, InvokeResult, NodeContext
from openclaw_desktop.node.handlers.camera import camera_area
from tests.helpers.ports import free_port
from tests.helpers.video_sources import MjpegServer, level_of, pattern_frame

FRAMES = [pattern_frame(index, 1280, 720) for index in range(30)]


@pytest.fixture
def stream() -> Iterator[Callable[..., MjpegServer]]:
    """Start MJPEG servers (``MjpegServer`` options); all are closed after the test."""
    servers: list[MjpegServer] = []

    def start(**options: Any) -> MjpegServer:
        server = MjpegServer(FRAMES, **options).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


class Rig:
    """The camera area behind a real dispatcher, camera_source = ``url``."""

    def __init__(self, tmp_path: Path, url: str, **config: Any) -> None:
        self.clips = tmp_path / "clips"
        self.clips.mkdir()
        options: dict[str, Any] = {
            "temp_dir": self.clips,
            "open_timeout_s": 2.0,
            "read_timeout_s": 1.0,
        }
        options.update(config)
        settings = NodeSettings(camera=True, camera_source=url)
        self.ctx = NodeContext(settings=lambda: settings)
        area = camera_area(self.ctx, CameraConfig(**options))
        self.dispatcher = InvokeDispatcher(
            CommandRegistry(area.specs), area.handlers, lambda: self.ctx.settings().toggles()
        )

    async def call(self, command: str, params: Any = None) -> InvokeResult:
        """Dispatch one command."""
        return await self.dispatcher.dispatch(command, params)


async def wait_for(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Poll ``check`` until true (bounded)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.01)


def released(server: MjpegServer) -> Callable[[], bool]:
    """True once every client connection to ``server`` has ended."""
    return lambda: server.connections > 0 and server.disconnects == server.connections


async def test_list_and_snap_from_an_ip_camera_url_with_credentials(
    tmp_path: Path, stream: Callable[..., MjpegServer]
) -> None:
    """The stream is listed without its credentials, and a snap returns one of its frames
    scaled to maxWidth; the connection is closed afterwards."""
    server = stream()
    url = server.url.replace("http://", "http://viewer:s3cret@")
    rig = Rig(tmp_path, url)
    listed = await rig.call("camera.list")
    assert listed.ok
    assert listed.payload["devices"][0] == {
        "id": "configured",
        "name": f"Configured camera (http://127.0.0.1:{server.port}/stream.mjpg)",
        "position": "external",
        "deviceType": "external",
    }
    assert "s3cret" not in repr(listed.payload)

    result = await rig.call("camera.snap", {"maxWidth": 640, "deviceId": "configured"})
    assert result.ok, result.error_message
    assert (result.payload["width"], result.payload["height"]) == (640, 360)
    data = base64.b64decode(result.payload["base64"])
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    assert image.shape == (360, 640, 3)
    levels = [level_of(cv2.resize(f, (640, 360), interpolation=cv2.INTER_AREA)) for f in FRAMES]
    assert min(abs(level_of(image) - level) for level in levels) < 3
    await wait_for(released(server))


async def test_clip_from_a_stream_is_a_readable_mp4(
    tmp_path: Path, stream: Callable[..., MjpegServer]
) -> None:
    """Two seconds of the stream become an mp4 OpenCV reads back with about 2 s of frames."""
    server = stream()
    rig = Rig(tmp_path, server.url)
    started = time.monotonic()
    result = await rig.call("camera.clip", {"durationMs": 2000})
    elapsed = time.monotonic() - started
    assert result.ok, result.error_message
    assert result.payload["hasAudio"] is False
    path = tmp_path / "clip.mp4"
    path.write_bytes(base64.b64decode(result.payload["base64"]))
    capture = cv2.VideoCapture(str(path), cv2.CAP_FFMPEG)
    try:
        fps = capture.get(cv2.CAP_PROP_FPS)
        frames = 0
        while capture.read()[0]:
            frames += 1
    finally:
        capture.release()
    assert 5 <= fps <= 30
    assert abs(frames / fps - 2.0) <= 1 / fps
    assert abs(result.payload["durationMs"] - 2000) <= 1000 / fps
    assert 1.8 <= elapsed < 6
    assert list(rig.clips.iterdir()) == []
    await wait_for(released(server))


async def test_stream_that_ends_mid_clip_is_unavailable_quickly(
    tmp_path: Path, stream: Callable[..., MjpegServer]
) -> None:
    """The camera server closes the stream after about a second: the 10 s clip ends at once
    with UNAVAILABLE naming the camera, and its temporary file is gone."""
    server = stream(close_after=30)
    rig = Rig(tmp_path, server.url)
    started = time.monotonic()
    result = await rig.call("camera.clip", {"durationMs": 10_000})
    elapsed = time.monotonic() - started
    assert result.error_message == (
        f"UNAVAILABLE: camera http://127.0.0.1:{server.port}/stream.mjpg stopped delivering "
        "frames (disconnected or stream ended)"
    )
    assert elapsed < 4
    assert list(rig.clips.iterdir()) == []
    assert rig.ctx.activity.active == {}


async def test_stream_that_hangs_mid_clip_times_out(
    tmp_path: Path, stream: Callable[..., MjpegServer]
) -> None:
    """The server keeps the connection open but sends nothing more: the read timeout (1 s
    here) ends the clip with UNAVAILABLE instead of waiting for ever."""
    server = stream(stall_after=30)
    rig = Rig(tmp_path, server.url)
    started = time.monotonic()
    result = await rig.call("camera.clip", {"durationMs": 10_000})
    elapsed = time.monotonic() - started
    assert result.error_code == "UNAVAILABLE"
    assert result.error_message == (
        f"UNAVAILABLE: camera http://127.0.0.1:{server.port}/stream.mjpg delivered no frame in 1 s"
    )
    assert elapsed < 5
    assert list(rig.clips.iterdir()) == []


async def test_stream_that_never_sends_fails_to_open_in_bounded_time(
    tmp_path: Path, stream: Callable[..., MjpegServer]
) -> None:
    """Headers but no frame: the open timeout (2 s here) gives UNAVAILABLE."""
    server = stream(stall_after=0)
    rig = Rig(tmp_path, server.url)
    started = time.monotonic()
    result = await rig.call("camera.snap")
    assert result.error_message == (
        f"UNAVAILABLE: cannot open camera http://127.0.0.1:{server.port}/stream.mjpg"
    )
    assert time.monotonic() - started < 6


async def test_camera_server_that_is_down_is_unavailable(tmp_path: Path) -> None:
    """Nothing listens on the port: UNAVAILABLE at once."""
    port = free_port()
    rig = Rig(tmp_path, f"http://127.0.0.1:{port}/stream.mjpg")
    started = time.monotonic()
    result = await rig.call("camera.snap")
    assert result.error_message == (
        f"UNAVAILABLE: cannot open camera http://127.0.0.1:{port}/stream.mjpg"
    )
    assert time.monotonic() - started < 3


async def test_cancel_mid_clip_closes_the_stream_and_the_temp_file(
    tmp_path: Path, stream: Callable[..., MjpegServer]
) -> None:
    """node.invoke.cancel (the task is cancelled): recording stops within a frame or two,
    the stream connection is closed and the temporary file is gone when the task ends."""
    server = stream()
    rig = Rig(tmp_path, server.url)
    task = asyncio.create_task(rig.call("camera.clip", {"durationMs": 30_000}))
    await wait_for(lambda: any(rig.clips.iterdir()))
    await asyncio.sleep(0.5)
    sent_before = server.frames_sent
    cancelled_at = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert time.monotonic() - cancelled_at < 1.0
    assert list(rig.clips.iterdir()) == []
    assert rig.ctx.activity.active == {}
    await wait_for(released(server), 3)
    assert server.frames_sent - sent_before < 40  # it did not keep streaming
