"""Scan a QR code with the camera (a setup code shown by another gateway or phone).

Frames are read with :class:`~openclaw_desktop.devices.camera.FrameSource` in the caller's
worker thread and decoded with OpenCV's QR detector; the first payload that ``accept``
takes is returned. Bounded by ``timeout_s`` and stoppable at any frame.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import cv2

from openclaw_desktop.devices.camera import CameraConfig, CaptureStopped, FrameSource
from openclaw_desktop.devices.camera_sources import CameraTarget
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["ScanResult", "scan_qr"]

#: Frames wider than this are scaled down before detection (speed; QR codes stay legible).
DETECT_WIDTH = 960


class ScanResult:
    """What a scan found and how long it looked."""

    def __init__(self, text: str, frames: int, seconds: float) -> None:
        self.text = text
        self.frames = frames
        self.seconds = seconds

    def __repr__(self) -> str:  # the payload may hold a bootstrap token: never shown
        return f"ScanResult(<{len(self.text)} chars>, frames={self.frames})"


def scan_qr(
    target: CameraTarget,
    stop: threading.Event,
    *,
    accept: Callable[[str], bool] = bool,
    timeout_s: float = 60.0,
    config: CameraConfig | None = None,
) -> ScanResult:
    """Read frames until a QR code whose text ``accept`` takes is seen (blocking: run it in
    a worker thread).

    Raises:
        CaptureStopped: ``stop`` was set (the user cancelled).
        DeviceError: ``UNAVAILABLE`` when the camera cannot be opened or stops, or
            ``TIMEOUT`` when no accepted code was seen within ``timeout_s``.
    """
    detector = cv2.QRCodeDetector()
    started = time.monotonic()
    frames = 0
    with FrameSource(target, config or CameraConfig()) as source:
        while True:
            if stop.is_set():
                raise CaptureStopped
            if time.monotonic() - started > timeout_s:
                raise DeviceError(
                    NodeErrorCode.TIMEOUT,
                    f"no setup code QR seen in {timeout_s:g} s: hold it steady in front of "
                    f"the camera ({target.describe()})",
                )
            frame = source.read(stop)
            frames += 1
            height, width = frame.shape[:2]
            if width > DETECT_WIDTH:
                scale = DETECT_WIDTH / width
                frame = cv2.resize(frame, (DETECT_WIDTH, round(height * scale)))
            grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            try:
                text, _points, _ = detector.detectAndDecode(grey)
            except cv2.error:
                continue  # a frame the detector chokes on: try the next one
            if text and accept(text):
                return ScanResult(text, frames, time.monotonic() - started)
