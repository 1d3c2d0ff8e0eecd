"""Screenshots on Wayland through the desktop portal's ``org.freedesktop.portal.Screenshot``.

``Screenshot(parent_window, {handle_token, interactive: false, modal: false})`` answers
through a Request (see :mod:`.portal_bus`) with ``results["uri"]``, a ``file://`` URI of the
image the portal wrote. We read it and delete the file at once (the portal leaves it in the
user's pictures folder otherwise). The picture is the whole desktop; the compositor may ask
the user the first time (code 1 when the user says no).

Everything is bounded in time; the image is decoded with OpenCV into the BGR array the
encoder of :mod:`.screen` takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from openclaw_desktop.devices.dbus_calls import BusError, connected
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.portal_bus import (
    CANCELLED,
    SUCCESS,
    interface_version,
    portal_request,
    session_address,
)

__all__ = ["SCREENSHOT", "PortalStatus", "portal_screenshot", "screenshot_status"]

SCREENSHOT = "org.freedesktop.portal.Screenshot"


@dataclass(frozen=True, slots=True)
class PortalStatus:
    """Whether a portal interface is offered here, its version, and why not."""

    available: bool
    reason: str = ""
    version: int = 0


async def screenshot_status(address: str | None = None) -> PortalStatus:
    """Whether the session bus has a portal with the Screenshot interface. Never raises."""
    address = address or session_address()
    if address is None:
        return PortalStatus(False, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    try:
        async with connected(address) as bus:
            version = await interface_version(bus, SCREENSHOT)
    except Exception as exc:
        return PortalStatus(False, f"the session bus cannot be reached: {exc}")
    if version is None:
        return PortalStatus(
            False, f"the desktop portal on the session bus does not offer {SCREENSHOT}"
        )
    return PortalStatus(True, version=version)


def _file_of(uri: Any) -> Path:
    if not isinstance(uri, str) or not uri.startswith("file://"):
        raise DeviceError("UNAVAILABLE", "the screenshot portal answered without a file URI")
    return Path(unquote(urlparse(uri).path))


def _read_and_delete(path: Path) -> np.ndarray[Any, np.dtype[np.uint8]]:
    import cv2

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DeviceError("UNAVAILABLE", f"the portal's screenshot cannot be read: {exc}") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
    image = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise DeviceError("UNAVAILABLE", "the portal's screenshot is not a readable image")
    return np.asarray(image, dtype=np.uint8)


async def portal_screenshot(
    timeout: float, address: str | None = None
) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """The whole desktop as a BGR array, through the Screenshot portal.

    Raises:
        DeviceError: ``UNAVAILABLE`` when there is no portal, the user refused (the reason
            says so), the portal failed, or no answer came within ``timeout`` s.
    """
    from dbus_fast import Variant

    address = address or session_address()
    if address is None:
        raise DeviceError("UNAVAILABLE", "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    options = {"interactive": Variant("b", False), "modal": Variant("b", False)}
    try:
        async with connected(address) as bus:
            response = await portal_request(
                bus, SCREENSHOT, "Screenshot", "sa{sv}", ["", options], timeout
            )
    except BusError as exc:
        raise DeviceError("UNAVAILABLE", f"the screenshot portal refused the call: {exc}") from None
    except TimeoutError:
        raise DeviceError(
            "UNAVAILABLE", f"the screenshot portal did not answer in {timeout:g} s"
        ) from None
    except (OSError, ValueError) as exc:  # the bus cannot be reached, bad answer
        raise DeviceError("UNAVAILABLE", f"the session bus cannot be reached: {exc}") from None
    if response.code == CANCELLED:
        raise DeviceError("UNAVAILABLE", "the user refused the screenshot in the desktop's dialog")
    if response.code != SUCCESS:
        raise DeviceError("UNAVAILABLE", f"the screenshot portal failed (response {response.code})")
    path = _file_of(response.results.get("uri"))
    return await asyncio.to_thread(_read_and_delete, path)
