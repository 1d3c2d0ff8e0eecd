"""screen.snapshot params, encoding budget and display checks (no sockets, no processes)."""

from __future__ import annotations

import base64
import sys
from typing import Any

import cv2
import numpy as np
import pytest

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.screen import (
    SnapshotRequest,
    display_status,
    encode_bounded,
)
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.screen import parse_snapshot_request, screen_area
from openclaw_desktop.node.registry import CommandRegistry


def test_defaults() -> None:
    """No params (or null, or {}) is a 1920-wide PNG of screen 0 with the pointer."""
    expected = SnapshotRequest("png", 1920, 80, 0, True)
    assert parse_snapshot_request(None) == expected
    assert parse_snapshot_request({}) == expected
    assert parse_snapshot_request({"format": None, "maxWidth": None}) == expected


def test_valid_values() -> None:
    """jpg is jpeg, case does not matter, monitor is an alias of screenIndex."""
    request = parse_snapshot_request(
        {"format": "JPG", "maxWidth": 16, "quality": 1, "monitor": 2, "includePointer": False}
    )
    assert request == SnapshotRequest("jpeg", 16, 1, 2, False)
    request = parse_snapshot_request(
        {"format": "jpeg", "maxWidth": 7680.0, "quality": 100, "screenIndex": 32, "monitor": 32}
    )
    assert request == SnapshotRequest("jpeg", 7680, 100, 32, True)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([], "params must be an object"),
        ("png", "params must be an object"),
        ({"format": "gif"}, "format must be png or jpeg"),
        ({"format": 1}, "format must be png or jpeg"),
        ({"maxWidth": 15}, "maxWidth must be an integer from 16 to 7680"),
        ({"maxWidth": 7681}, "maxWidth must be an integer from 16 to 7680"),
        ({"maxWidth": -100}, "maxWidth must be an integer from 16 to 7680"),
        ({"maxWidth": 10**12}, "maxWidth must be an integer from 16 to 7680"),
        ({"maxWidth": "800"}, "maxWidth must be an integer from 16 to 7680"),
        ({"maxWidth": True}, "maxWidth must be an integer from 16 to 7680"),
        ({"maxWidth": 800.5}, "maxWidth must be an integer from 16 to 7680"),
        ({"quality": 0}, "quality must be an integer from 1 to 100"),
        ({"quality": 101}, "quality must be an integer from 1 to 100"),
        ({"screenIndex": -1}, "screenIndex must be an integer from 0 to 32"),
        ({"screenIndex": 33}, "screenIndex must be an integer from 0 to 32"),
        ({"screenIndex": "0"}, "screenIndex must be an integer from 0 to 32"),
        ({"monitor": -1}, "monitor must be an integer from 0 to 32"),
        ({"screenIndex": 0, "monitor": 1}, "screenIndex and monitor disagree"),
        ({"includePointer": "yes"}, "includePointer must be a boolean"),
    ],
)
def test_bad_params_are_invalid_request(params: Any, message: str) -> None:
    """Wrong types and out-of-range values are refused, not clamped."""
    with pytest.raises(DeviceError) as info:
        parse_snapshot_request(params)
    assert info.value.code == "INVALID_REQUEST"
    assert info.value.message.startswith(message)


def _noise(width: int, height: int) -> np.ndarray[Any, np.dtype[np.uint8]]:
    rng = np.random.default_rng(7)
    return rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)


def _decode(text: str) -> np.ndarray[Any, np.dtype[np.uint8]]:
    image = cv2.imdecode(np.frombuffer(base64.b64decode(text), np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return np.asarray(image, dtype=np.uint8)


def test_scaling_keeps_the_aspect_and_never_enlarges() -> None:
    """maxWidth scales down keeping the aspect; a larger maxWidth leaves the size alone."""
    image = np.full((300, 400, 3), (10, 20, 30), dtype=np.uint8)
    small = encode_bounded(image, SnapshotRequest("png", max_width=100))
    assert (small.width, small.height) == (100, 75)
    assert _decode(small.base64).shape == (75, 100, 3)
    same = encode_bounded(image, SnapshotRequest("png", max_width=7680))
    assert (same.width, same.height) == (400, 300)
    assert (_decode(same.base64)[0, 0] == (10, 20, 30)).all()


def test_formats_are_real_png_and_jpeg() -> None:
    """The bytes are what the format says."""
    image = np.zeros((20, 30, 3), dtype=np.uint8)
    png = base64.b64decode(encode_bounded(image, SnapshotRequest("png")).base64)
    jpeg = base64.b64decode(encode_bounded(image, SnapshotRequest("jpeg")).base64)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert jpeg.startswith(b"\xff\xd8\xff")


@pytest.mark.parametrize("fmt", ["png", "jpeg"])
def test_payload_is_kept_under_the_budget(fmt: str) -> None:
    """A noisy screen larger than the budget comes back smaller, within the budget."""
    image = _noise(800, 600)
    request = SnapshotRequest("png" if fmt == "png" else "jpeg", quality=95)
    unbounded = encode_bounded(image, request)
    budget = len(unbounded.base64) // 3
    bounded = encode_bounded(image, request, max_base64=budget)
    assert len(bounded.base64) <= budget
    assert bounded.width <= 800
    assert _decode(bounded.base64).shape == (bounded.height, bounded.width, 3)
    if fmt == "png":
        assert bounded.width < 800  # PNG can only shrink


def test_jpeg_lowers_quality_before_shrinking() -> None:
    """A budget that quality 25 meets keeps the full width."""
    image = _noise(400, 300)
    low = encode_bounded(image, SnapshotRequest("jpeg", quality=25))
    bounded = encode_bounded(image, SnapshotRequest("jpeg", quality=95), len(low.base64))
    assert (bounded.width, bounded.height) == (400, 300)


def test_impossible_budget_is_payload_too_large() -> None:
    """When even the smallest image does not fit, the error says so."""
    with pytest.raises(DeviceError) as info:
        encode_bounded(_noise(200, 100), SnapshotRequest("png"), max_base64=10)
    assert info.value.code == "PAYLOAD_TOO_LARGE"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the DISPLAY rules are X11 ones")
def test_display_status_without_display(monkeypatch: pytest.MonkeyPatch) -> None:
    """No DISPLAY: unavailable, and Wayland-only sessions are named as such."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    status = display_status()
    assert (status.available, status.reason) == (False, "no display: DISPLAY is not set")
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-0")
    status = display_status()
    assert status.available is False
    assert status.reason.startswith("Wayland without XWayland is not supported yet")


async def test_screen_is_off_by_default_and_says_how_to_enable() -> None:
    """The spec gates on the screen setting; off gives NOT_AUTHORIZED with the hint."""
    area = screen_area(NodeContext())
    (spec,) = area.specs
    assert (spec.name, spec.capability, spec.setting, spec.permission) == (
        "screen.snapshot",
        "screen",
        "screen",
        "screenRecording",
    )
    assert spec.needs_presence is True
    toggles = NodeContext().settings().toggles()
    assert toggles["screen"] is False
    dispatcher = InvokeDispatcher(CommandRegistry(area.specs), area.handlers, lambda: toggles)
    result = await dispatcher.dispatch("screen.snapshot", {})
    assert result.error_message == "NOT_AUTHORIZED: enable Screen in Settings"
