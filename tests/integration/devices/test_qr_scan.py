"""Scanning a setup-code QR with the camera: a video file plays the role of the webcam
(the camera code path is the same OpenCV capture); the QR is drawn by segno into frames
after a few blank ones, slightly rotated, so detection works on a real picture."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import segno

from openclaw_desktop.devices.camera import CameraConfig, CaptureStopped
from openclaw_desktop.devices.camera_sources import parse_source
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.qr_scan import scan_qr
from openclaw_desktop.discovery import decode_setup_code, encode_setup_code
from tests.helpers.video_sources import pattern_frame, write_video

CODE = encode_setup_code({"url": "ws://192.168.1.20:18789", "bootstrapToken": "b" * 43})


def qr_frame(text: str, width: int, height: int) -> np.ndarray[Any, Any]:
    """A grey frame with the QR of ``text`` in the middle, rotated by 5 degrees."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=6, border=4)
    qr = cv2.imdecode(np.frombuffer(buffer.getvalue(), np.uint8), cv2.IMREAD_COLOR)
    assert qr is not None
    frame = np.full((height, width, 3), 170, np.uint8)
    top, left = (height - qr.shape[0]) // 2, (width - qr.shape[1]) // 2
    frame[top : top + qr.shape[0], left : left + qr.shape[1]] = qr
    turn = cv2.getRotationMatrix2D((width / 2, height / 2), 5, 1.0)
    return cv2.warpAffine(frame, turn, (width, height), borderValue=(170, 170, 170))


def video(path: Path, text: str | None, blank: int = 5) -> Path:
    """``blank`` pattern frames, then frames showing the QR of ``text`` (if any)."""
    qr = qr_frame(text, 640, 480) if text else None

    def make(index: int, width: int, height: int) -> np.ndarray[Any, Any]:
        if qr is None or index < blank:
            return pattern_frame(index, width, height)
        return qr

    return write_video(path, width=640, height=480, frames=20, make=make)


def is_setup_code(text: str) -> bool:
    """What the connect screen accepts."""
    try:
        decode_setup_code(text)
    except ValueError:
        return False
    return True


def test_a_setup_code_qr_is_read_from_the_camera(tmp_path: Path) -> None:
    """The decoded text is the setup code, found after the blank frames."""
    source = parse_source(str(video(tmp_path / "qr.mp4", CODE)))
    result = scan_qr(source, threading.Event(), accept=is_setup_code, timeout_s=20)
    assert result.text == CODE
    assert result.frames > 5
    assert decode_setup_code(result.text).candidate_urls[0] == "ws://192.168.1.20:18789"
    assert CODE not in repr(result), "the token never reaches a log line"


def test_other_qr_codes_are_ignored_until_timeout(tmp_path: Path) -> None:
    """A QR that is not a setup code is skipped; the scan ends with TIMEOUT, bounded."""
    source = parse_source(str(video(tmp_path / "other.mp4", "https://example.org/menu")))
    with pytest.raises(DeviceError) as caught:
        scan_qr(source, threading.Event(), accept=is_setup_code, timeout_s=1.5)
    assert caught.value.code == "TIMEOUT"
    assert "no setup code QR seen" in str(caught.value)


def test_cancel_stops_the_scan(tmp_path: Path) -> None:
    """Setting the stop event ends the scan at the next frame."""
    source = parse_source(str(video(tmp_path / "blank.mp4", None)))
    stop = threading.Event()
    threading.Timer(0.5, stop.set).start()
    with pytest.raises(CaptureStopped):
        scan_qr(source, stop, timeout_s=30)


def test_a_missing_camera_is_unavailable(tmp_path: Path) -> None:
    """No such camera: UNAVAILABLE at once, not a hang."""
    source = parse_source(str(tmp_path / "nope.mp4"))
    with pytest.raises(DeviceError) as caught:
        scan_qr(source, threading.Event(), timeout_s=5, config=CameraConfig())
    assert caught.value.code == "UNAVAILABLE"
