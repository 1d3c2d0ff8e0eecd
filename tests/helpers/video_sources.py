"""Camera sources for tests: video files written with OpenCV, and a loopback MJPEG-over-HTTP
server that serves ``multipart/x-mixed-replace`` like an IP camera does (the FFmpeg backend
of ``cv2.VideoCapture`` reads it from an ``http://`` URL).
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

__all__ = [
    "Frame",
    "MjpegServer",
    "level_of",
    "noise_frame",
    "pattern_frame",
    "write_noise_video",
    "write_video",
]

Frame = np.ndarray[Any, Any]


def pattern_frame(index: int, width: int, height: int) -> Frame:
    """A smooth test picture whose overall brightness encodes ``index`` (4 levels per
    frame, so :func:`level_of` can tell roughly which frame a capture shows)."""
    xs = np.linspace(0, 60, width, dtype=np.float32)
    ys = np.linspace(0, 60, height, dtype=np.float32)
    base = (ys[:, None] + xs[None, :] + (4 * index) % 130).astype(np.uint8)
    frame = np.dstack([base, base, base])
    cv2.rectangle(frame, (width // 8, height // 4), (width // 3, height // 2), (0, 0, 200), -1)
    return frame


def level_of(frame: Frame) -> float:
    """The brightness of the bottom-right quarter (away from the red box), for
    :func:`pattern_frame` about ``45 + 4 * index``."""
    height, width = frame.shape[:2]
    return float(frame[height // 2 :, width // 2 :].mean())


def noise_frame(width: int, height: int, seed: int = 0) -> Frame:
    """Colour noise: the worst case for JPEG and MPEG-4 compression."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (height, width, 3), dtype=np.uint8)


def write_video(
    path: Path,
    *,
    width: int,
    height: int,
    fps: float = 30.0,
    frames: int = 30,
    make: Callable[[int, int, int], Frame] = pattern_frame,
) -> Path:
    """An mp4 (MPEG-4 Part 2) of ``frames`` frames of ``make(index, width, height)``."""
    writer = cv2.VideoWriter(
        str(path), cv2.CAP_FFMPEG, cv2.VideoWriter.fourcc(*"mp4v"), fps, (width, height)
    )
    if not writer.isOpened():
        raise RuntimeError(f"OpenCV cannot write {path}")
    try:
        for index in range(frames):
            writer.write(make(index, width, height))
    finally:
        writer.release()
    return path


def write_noise_video(path: Path, *, width: int, height: int, frames: int = 2) -> Path:
    """A Motion-JPEG ``.avi`` of noise at JPEG quality 100: frames that stay incompressible
    after decoding (an mp4 would smooth the noise away)."""
    writer = cv2.VideoWriter(
        str(path),
        cv2.CAP_OPENCV_MJPEG,
        cv2.VideoWriter.fourcc(*"MJPG"),
        30.0,
        (width, height),
        [cv2.VIDEOWRITER_PROP_QUALITY, 100],
    )
    if not writer.isOpened():
        raise RuntimeError(f"OpenCV cannot write {path}")
    try:
        for index in range(frames):
            writer.write(noise_frame(width, height, seed=index))
    finally:
        writer.release()
    return path


class _StreamHandler(http.server.BaseHTTPRequestHandler):
    server: _StreamServer
    protocol_version = "HTTP/1.0"
    timeout = 5  # a client that stops reading cannot block a sender for long

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        owner = self.server.owner
        if self.path.split("?")[0] != owner.path:
            self.send_error(404)
            return
        with owner.lock:
            owner.connections += 1
        self.send_response(200)
        self.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={owner.BOUNDARY}")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        try:
            owner.stream_to(self.wfile)
        except OSError:
            pass  # the client went away
        finally:
            with owner.lock:
                owner.disconnects += 1


class _StreamServer(http.server.ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: MjpegServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _StreamHandler)


class MjpegServer:
    """An MJPEG camera on ``http://127.0.0.1:<port>/stream.mjpg``.

    Each connection gets the frames in a loop at ``fps``. ``close_after`` frames ends every
    connection (a camera that goes away); ``stall_after`` frames keeps the connection open
    but sends nothing more (a hung camera). :meth:`close` stops everything and joins the
    server threads.
    """

    BOUNDARY = "openclawframe"

    def __init__(
        self,
        frames: Sequence[Frame],
        *,
        fps: float = 30.0,
        close_after: int | None = None,
        stall_after: int | None = None,
        path: str = "/stream.mjpg",
    ) -> None:
        self.jpegs = [self._encode(frame) for frame in frames]
        self.fps = fps
        self.close_after = close_after
        self.stall_after = stall_after
        self.path = path
        self.lock = threading.Lock()
        self.connections = 0
        self.disconnects = 0
        self.frames_sent = 0
        self._stop = threading.Event()
        self._server = _StreamServer(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @staticmethod
    def _encode(frame: Frame) -> bytes:
        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])
        if not ok:
            raise RuntimeError("cannot encode a test frame")
        return bytes(buf.tobytes())

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The stream URL."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    def stream_to(self, out: Any) -> None:
        """Write multipart JPEG parts to one client until told to stop."""
        interval = 1.0 / self.fps
        sent = 0
        while not self._stop.is_set():
            if self.close_after is not None and sent >= self.close_after:
                return
            if self.stall_after is not None and sent >= self.stall_after:
                self._stop.wait()
                return
            jpeg = self.jpegs[sent % len(self.jpegs)]
            head = (
                f"--{self.BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                f"Content-Length: {len(jpeg)}\r\n\r\n"
            ).encode("ascii")
            out.write(head + jpeg + b"\r\n")
            out.flush()
            sent += 1
            with self.lock:
                self.frames_sent += 1
            self._stop.wait(interval)

    def start(self) -> MjpegServer:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """End every stream, stop serving, join the threads (bounded)."""
        self._stop.set()
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join(10)
        self._server.server_close()

    def __enter__(self) -> MjpegServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
