"""screen.snapshot against a real X server (Xvfb) painted with known colours."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from openclaw_desktop.devices.screen import ScreenGrabber
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.screen import screen_area
from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.node.results import InvokeResult
from tests.helpers.desktop_session import (
    XPainter,
    XServer,
    xvfb_fixture,  # noqa: F401 - provides the x_server fixture
)

RED = (200, 30, 40)
GREEN = (10, 220, 30)


@pytest.fixture
def painter(x_server: XServer) -> Iterator[XPainter]:
    """The 640x480 screen: red root, a green window over the right half."""
    with XPainter(x_server.display) as paint:
        paint.fill_root(RED)
        paint.add_window(320, 0, 320, 480, GREEN)
        yield paint


class Rig:
    """A dispatcher over the screen area, with the capture activity recorded."""

    def __init__(self, enabled: bool = True, grabber: ScreenGrabber | None = None) -> None:
        self.ctx = NodeContext()
        self.events: list[tuple[str, str, bool]] = []
        self.ctx.activity.listeners.append(lambda *event: self.events.append(event))
        area = screen_area(self.ctx, grabber or ScreenGrabber())
        self.dispatcher = InvokeDispatcher(
            CommandRegistry(area.specs), area.handlers, lambda: {"screen": enabled}
        )

    async def snap(self, params: Any = None) -> InvokeResult:
        """One screen.snapshot."""
        return await self.dispatcher.dispatch("screen.snapshot", params)


def decode(payload: dict[str, Any]) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """The payload's image as BGR pixels, checked against its width and height."""
    data = base64.b64decode(payload["base64"])
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    assert image.shape == (payload["height"], payload["width"], 3)
    return np.asarray(image, dtype=np.uint8)


def bgr(rgb: tuple[int, int, int]) -> list[int]:
    """An RGB colour in OpenCV's channel order."""
    return [rgb[2], rgb[1], rgb[0]]


@pytest.mark.usefixtures("painter")
async def test_png_snapshot_has_the_painted_pixels() -> None:
    """PNG is lossless: exact size and exact colours on both halves."""
    rig = Rig()
    result = await rig.snap({"includePointer": False})
    assert result.ok, result.error_message
    payload = result.payload
    assert set(payload) == {"format", "width", "height", "base64"}
    assert (payload["format"], payload["width"], payload["height"]) == ("png", 640, 480)
    assert base64.b64decode(payload["base64"]).startswith(b"\x89PNG")
    image = decode(payload)
    assert (image[:, :320] == bgr(RED)).all()
    assert (image[:, 320:] == bgr(GREEN)).all()
    assert rig.events == [
        ("screen", "screen.snapshot", True),
        ("screen", "screen.snapshot", False),
    ]


@pytest.mark.usefixtures("painter")
@pytest.mark.parametrize("fmt", ["jpeg", "jpg"])
async def test_jpeg_snapshot(fmt: str) -> None:
    """JPEG (jpg is an alias): right format, colours within compression error."""
    result = await Rig().snap({"format": fmt, "quality": 90, "includePointer": False})
    assert result.ok, result.error_message
    assert result.payload["format"] == "jpeg"
    assert base64.b64decode(result.payload["base64"]).startswith(b"\xff\xd8\xff")
    image = decode(result.payload).astype(int)
    assert np.abs(image[100, 100] - bgr(RED)).max() <= 12
    assert np.abs(image[100, 500] - bgr(GREEN)).max() <= 12


@pytest.mark.usefixtures("painter")
async def test_max_width_scales_keeping_the_aspect() -> None:
    """maxWidth 320 of a 640x480 screen is 320x240, halves still in place."""
    result = await Rig().snap({"maxWidth": 320, "includePointer": False})
    assert (result.payload["width"], result.payload["height"]) == (320, 240)
    image = decode(result.payload)
    assert (image[120, 80] == bgr(RED)).all()
    assert (image[120, 240] == bgr(GREEN)).all()
    bigger = await Rig().snap({"maxWidth": 7680})
    assert (bigger.payload["width"], bigger.payload["height"]) == (640, 480)


