"""Screenshots of one screen (monitor) with mss, encoded with OpenCV.

mss reads the screen through X11 on Linux (XShm/XGetImage, so an X display or XWayland is
needed), GDI on Windows and CoreGraphics on macOS (which needs the Screen Recording
permission; without it macOS returns the desktop wallpaper only). On a Wayland session the
desktop portal's Screenshot interface is used when the session bus offers it
(:mod:`.portal_screenshot`: the whole desktop as one screen, index 0; the compositor may ask
the user the first time); without it, XWayland through ``DISPLAY`` as before (X windows only),
and a pure Wayland session is unavailable with the reason.

Everything here is blocking and meant for a worker thread; :class:`ScreenGrabber` is the async
face (bounded time, cached availability).
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.portal_bus import wayland_session
from openclaw_desktop.devices.portal_screenshot import portal_screenshot, screenshot_status

__all__ = [
    "MAX_BASE64",
    "WAYLAND_DISPLAY_NAME",
    "DisplayStatus",
    "ImageFormat",
    "ScreenGrabber",
    "Snapshot",
    "SnapshotRequest",
    "capture",
    "display_status",
    "screen_rects",
]

ImageFormat = Literal["png", "jpeg"]

#: Largest base64 payload returned, in characters (the camera commands' budget).
MAX_BASE64 = 5 * 1024 * 1024
_JPEG_STEPS = (60, 40, 25)
_SHRINK = 0.7
_MIN_WIDTH = 16
#: The display name of frames captured through the Screenshot portal (the whole desktop).
WAYLAND_DISPLAY_NAME = "wayland-portal"


@dataclass(frozen=True, slots=True)
class SnapshotRequest:
    """What ``screen.snapshot`` asked for (validated by the handler).

    Attributes:
        format: ``png`` or ``jpeg``.
        max_width: the image is scaled down (aspect kept) to at most this many pixels wide.
        quality: JPEG quality 1-100 (the starting point; lowered if the image is too big).
        screen_index: 0-based monitor index.
        include_pointer: draw the mouse pointer (X11 only; ignored elsewhere).
    """

    format: ImageFormat = "png"
    max_width: int = 1920
    quality: int = 80
    screen_index: int = 0
    include_pointer: bool = True


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An encoded screenshot."""

    format: ImageFormat
    width: int
    height: int
    base64: str
    #: The captured screen's rectangle in root-window pixels ``(left, top, width, height)``
    #: (what ``computer.act`` coordinates are mapped onto); None when not known.
    rect: tuple[int, int, int, int] | None = None
    #: The display it was captured from (None: ``$DISPLAY``; :data:`WAYLAND_DISPLAY_NAME`
    #: through the portal).
    display: str | None = None

    def to_payload(self) -> dict[str, Any]:
        """The ``screen.snapshot`` result: ``{format, width, height, base64}``."""
        return {
            "format": self.format,
            "width": self.width,
            "height": self.height,
            "base64": self.base64,
        }


@dataclass(frozen=True, slots=True)
class DisplayStatus:
    """Whether a screen can be captured here, and why not."""

    available: bool
    reason: str = ""
    screens: int = 0


def _is_x11() -> bool:
    return sys.platform not in ("darwin", "win32", "cygwin")


def _open(pointer: bool = False) -> Any:
    """An mss instance for this platform (the X display from ``DISPLAY`` on Linux; the
    pointer is drawn in only there, mss cannot elsewhere)."""
    import mss

    if _is_x11():
        display = os.environ.get("DISPLAY", "").strip()
        if not display:
            if os.environ.get("WAYLAND_DISPLAY", "").strip():
                raise DeviceError(
                    "UNAVAILABLE",
                    "Wayland without XWayland is not supported yet (DISPLAY is not set)",
                )
            raise DeviceError("UNAVAILABLE", "no display: DISPLAY is not set")
        return mss.MSS(display=display, with_cursor=pointer)
    return mss.MSS()


def _failure(exc: Exception) -> DeviceError:
    if isinstance(exc, DeviceError):
        return exc
    display = os.environ.get("DISPLAY", "") if _is_x11() else ""
    where = f" {display}" if display else ""
    return DeviceError("UNAVAILABLE", f"cannot open the display{where}: {exc}")


