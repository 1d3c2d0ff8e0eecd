"""Pointer and keyboard input on Wayland through the desktop portal's
``org.freedesktop.portal.RemoteDesktop`` (with ``org.freedesktop.portal.ScreenCast`` for the
streams absolute pointer motion is relative to).

A session: ``CreateSession`` -> ``SelectDevices`` (keyboard | pointer; ``persist_mode`` 2 and
the stored ``restore_token`` when RemoteDesktop is version 2 or later) -> ScreenCast
``SelectSources`` on the same session (monitors) -> ``Start`` (the compositor asks the user
once; the results carry the granted ``devices``, the ``streams`` with their PipeWire node ids,
positions and sizes, and a new ``restore_token``, stored for the next session with mode 0600
and never logged). Input then goes through ``NotifyPointerMotionAbsolute``,
``NotifyPointerButton`` (evdev codes), ``NotifyPointerAxisDiscrete`` and
``NotifyKeyboardKeysym``. Every press is recorded so everything held can be released, and the
session is closed (``org.freedesktop.portal.Session.Close``) when the execution ends.

Coordinates come in as pixels of the portal's whole-desktop screenshot; they are scaled onto
the streams' logical layout and sent relative to the stream that contains them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_desktop.devices.dbus_calls import BusError, call
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.portal_bus import (
    BUS_NAME,
    CANCELLED,
    OBJECT_PATH,
    SUCCESS,
    get_property,
    interface_version,
    portal_request,
    session_address,
)
from openclaw_desktop.devices.portal_screenshot import PortalStatus

if TYPE_CHECKING:
    from dbus_fast.aio import MessageBus

__all__ = [
    "REMOTE_DESKTOP",
    "SCREEN_CAST",
    "PortalDriver",
    "PortalInput",
    "Stream",
    "remote_desktop_status",
]

log = logging.getLogger("openclaw.devices")

REMOTE_DESKTOP = "org.freedesktop.portal.RemoteDesktop"
SCREEN_CAST = "org.freedesktop.portal.ScreenCast"
SESSION = "org.freedesktop.portal.Session"
KEYBOARD, POINTER = 1, 2
MONITOR = 1
PERSIST_UNTIL_REVOKED = 2
#: X button numbers (what :mod:`.x11_input` uses) -> evdev codes BTN_LEFT/RIGHT/MIDDLE.
EVDEV_BUTTONS = {1: 0x110, 3: 0x111, 2: 0x112}
#: Wheel direction -> (axis: 0 vertical, 1 horizontal; sign of the steps).
AXES = {"up": (0, -1), "down": (0, 1), "left": (1, -1), "right": (1, 1)}
UNAVAILABLE = "COMPUTER_DRIVER_UNAVAILABLE"


async def remote_desktop_status(address: str | None = None) -> PortalStatus:
    """Whether the portal on the session bus can give us a keyboard and a pointer
    (RemoteDesktop with both in ``AvailableDeviceTypes``, and ScreenCast for the streams).
    Never raises; the reason names what is missing."""
    address = address or session_address()
    if address is None:
        return PortalStatus(False, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
    from openclaw_desktop.devices.dbus_calls import connected

    try:
        async with connected(address) as bus:
            version = await interface_version(bus, REMOTE_DESKTOP)
            types = await get_property(bus, REMOTE_DESKTOP, "AvailableDeviceTypes")
            cast = await interface_version(bus, SCREEN_CAST)
    except Exception as exc:
        return PortalStatus(False, f"the session bus cannot be reached: {exc}")
    if version is None:
        return PortalStatus(
            False,
            f"this is a Wayland session and the desktop portal on the session bus does not "
            f"offer {REMOTE_DESKTOP}, so input cannot be injected",
        )
    if not isinstance(types, int) or (types & (KEYBOARD | POINTER)) != KEYBOARD | POINTER:
        return PortalStatus(
            False, f"the desktop portal's {REMOTE_DESKTOP} offers no keyboard and pointer"
        )
    if cast is None:
        return PortalStatus(
            False,
            f"the desktop portal on the session bus does not offer {SCREEN_CAST} "
            "(needed to aim the pointer at a screen)",
        )
    return PortalStatus(True, version=version)


@dataclass(frozen=True, slots=True)
class Stream:
    """One granted stream: its PipeWire node id and logical rectangle (None when the portal
    did not say)."""

    node: int
    position: tuple[int, int] | None
    size: tuple[int, int] | None


def _streams(raw: Any) -> list[Stream]:
    streams: list[Stream] = []
    for item in raw if isinstance(raw, list) else []:
        node, props = item[0], item[1] if len(item) > 1 else {}
        pos, size = props.get("position"), props.get("size")
        streams.append(
            Stream(
                int(node),
                (int(pos[0]), int(pos[1])) if pos else None,
                (int(size[0]), int(size[1])) if size else None,
            )
        )
    return streams


class PortalInput:
    """One RemoteDesktop session, started on :meth:`open` and ended on :meth:`close`.

    Args:
        token_path: where the ``restore_token`` is kept between sessions (None: not kept).
        grant_timeout: seconds the user has to answer the compositor's dialog.
        address: the session bus (None: ``DBUS_SESSION_BUS_ADDRESS``).
    """

    def __init__(
        self,
        token_path: Path | None = None,
        grant_timeout: float = 120.0,
        address: str | None = None,
        call_timeout: float = 5.0,
    ) -> None:
        self.token_path = token_path
        self.grant_timeout = grant_timeout
        self.call_timeout = call_timeout
        self.address = address
        self.session: str | None = None
        self.streams: list[Stream] = []
        self.held_keys: list[int] = []
        self.held_buttons: list[int] = []
        #: The pixel size of the screenshot coordinates refer to (set per action).
        self.space: tuple[int, int] | None = None
        self._bus: MessageBus | None = None

    # ------------------------------------------------------------------ session

    async def open(self) -> None:
        """Connect and start the session (the user may be asked once).

        Raises:
            DeviceError: ``COMPUTER_DRIVER_UNAVAILABLE`` naming why (no portal interface,
                the user refused, no answer in time, devices not granted).
        """
        from dbus_fast import Variant
        from dbus_fast.aio import MessageBus

        address = self.address or session_address()
        if address is None:
            raise DeviceError(UNAVAILABLE, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        try:
            self._bus = await MessageBus(bus_address=address).connect()
        except Exception as exc:
            raise DeviceError(UNAVAILABLE, f"the session bus cannot be reached: {exc}") from None
        try:
            version = await interface_version(self._bus, REMOTE_DESKTOP) or 0
            created = await self._request(
                REMOTE_DESKTOP,
                "CreateSession",
                "a{sv}",
                [{"session_handle_token": Variant("s", f"openclaw_{secrets.token_hex(8)}")}],
            )
            self.session = str(created.get("session_handle", ""))
            if not self.session:
                raise DeviceError(UNAVAILABLE, "the portal created no remote desktop session")
            devices: dict[str, Any] = {"types": Variant("u", KEYBOARD | POINTER)}
            if version >= 2:
                devices["persist_mode"] = Variant("u", PERSIST_UNTIL_REVOKED)
                token = self._load_token()
                if token:
                    devices["restore_token"] = Variant("s", token)
            await self._request(REMOTE_DESKTOP, "SelectDevices", "oa{sv}", [self.session, devices])
            sources = {"types": Variant("u", MONITOR), "multiple": Variant("b", True)}
            await self._request(SCREEN_CAST, "SelectSources", "oa{sv}", [self.session, sources])
            started = await self._request(
                REMOTE_DESKTOP, "Start", "osa{sv}", [self.session, "", {}], self.grant_timeout
            )
        except BaseException:
            await self.close()
            raise
        granted = started.get("devices")
        if isinstance(granted, int) and (granted & (KEYBOARD | POINTER)) != KEYBOARD | POINTER:
            await self.close()
            raise DeviceError(UNAVAILABLE, "the desktop granted no keyboard and pointer")
        try:
            self.streams = _streams(started.get("streams"))
        except (TypeError, ValueError, IndexError, AttributeError):
            self.streams = []
        if not self.streams:
            await self.close()
            raise DeviceError(UNAVAILABLE, "the desktop shared no screen to aim the pointer at")
        token = started.get("restore_token")
        if isinstance(token, str) and token:
            self._save_token(token)
        log.info("computer control: portal remote desktop session started")

    async def _request(
        self, interface: str, member: str, signature: str, body: list[Any], timeout: float = 0
    ) -> dict[str, Any]:
        assert self._bus is not None
        try:
            response = await portal_request(
                self._bus, interface, member, signature, body, timeout or self.call_timeout
            )
        except BusError as exc:
            raise DeviceError(UNAVAILABLE, f"the desktop portal refused {member}: {exc}") from None
        except TimeoutError:
            raise DeviceError(
                UNAVAILABLE, f"the desktop portal did not answer {member} in time"
            ) from None
        if response.code == CANCELLED:
            raise DeviceError(
                UNAVAILABLE,
                "the user refused remote control of this computer in the desktop's dialog",
            )
        if response.code != SUCCESS:
            raise DeviceError(UNAVAILABLE, f"the desktop portal's {member} failed")
        return response.results

    def _load_token(self) -> str | None:
        if self.token_path is None:
            return None
        with contextlib.suppress(OSError):
            return self.token_path.read_text(encoding="utf-8").strip() or None
        return None

    def _save_token(self, token: str) -> None:
        if self.token_path is None:
            return
        try:
            self.token_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(token)
        except OSError as exc:
            log.warning("computer control: the portal grant cannot be kept: %s", exc.strerror)

    async def close(self) -> None:
        """Release everything held, close the session and disconnect (idempotent, never
        raises)."""
        bus, session = self._bus, self.session
        if bus is None:
            return
        if session:
            with contextlib.suppress(Exception):
                await self.release_all()
            with contextlib.suppress(Exception):
                async with asyncio.timeout(self.call_timeout):
                    await call(bus, (BUS_NAME, session, SESSION), "Close")
        self._bus, self.session, self.streams = None, None, []
        bus.disconnect()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]

    # -------------------------------------------------------------------- input

    async def _notify(self, member: str, signature: str, *args: Any) -> None:
        if self._bus is None or self.session is None:
            raise DeviceError(UNAVAILABLE, "the remote desktop session has ended")
        try:
            async with asyncio.timeout(self.call_timeout):
                await call(
                    self._bus,
                    (BUS_NAME, OBJECT_PATH, REMOTE_DESKTOP),
                    member,
                    "oa{sv}" + signature,
                    [self.session, {}, *args],
                )
        except BusError as exc:
            raise DeviceError(UNAVAILABLE, f"the desktop portal refused {member}: {exc}") from None
        except TimeoutError:
            raise DeviceError(UNAVAILABLE, f"the desktop portal did not take {member}") from None

    def to_stream(self, x: int, y: int) -> tuple[int, float, float]:
        """Screenshot pixel -> (stream node, x, y in that stream's logical pixels)."""
        placed = [s for s in self.streams if s.position is not None and s.size is not None]
        if not placed:
            stream = self.streams[0]
            if stream.size is None or self.space is None:
                return stream.node, float(x), float(y)
            return (
                stream.node,
                x * stream.size[0] / self.space[0],
                y * stream.size[1] / self.space[1],
            )
        left = min(s.position[0] for s in placed if s.position)
        top = min(s.position[1] for s in placed if s.position)
        right = max(s.position[0] + s.size[0] for s in placed if s.position and s.size)
        bottom = max(s.position[1] + s.size[1] for s in placed if s.position and s.size)
        space = self.space or (right - left, bottom - top)
        lx = left + x * (right - left) / space[0]
        ly = top + y * (bottom - top) / space[1]
        for s in placed:
            assert s.position is not None and s.size is not None
            if 0 <= lx - s.position[0] < s.size[0] and 0 <= ly - s.position[1] < s.size[1]:
                return s.node, lx - s.position[0], ly - s.position[1]
        first = placed[0]
        assert first.position is not None
        return first.node, lx - first.position[0], ly - first.position[1]

    async def move(self, x: int, y: int) -> None:
        """Move the pointer to screenshot pixel ``(x, y)``."""
        node, sx, sy = self.to_stream(x, y)
        await self._notify("NotifyPointerMotionAbsolute", "udd", node, sx, sy)

    async def button(self, button: int, press: bool) -> None:
        """Press or release one pointer button (X numbering, recorded)."""
        if press == (button in self.held_buttons):
            return
        await self._notify("NotifyPointerButton", "iu", EVDEV_BUTTONS[button], 1 if press else 0)
        if press:
            self.held_buttons.append(button)
        else:
            self.held_buttons.remove(button)

    async def wheel(self, direction: str, ticks: int) -> None:
        """Scroll ``ticks`` notches."""
        axis, sign = AXES[direction]
        await self._notify("NotifyPointerAxisDiscrete", "ui", axis, sign * ticks)

    async def key(self, keysym: int, press: bool) -> None:
        """Press or release the key of ``keysym`` (recorded)."""
        if press == (keysym in self.held_keys):
            return
        await self._notify("NotifyKeyboardKeysym", "iu", keysym, 1 if press else 0)
        if press:
            self.held_keys.append(keysym)
        else:
            self.held_keys.remove(keysym)

    async def release_all(self, keep_buttons: tuple[int, ...] = ()) -> None:
        """Release every key and button held, last pressed first (but ``keep_buttons``)."""
        for keysym in reversed(list(self.held_keys)):
            await self.key(keysym, False)
        for button in reversed(list(self.held_buttons)):
            if button not in keep_buttons:
                await self.button(button, False)


class PortalDriver:
    """The async input driver ``computer.act`` uses on Wayland: one :class:`PortalInput`
    session, started on first use and closed with the execution; one action at a time."""

    def __init__(self, token_path: Path | None = None, address: str | None = None) -> None:
        self.token_path = token_path
        self.address = address
        self._input: PortalInput | None = None
        self._lock = asyncio.Lock()
        self._space: tuple[int, int] | None = None
        #: ``left_mouse_down`` holds the left button across actions until ``left_mouse_up``.
        self.left_held = False

    async def _session(self) -> PortalInput:
        if self._input is None:
            session = PortalInput(self.token_path, address=self.address)
            await session.open()
            self._input = session
        return self._input

    def bind(self, width: int, height: int) -> None:
        """The screenshot size coordinates of the next calls are pixels of."""
        self._space = (width, height)

    async def _run(self, name: str, *args: Any) -> None:
        async with self._lock:
            session = await self._session()
            session.space = self._space
            try:
                await getattr(session, name)(*args)
            except DeviceError:
                # The compositor ended the session (or the portal went away): drop it, so
                # the next action starts a new one instead of failing for good.
                self._input = None
                await session.close()
                raise

    async def move(self, x: int, y: int) -> None:
        await self._run("move", x, y)

    async def button(self, button: int, press: bool) -> None:
        await self._run("button", button, press)

    async def click_at(self, x: int, y: int, button: int, count: int = 1) -> None:
        await self.move(x, y)
        for _ in range(count):
            await self.button(button, True)
            await self.button(button, False)

    async def press_at(self, x: int, y: int, button: int) -> None:
        await self.move(x, y)
        await self.button(button, True)

    async def wheel(self, direction: str, ticks: int) -> None:
        await self._run("wheel", direction, ticks)

    async def key(self, keysym: int, press: bool) -> None:
        await self._run("key", keysym, press)

    async def type_keysym(self, keysym: int) -> None:
        await self.key(keysym, True)
        await self.key(keysym, False)

    async def holds(self, button: int) -> bool:
        """Whether ``button`` is held by this session."""
        return self._input is not None and button in self._input.held_buttons

    async def release(self, close: bool = False) -> None:
        """Release everything held (but the left button ``left_mouse_down`` holds, unless
        closing the session); survives a cancellation of the caller."""
        if close:
            self.left_held = False
        keep = (1,) if self.left_held else ()

        async def locked() -> None:
            async with self._lock:
                session = self._input
                if session is None:
                    return
                if close:
                    self._input = None
                    await session.close()
                else:
                    with contextlib.suppress(DeviceError):
                        await session.release_all(keep)

        task = asyncio.ensure_future(locked())
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await task
            raise