@pytest.mark.usefixtures("painter")
async def test_pointer_is_drawn_only_when_asked() -> None:
    """Xvfb's pointer sits mid-screen: drawn by default, absent with includePointer false."""
    with_pointer = decode((await Rig().snap()).payload)
    without = decode((await Rig().snap({"includePointer": False})).payload)
    centre = (slice(200, 280), slice(280, 360))
    assert (with_pointer[centre] != without[centre]).any()
    assert (with_pointer[:100] == without[:100]).all()


async def test_screen_index_selects_a_monitor(painter: XPainter) -> None:
    """Two RandR monitors: index 1 is the right one; index 2 does not exist."""
    painter.set_monitors([(0, 0, 320, 480), (320, 0, 320, 480)])
    rig = Rig()
    left = await rig.snap({"screenIndex": 0, "includePointer": False})
    right = await rig.snap({"monitor": 1, "includePointer": False})
    assert (right.payload["width"], right.payload["height"]) == (320, 480)
    assert (decode(left.payload) == bgr(RED)).all()
    assert (decode(right.payload) == bgr(GREEN)).all()
    missing = await rig.snap({"screenIndex": 2})
    assert missing.error_message == "INVALID_REQUEST: no screen 2, there are 2"


@pytest.mark.usefixtures("painter")
async def test_unknown_screen_and_bad_params() -> None:
    """A screen past the last one, and malformed params, are INVALID_REQUEST."""
    rig = Rig()
    assert (await rig.snap({"screenIndex": 5})).error_message == (
        "INVALID_REQUEST: no screen 5, there is 1"
    )
    for params in ({"format": "gif"}, {"maxWidth": 8}, {"quality": 0}, [1]):
        result = await rig.snap(params)
        assert result.error_code == "INVALID_REQUEST", params


@pytest.mark.usefixtures("painter")
async def test_disabled_screen_never_captures() -> None:
    """Off: NOT_AUTHORIZED with the hint, and the capture indicator never lights."""
    rig = Rig(enabled=False)
    result = await rig.snap({})
    assert result.error_message == "NOT_AUTHORIZED: enable Screen in Settings"
    assert rig.events == []


@pytest.mark.usefixtures("painter")
async def test_payload_budget_shrinks_the_image() -> None:
    """A tiny budget gives a smaller image that still decodes and fits."""
    result = await Rig(grabber=ScreenGrabber(max_base64=600)).snap({"includePointer": False})
    assert result.ok, result.error_message
    assert len(result.payload["base64"]) <= 600
    assert result.payload["width"] < 640
    assert (decode(result.payload)[2, 2] == bgr(RED)).all()


async def test_probe_sees_the_display(x_server: XServer) -> None:
    """With Xvfb running the probe says available and counts one screen."""
    status = await ScreenGrabber().probe()
    assert (status.available, status.screens) == (True, 1), status.reason
    assert x_server.display.startswith(":")


@pytest.fixture
def dead_display(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """DISPLAY set to a display number no X server serves."""
    number = 4000 + time.monotonic_ns() % 1000
    while Path(f"/tmp/.X11-unix/X{number}").exists():
        number += 1
    monkeypatch.setenv("DISPLAY", f":{number}")
    monkeypatch.setenv("XAUTHORITY", str(tmp_path / "none"))
    return f":{number}"


async def test_missing_display_is_unavailable(dead_display: str) -> None:
    """A DISPLAY nobody serves: the probe and the dispatcher answer UNAVAILABLE, quickly."""
    started = time.monotonic()
    status = await ScreenGrabber().probe()
    assert time.monotonic() - started < 5.0
    assert status.available is False
    assert status.reason.startswith(f"cannot open the display {dead_display}: ")
    result = await Rig().snap({})
    assert result.error_message == f"UNAVAILABLE: {status.reason}"