def display_status() -> DisplayStatus:
    """Open the display and count its screens (blocking). Never raises."""
    try:
        with _open() as sct:
            count = len(sct.monitors) - 1
    except Exception as exc:
        return DisplayStatus(False, _failure(exc).message)
    if count < 1:
        return DisplayStatus(False, "the display reports no screens")
    return DisplayStatus(True, screens=count)


def screen_rects() -> list[tuple[int, int, int, int]]:
    """Every screen's ``(left, top, width, height)`` in root-window pixels, in
    ``screenIndex`` order (blocking).

    Raises:
        DeviceError: ``UNAVAILABLE`` when the display cannot be opened.
    """
    try:
        with _open() as sct:
            return [(m["left"], m["top"], m["width"], m["height"]) for m in sct.monitors[1:]]
    except DeviceError:
        raise
    except Exception as exc:
        raise _failure(exc) from None


def _grab_with_rect(
    request: SnapshotRequest,
) -> tuple[np.ndarray[Any, np.dtype[np.uint8]], tuple[int, int, int, int]]:
    """The pixels of the requested screen as a BGR array, and the screen's rectangle."""
    try:
        sct = _open(request.include_pointer)
    except Exception as exc:
        raise _failure(exc) from None
    with sct:
        monitors = sct.monitors[1:]
        if request.screen_index >= len(monitors):
            count = len(monitors)
            verb = "is" if count == 1 else "are"
            raise DeviceError(
                "INVALID_REQUEST", f"no screen {request.screen_index}, there {verb} {count}"
            )
        monitor = monitors[request.screen_index]
        rect = (monitor["left"], monitor["top"], monitor["width"], monitor["height"])
        shot = sct.grab(monitor)
        width, height = shot.size
        pixels = np.frombuffer(shot.raw, dtype=np.uint8).reshape(height, width, 4)
        return np.ascontiguousarray(pixels[:, :, :3]), rect


def _encode(image: np.ndarray[Any, np.dtype[np.uint8]], fmt: ImageFormat, quality: int) -> bytes:
    import cv2

    if fmt == "jpeg":
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    else:
        ok, data = cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 6])
    if not ok:
        raise DeviceError("UNAVAILABLE", f"could not encode the screenshot as {fmt}")
    return bytes(data.tobytes())


def _scaled(
    image: np.ndarray[Any, np.dtype[np.uint8]], width: int
) -> np.ndarray[Any, np.dtype[np.uint8]]:
    import cv2

    height, src_width = image.shape[:2]
    if width >= src_width:
        return image
    new_height = max(1, round(height * width / src_width))
    resized = cv2.resize(image, (width, new_height), interpolation=cv2.INTER_AREA)
    return np.asarray(resized, dtype=np.uint8)


