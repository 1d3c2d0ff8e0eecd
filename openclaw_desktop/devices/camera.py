"""Camera capture through OpenCV: one photo (``camera.snap``) or a short mp4 clip
(``camera.clip``) from a V4L2 device, a video file or a network stream.

Everything here blocks and is meant to run in a worker thread. Each capture takes a
:class:`threading.Event`; setting it stops the capture at the next frame (the handler sets
it when the invoke is cancelled). Every wait is bounded: opening a stream and reading a frame
have FFmpeg timeouts, and the read loop also counts failed reads and the time since the last
good frame, so a camera that is unplugged or a stream that stops ends in ``UNAVAILABLE``
instead of a hang.

A video file plays in real time at its own frame rate and loops, so it behaves like a
camera that is always on (useful for tests and demos).
"""

from __future__ import annotations

import base64
import contextlib
import math
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from openclaw_desktop.devices.camera_jpeg import (
    MIB,
    encode_jpeg_within,
    human_size,
    resize_to_width,
)
from openclaw_desktop.devices.camera_sources import CameraTarget, SourceKind
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = [
    "CameraConfig",
    "CaptureStopped",
    "Clip",
    "FrameSource",
    "Photo",
    "record_clip",
    "snap",
]

_CLIP_FOURCC = "mp4v"  # MPEG-4 Part 2: written by the FFmpeg bundled with opencv-python


@dataclass(frozen=True, slots=True)
class CameraConfig:
    """Limits and timeouts of the camera adapter (the defaults are the product values;
    tests shrink them).

    Attributes:
        snap_max_base64: a photo's base64 must be at most this many characters (5 MiB).
        clip_max_bytes: raw mp4 cap (18 MiB); a bigger clip is ``PAYLOAD_TOO_LARGE``.
        clip_max_width: clips are scaled down to at most this width.
        open_timeout_s: bound on opening a stream or file (FFmpeg open timeout).
        read_timeout_s: bound on one frame read and on the time without a good frame.
        max_failed_reads: consecutive failed reads after which the camera counts as gone.
        device_warmup_ms: frames of a local camera are read for at least this long before
            the one kept (webcams start dark while their exposure settles).
        temp_dir: where clips are written before they are read back (system default if None).
    """

    snap_max_base64: int = 5 * MIB
    clip_max_bytes: int = 18 * MIB
    clip_max_width: int = 1280
    open_timeout_s: float = 10.0
    read_timeout_s: float = 5.0
    max_failed_reads: int = 5
    device_warmup_ms: int = 500
    temp_dir: Path | None = None


class CaptureStopped(DeviceError):
    """The capture was stopped from outside (the invoke was cancelled)."""

    def __init__(self) -> None:
        super().__init__(NodeErrorCode.CANCELLED, "camera capture stopped")


@dataclass(frozen=True, slots=True)
class Photo:
    """A ``camera.snap`` result."""

    base64: str
    width: int
    height: int
    quality: int
    attempts: int


@dataclass(frozen=True, slots=True)
class Clip:
    """A ``camera.clip`` result."""

    base64: str
    size_bytes: int
    duration_ms: int
    width: int
    height: int
    frames: int
    fps: float


