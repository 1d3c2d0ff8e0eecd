"""A small, real xdg-desktop-portal-compatible D-Bus service for tests.

It owns ``org.freedesktop.portal.Desktop`` on a (private) session bus and serves
``/org/freedesktop/portal/desktop`` with the parts of the portal interfaces our node uses,
answering the way the real portal does:

* ``org.freedesktop.portal.Screenshot`` (``version``; ``Screenshot(s, a{sv}) -> o``): writes
  a PNG into its folder and answers the Request with ``{"uri": "file://..."}``;
* ``org.freedesktop.portal.RemoteDesktop`` (``version``, ``AvailableDeviceTypes``;
  ``CreateSession``, ``SelectDevices``, ``Start``, the ``NotifyPointer*`` and
  ``NotifyKeyboard*`` methods, refused for a session that was not started);
* ``org.freedesktop.portal.ScreenCast`` (``version``; ``SelectSources``);
* ``org.freedesktop.portal.Request`` objects: the handle path is made from the caller's
  unique name and its ``handle_token`` (``/org/freedesktop/portal/desktop/request/1_42/tok``),
  the outcome is the ``Response(u, a{sv})`` signal sent to the caller shortly after the
  method returned (0 success, 1 the user cancelled, 2 other);
* ``org.freedesktop.portal.Session.Close`` on session handles.

Calls whose signature differs from the specification's are refused (``InvalidArgs``), so a
wrong argument type on our side fails the tests. It records what it was asked (``calls``,
``events``, ``closed``, the options received).
Interfaces can be left out (``interfaces``) and answers set to refusals
(``screenshot_response``, ``start_response``).

Usage (inside the test's event loop)::

    async with PortalService.running(address, folder) as portal:
        ...
        assert portal.events[0] == ("NotifyPointerMotionAbsolute", 7, 10.0, 20.0)
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusError

from tests.helpers.dbus_service import own_name, release

__all__ = ["NAME", "PATH", "PortalService", "StreamSpec", "png_image"]

NAME = "org.freedesktop.portal.Desktop"
PATH = "/org/freedesktop/portal/desktop"
PREFIX = "org.freedesktop.portal."
ALL_INTERFACES = frozenset({"Screenshot", "RemoteDesktop", "ScreenCast"})
UNKNOWN_INTERFACE = "org.freedesktop.DBus.Error.UnknownInterface"
UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
_RESPONSE_DELAY = 0.02
#: The in-signatures of the interface specifications (xdg-desktop-portal's data/*.xml): a
#: call with another one is refused with InvalidArgs, as the real portal's GDBus does.
SIGNATURES = {
    "Screenshot": "sa{sv}",
    "CreateSession": "a{sv}",
    "SelectDevices": "oa{sv}",
    "SelectSources": "oa{sv}",
    "Start": "osa{sv}",
    "NotifyPointerMotion": "oa{sv}dd",
    "NotifyPointerMotionAbsolute": "oa{sv}udd",
    "NotifyPointerButton": "oa{sv}iu",
    "NotifyPointerAxis": "oa{sv}dd",
    "NotifyPointerAxisDiscrete": "oa{sv}ui",
    "NotifyKeyboardKeycode": "oa{sv}iu",
    "NotifyKeyboardKeysym": "oa{sv}iu",
}
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"


def png_image(width: int = 800, height: int = 600) -> bytes:
    """A PNG of ``width`` x ``height``: left half red, right half blue (BGR encoded)."""
    image = np.zeros((height, width, 3), dtype=np.uint8)
    image[:, : width // 2] = (0, 0, 255)
    image[:, width // 2 :] = (255, 0, 0)
    ok, data = cv2.imencode(".png", image)
    assert ok
    return bytes(data.tobytes())


@dataclass(frozen=True)
class StreamSpec:
    """A stream ``Start`` grants: PipeWire node id and logical rectangle."""

    node: int
    position: tuple[int, int] | None
    size: tuple[int, int] | None


def _plain(value: Any) -> Any:
    if isinstance(value, Variant):
        return _plain(value.value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass
class PortalService:
    """The service's configuration and what it recorded (see the module text)."""

    folder: Path
    interfaces: frozenset[str] = ALL_INTERFACES
    remote_desktop_version: int = 2
    device_types: int = 7
    image: bytes = field(default_factory=png_image)
    screenshot_response: int = 0
    start_response: int = 0
    streams: tuple[StreamSpec, ...] = (StreamSpec(44, (0, 0), (400, 300)),)
    #: Every method call on the portal object: (interface short name, member, plain body).
    calls: list[tuple[str, str, list[Any]]] = field(default_factory=list)
    #: Input received: (member, *args after session and options).
    events: list[tuple[Any, ...]] = field(default_factory=list)
    #: Session handles closed with Session.Close.
    closed: list[str] = field(default_factory=list)
    #: Request handles closed with Request.Close.
    requests_closed: list[str] = field(default_factory=list)
    #: Screenshot files written.
    files: list[Path] = field(default_factory=list)
    #: Restore tokens handed out by Start.
    tokens: list[str] = field(default_factory=list)
    started: set[str] = field(default_factory=set)
    #: When set, Start never answers (the user leaves the dialog open).
    start_hangs: bool = False
    bus: MessageBus | None = None
    _counter: itertools.count[int] = field(default_factory=itertools.count)
    _tasks: set[asyncio.Handle] = field(default_factory=set)

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls, address: str, folder: Path, **config: Any
    ) -> AsyncIterator[PortalService]:
        service = cls(folder, **config)
        bus = await own_name(address, NAME, {})
        bus.add_message_handler(service._handle)
        service.bus = bus
        try:
            yield service
        finally:
            for handle in service._tasks:
                handle.cancel()
            await release(bus, NAME)

    def revoke(self) -> None:
        """The compositor ends every session (the user revoked the grant): their Notify
        calls are refused from now on."""
        self.started.clear()

    def members(self, interface: str) -> list[str]:
        """The members called on ``interface`` (short name), in order."""
        return [member for name, member, _ in self.calls if name == interface]

    def options_of(self, member: str) -> dict[str, Any]:
        """The options dict of the last call of ``member``."""
        for _, called, body in reversed(self.calls):
            if called == member:
                options = [part for part in body if isinstance(part, dict)]
                return options[-1] if options else {}
        raise AssertionError(f"{member} was not called")

    # ------------------------------------------------------------------ wiring

    def _handle(self, msg: Message) -> Message | bool | None:
        if msg.message_type is not MessageType.METHOD_CALL:
            return None
        if msg.interface == "org.freedesktop.DBus.Properties" and msg.path == PATH:
            return self._property(msg)
        if msg.interface == PREFIX + "Request" and msg.member == "Close":
            self.requests_closed.append(str(msg.path))
            return Message.new_method_return(msg)
        if msg.interface == PREFIX + "Session" and msg.member == "Close":
            self.closed.append(str(msg.path))
            self.started.discard(msg.path)
            return Message.new_method_return(msg)
        if msg.path != PATH or not (msg.interface or "").startswith(PREFIX):
            return None
        short = (msg.interface or "")[len(PREFIX) :]
        member = str(msg.member)
        if short not in self.interfaces:
            raise DBusError(UNKNOWN_METHOD, f"No such interface “{msg.interface}”")
        wanted = SIGNATURES.get(member)
        if wanted is not None and msg.signature != wanted:
            raise DBusError(
                INVALID_ARGS, f"Type of message, “({msg.signature})”, does not match “({wanted})”"
            )
        self.calls.append((short, member, _plain(list(msg.body))))
        if member.startswith("Notify"):
            return self._notify(msg)
        method = getattr(self, f"_{short}_{msg.member}", None)
        if method is None:
            raise DBusError(UNKNOWN_METHOD, f"No such method “{msg.member}”")
        result: Message = method(msg)
        return result

    def _property(self, msg: Message) -> Message:
        interface, name = msg.body[0], msg.body[1]
        short = interface[len(PREFIX) :] if interface.startswith(PREFIX) else ""
        if msg.member != "Get" or short not in self.interfaces:
            raise DBusError(UNKNOWN_INTERFACE, f"No such interface “{interface}”")
        values = {
            "version": Variant("u", self.remote_desktop_version if short == "RemoteDesktop" else 1)
        }
        if short == "RemoteDesktop":
            values["AvailableDeviceTypes"] = Variant("u", self.device_types)
        if short == "ScreenCast":
            values["AvailableSourceTypes"] = Variant("u", 3)
        if name not in values:
            raise DBusError(INVALID_ARGS, f"No such property “{name}”")
        return Message.new_method_return(msg, "v", [values[name]])

    def _request(self, msg: Message, options: dict[str, Any]) -> tuple[Message, str]:
        sender = (msg.sender or "").lstrip(":").replace(".", "_")
        token = _plain(options.get("handle_token")) or f"t{next(self._counter)}"
        handle = f"{PATH}/request/{sender}/{token}"
        return Message.new_method_return(msg, "o", [handle]), handle

    def _respond(self, msg: Message, handle: str, code: int, results: dict[str, Variant]) -> None:
        signal = Message(
            message_type=MessageType.SIGNAL,
            destination=msg.sender,
            path=handle,
            interface=PREFIX + "Request",
            member="Response",
            signature="ua{sv}",
            body=[code, results],
        )

        def send() -> None:
            assert self.bus is not None
            self.bus.send(signal)

        handle_ = asyncio.get_running_loop().call_later(_RESPONSE_DELAY, send)
        self._tasks.add(handle_)

    # ------------------------------------------------------------- Screenshot

    def _Screenshot_Screenshot(self, msg: Message) -> Message:  # noqa: N802 - D-Bus names
        reply, handle = self._request(msg, msg.body[1])
        results: dict[str, Variant] = {}
        if self.screenshot_response == 0:
            path = self.folder / f"Screenshot-{next(self._counter)}.png"
            path.write_bytes(self.image)
            self.files.append(path)
            results["uri"] = Variant("s", path.as_uri())
        self._respond(msg, handle, self.screenshot_response, results)
        return reply

    # ---------------------------------------------------------- RemoteDesktop

    def _RemoteDesktop_CreateSession(self, msg: Message) -> Message:  # noqa: N802
        options = msg.body[0]
        reply, handle = self._request(msg, options)
        sender = (msg.sender or "").lstrip(":").replace(".", "_")
        token = _plain(options.get("session_handle_token")) or f"s{next(self._counter)}"
        session = f"{PATH}/session/{sender}/{token}"
        self._respond(msg, handle, 0, {"session_handle": Variant("s", session)})
        return reply

    def _RemoteDesktop_SelectDevices(self, msg: Message) -> Message:  # noqa: N802
        reply, handle = self._request(msg, msg.body[1])
        self._respond(msg, handle, 0, {})
        return reply

    def _ScreenCast_SelectSources(self, msg: Message) -> Message:  # noqa: N802
        reply, handle = self._request(msg, msg.body[1])
        self._respond(msg, handle, 0, {})
        return reply

    def _RemoteDesktop_Start(self, msg: Message) -> Message:  # noqa: N802
        session = msg.body[0]
        reply, handle = self._request(msg, msg.body[2])
        if self.start_hangs:
            return reply
        results: dict[str, Variant] = {}
        if self.start_response == 0:
            self.started.add(session)
            token = f"restore-{next(self._counter)}"
            self.tokens.append(token)
            streams = []
            for spec in self.streams:
                props: dict[str, Variant] = {"source_type": Variant("u", 1)}
                if spec.position is not None:
                    props["position"] = Variant("(ii)", list(spec.position))
                if spec.size is not None:
                    props["size"] = Variant("(ii)", list(spec.size))
                streams.append([spec.node, props])
            results = {
                "devices": Variant("u", 3),
                "streams": Variant("a(ua{sv})", streams),
                "restore_token": Variant("s", token),
            }
        self._respond(msg, handle, self.start_response, results)
        return reply

    def _notify(self, msg: Message) -> Message:
        session = msg.body[0]
        if session not in self.started:
            raise DBusError(ACCESS_DENIED, "Session not started")
        self.events.append((msg.member, *msg.body[2:]))
        return Message.new_method_return(msg)