def _b64_len(size: int) -> int:
    return 4 * ((size + 2) // 3)


def encode_bounded(
    image: np.ndarray[Any, np.dtype[np.uint8]],
    request: SnapshotRequest,
    max_base64: int = MAX_BASE64,
) -> Snapshot:
    """Scale ``image`` to ``request.max_width`` and encode it under ``max_base64`` characters
    of base64: JPEG steps its quality down (60, 40, 25) before shrinking, PNG shrinks by 30 %
    a step.

    Raises:
        DeviceError: ``PAYLOAD_TOO_LARGE`` when even a tiny image does not fit.
    """
    width = min(request.max_width, image.shape[1])
    qualities = [request.quality]
    if request.format == "jpeg":
        qualities += [q for q in _JPEG_STEPS if q < request.quality]
    while True:
        scaled = _scaled(image, width)
        for quality in qualities:
            data = _encode(scaled, request.format, quality)
            if _b64_len(len(data)) <= max_base64:
                height, final_width = scaled.shape[:2]
                text = base64.b64encode(data).decode("ascii")
                return Snapshot(request.format, final_width, height, text)
        if width <= _MIN_WIDTH:
            raise DeviceError(
                "PAYLOAD_TOO_LARGE",
                f"the screenshot does not fit in {max_base64} base64 characters",
            )
        width = max(_MIN_WIDTH, int(width * _SHRINK))


def capture(request: SnapshotRequest, max_base64: int = MAX_BASE64) -> Snapshot:
    """Take and encode one screenshot (blocking).

    Raises:
        DeviceError: ``INVALID_REQUEST`` for a screen that does not exist, ``UNAVAILABLE``
            when the display cannot be read, ``PAYLOAD_TOO_LARGE`` when it cannot be made
            small enough.
    """
    try:
        image, rect = _grab_with_rect(request)
    except DeviceError:
        raise
    except Exception as exc:
        raise DeviceError("UNAVAILABLE", f"the screen capture failed: {exc}") from None
    snapshot = encode_bounded(image, request, max_base64)
    return dataclasses.replace(snapshot, rect=rect)


class ScreenGrabber:
    """Async screenshots: worker threads, bounded time, availability cached per display.

    Args:
        probe_ttl: seconds an availability answer is reused (per ``DISPLAY``).
        probe_timeout: seconds opening the display may take in the availability check.
        capture_timeout: seconds one capture (grab and encode) may take.
    """

    def __init__(
        self,
        *,
        probe_ttl: float = 5.0,
        probe_timeout: float = 3.0,
        capture_timeout: float = 20.0,
        max_base64: int = MAX_BASE64,
    ) -> None:
        self.probe_ttl = probe_ttl
        self.probe_timeout = probe_timeout
        self.capture_timeout = capture_timeout
        self.max_base64 = max_base64
        self._cache: dict[tuple[str, str], tuple[float, DisplayStatus, bool]] = {}

    async def probe(self) -> DisplayStatus:
        """Whether a screen can be captured now. Never raises."""
        return (await self._probe())[0]

    async def _probe(self) -> tuple[DisplayStatus, bool]:
        """The status and whether captures go through the Screenshot portal."""
        key = (os.environ.get("DISPLAY", ""), os.environ.get("WAYLAND_DISPLAY", ""))
        cached = self._cache.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1], cached[2]
        portal, status = False, None
        try:
            async with asyncio.timeout(self.probe_timeout):
                if wayland_session():
                    found = await screenshot_status()
                    portal = found.available
                    if portal:
                        status = DisplayStatus(True, screens=1)
                    elif not os.environ.get("DISPLAY", "").strip():
                        status = DisplayStatus(False, f"Wayland without XWayland: {found.reason}")
                if status is None:
                    status = await asyncio.to_thread(display_status)
        except TimeoutError:
            status = DisplayStatus(False, f"the display did not answer in {self.probe_timeout:g} s")
        self._cache[key] = (time.monotonic() + self.probe_ttl, status, portal)
        return status, portal

    async def _portal_snapshot(self, request: SnapshotRequest) -> Snapshot:
        if request.screen_index != 0:
            raise DeviceError(
                "INVALID_REQUEST",
                f"no screen {request.screen_index}, there is 1 (the portal captures the "
                "whole desktop)",
            )
        image = await portal_screenshot(self.capture_timeout)
        snapshot = await asyncio.to_thread(encode_bounded, image, request, self.max_base64)
        height, width = image.shape[:2]
        return dataclasses.replace(
            snapshot, rect=(0, 0, width, height), display=WAYLAND_DISPLAY_NAME
        )

    async def snapshot(self, request: SnapshotRequest) -> Snapshot:
        """Take one screenshot in a worker thread.

        Raises:
            DeviceError: see :func:`capture`; ``UNAVAILABLE`` when it takes longer than
                ``capture_timeout``.
        """
        if wayland_session() and (await self._probe())[1]:
            try:
                return await self._portal_snapshot(request)
            except DeviceError:
                self._cache.clear()
                raise
        try:
            async with asyncio.timeout(self.capture_timeout):
                return await asyncio.to_thread(capture, request, self.max_base64)
        except TimeoutError:
            self._cache.clear()
            raise DeviceError(
                "UNAVAILABLE", f"the screen capture did not finish in {self.capture_timeout:g} s"
            ) from None