class FrameSource:
    """An opened camera with bounded, stoppable reads. Use as a context manager (it
    releases the device on exit).

    A file source is paced to its frame rate and rewinds at the end; a live source (device
    or stream) is read as frames arrive.
    """

    def __init__(self, target: CameraTarget, config: CameraConfig, *, want_width: int = 0):
        self.target = target
        self.config = config
        self._capture = self._open(want_width)
        fps = float(self._capture.get(cv2.CAP_PROP_FPS) or 0.0)
        self.source_fps = fps if math.isfinite(fps) and 1.0 <= fps <= 240.0 else 0.0
        self._interval = 1.0 / (self.source_fps or 30.0)
        self._next_due = time.monotonic()

    def _open(self, want_width: int) -> Any:
        target, config = self.target, self.config
        where = target.describe()
        if target.kind is SourceKind.FILE and not os.path.isfile(target.location):
            raise DeviceError(NodeErrorCode.UNAVAILABLE, f"camera file {where} not found")
        if target.kind in (SourceKind.FILE, SourceKind.STREAM):
            params = [
                cv2.CAP_PROP_OPEN_TIMEOUT_MSEC,
                max(1, round(config.open_timeout_s * 1000)),
                cv2.CAP_PROP_READ_TIMEOUT_MSEC,
                max(1, round(config.read_timeout_s * 1000)),
            ]
            capture = cv2.VideoCapture(target.location, cv2.CAP_FFMPEG, params)
        elif target.kind is SourceKind.INDEX:
            capture = cv2.VideoCapture(int(target.location))
        else:
            capture = cv2.VideoCapture(target.location, cv2.CAP_V4L2)
        if not capture.isOpened():
            capture.release()
            raise DeviceError(NodeErrorCode.UNAVAILABLE, f"cannot open camera {where}")
        if target.kind in (SourceKind.DEVICE, SourceKind.INDEX):
            # Webcams open at 640x480 raw; ask for MJPEG at the wanted size (the driver
            # picks the closest mode it has; a refusal leaves the default, which is fine).
            capture.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter.fourcc(*"MJPG"))
            if want_width > 0:
                capture.set(cv2.CAP_PROP_FRAME_WIDTH, want_width)
                capture.set(cv2.CAP_PROP_FRAME_HEIGHT, round(want_width * 9 / 16))
            capture.set(cv2.CAP_PROP_READ_TIMEOUT_MSEC, round(config.read_timeout_s * 1000))
        return capture

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Release the device (idempotent)."""
        self._capture.release()

    def _gone(self, why: str) -> DeviceError:
        return DeviceError(NodeErrorCode.UNAVAILABLE, f"camera {self.target.describe()} {why}")

    def read(self, stop: threading.Event) -> np.ndarray[Any, Any]:
        """The next frame (BGR).

        Raises:
            CaptureStopped: ``stop`` was set.
            DeviceError: ``UNAVAILABLE`` when the camera delivers no frame within the read
                timeout or fails ``max_failed_reads`` times in a row (unplugged, stream ended).
        """
        config = self.config
        deadline = time.monotonic() + config.read_timeout_s
        failures = 0
        rewound = False
        while True:
            if not self.target.live:
                self._pace(stop)
            if stop.is_set():
                raise CaptureStopped
            ok, frame = self._capture.read()
            if ok and frame is not None and frame.size:
                return frame  # type: ignore[no-any-return]
            if not self.target.live and not rewound:
                rewound = True  # end of the file: play it again
                self._capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
                continue
            failures += 1
            if failures >= config.max_failed_reads:
                raise self._gone("stopped delivering frames (disconnected or stream ended)")
            if time.monotonic() >= deadline:
                raise self._gone(f"delivered no frame in {config.read_timeout_s:g} s")
            stop.wait(0.05)

    def _pace(self, stop: threading.Event) -> None:
        now = time.monotonic()
        if self._next_due - now > 0:
            stop.wait(self._next_due - now)
            now = time.monotonic()
        # Never build up more than a second of lag (slow consumer): restart the clock.
        self._next_due = max(self._next_due, now - 1.0) + self._interval

    def warm_up(self, delay_ms: int, stop: threading.Event) -> np.ndarray[Any, Any]:
        """Read frames for ``delay_ms`` (exposure settles, stale buffered frames drain),
        then return the next one."""
        end = time.monotonic() + delay_ms / 1000
        frame = self.read(stop)
        while time.monotonic() < end:
            frame = self.read(stop)
        return frame


def snap(
    target: CameraTarget,
    *,
    max_width: int,
    quality: float,
    delay_ms: int,
    config: CameraConfig,
    stop: threading.Event,
) -> Photo:
    """Take one photo: open, warm up for ``delay_ms`` (at least ``device_warmup_ms`` for a
    local camera), scale to ``max_width`` (aspect kept, never enlarged), and JPEG-encode
    within ``config.snap_max_base64``.

    Raises:
        DeviceError: ``UNAVAILABLE`` (camera cannot be opened or read),
            ``PAYLOAD_TOO_LARGE`` (cannot fit even when shrunk), or :class:`CaptureStopped`.
    """
    with FrameSource(target, config, want_width=max_width) as source:
        frame = source.warm_up(max(delay_ms, _device_warmup(target, config)), stop)
    frame = resize_to_width(frame, max_width)
    encoded = encode_jpeg_within(
        frame, quality=round(quality * 100), max_base64=config.snap_max_base64
    )
    text = base64.b64encode(encoded.data).decode("ascii")
    return Photo(text, encoded.width, encoded.height, encoded.quality, encoded.attempts)


def _device_warmup(target: CameraTarget, config: CameraConfig) -> int:
    local = target.kind in (SourceKind.DEVICE, SourceKind.INDEX)
    return config.device_warmup_ms if local else 0


def _too_large(size: int, config: CameraConfig, detail: str = "") -> DeviceError:
    return DeviceError(
        NodeErrorCode.PAYLOAD_TOO_LARGE,
        f"clip is {human_size(size)}{detail}, over the {human_size(config.clip_max_bytes)} "
        "cap. Reduce durationMs",
    )


@contextlib.contextmanager
def _temp_clip(config: CameraConfig) -> Iterator[Path]:
    """A temporary ``.mp4`` path, removed afterwards whatever happens."""
    fd, name = tempfile.mkstemp(prefix="openclaw-clip-", suffix=".mp4", dir=config.temp_dir)
    os.close(fd)
    path = Path(name)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def record_clip(
    target: CameraTarget, *, duration_ms: int, config: CameraConfig, stop: threading.Event
) -> Clip:
    """Record ``duration_ms`` of video (no audio) into an mp4 and return its bytes.

    The output runs at a constant frame rate (the source's, within 5..30 fps, else 15):
    each output slot takes the newest frame, so a source that is faster or slower than
    that still gives a clip of the right length. Frames wider than
    ``config.clip_max_width`` are scaled down. The temporary file is always deleted.

    Raises:
        DeviceError: ``UNAVAILABLE``, ``PAYLOAD_TOO_LARGE`` (over ``clip_max_bytes``; the
            recording stops as soon as the file passes the cap), or :class:`CaptureStopped`.
    """
    with _temp_clip(config) as path:
        with FrameSource(target, config, want_width=config.clip_max_width) as source:
            fps = min(30.0, max(5.0, source.source_fps)) if source.source_fps else 15.0
            first = source.warm_up(_device_warmup(target, config), stop)
            latest = resize_to_width(first, config.clip_max_width)
            height, width = latest.shape[:2]
            total = max(1, round(duration_ms / 1000 * fps))
            fourcc = cv2.VideoWriter.fourcc(*_CLIP_FOURCC)
            writer = cv2.VideoWriter(str(path), cv2.CAP_FFMPEG, fourcc, fps, (width, height))
            if not writer.isOpened():
                raise DeviceError(NodeErrorCode.UNAVAILABLE, "cannot write an mp4 clip here")
            try:
                written = _record(source, writer, latest, total, fps, path, config, stop)
            finally:
                writer.release()
        size = path.stat().st_size
        if size > config.clip_max_bytes:
            raise _too_large(size, config)
        data = path.read_bytes()
    text = base64.b64encode(data).decode("ascii")
    return Clip(text, size, round(written / fps * 1000), width, height, written, fps)


def _record(
    source: FrameSource,
    writer: Any,
    first: np.ndarray[Any, Any],
    total: int,
    fps: float,
    path: Path,
    config: CameraConfig,
    stop: threading.Event,
) -> int:
    """Fill ``total`` output slots in real time; returns the frames written."""
    height, width = first.shape[:2]
    latest = first
    written = 0
    start = time.monotonic()
    check_every = max(1, round(fps / 4))  # look at the file size 4 times a second
    next_size_check = check_every
    while True:
        due = min(total, math.floor((time.monotonic() - start) * fps) + 1)
        while written < due:
            writer.write(latest)
            written += 1
        if written >= total:
            return written
        if written >= next_size_check:
            next_size_check = written + check_every
            size = path.stat().st_size
            if size > config.clip_max_bytes:
                detail = f" after {written / fps:.1f} of {total / fps:.1f} s"
                raise _too_large(size, config, detail)
        frame = source.read(stop)
        if frame.shape[1] != width or frame.shape[0] != height:
            frame = cv2.resize(frame, (width, height), interpolation=cv2.INTER_AREA)
        latest = frame
