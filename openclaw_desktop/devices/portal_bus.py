"""The xdg-desktop-portal on the session bus: is this a Wayland session, which portal
interfaces are there (their ``version`` property), and the Request/Response pattern every
portal call that may ask the user follows.

A portal method that may show a dialog answers at once with the path of a
``org.freedesktop.portal.Request`` object; the outcome comes later as that object's
``Response`` signal ``(u code, a{sv} results)``: 0 success, 1 cancelled by the user,
2 ended otherwise. The path is predictable from our unique bus name and the
``handle_token`` option, so the signal is subscribed to *before* the call (no race);
an older portal that answers with another path is listened to on that one too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openclaw_desktop.devices.dbus_calls import BusError, call

if TYPE_CHECKING:
    from dbus_fast import Message
    from dbus_fast.aio import MessageBus

__all__ = [
    "BUS_NAME",
    "OBJECT_PATH",
    "PortalResponse",
    "get_property",
    "interface_version",
    "portal_request",
    "sender_path_part",
    "session_address",
    "unwrap",
    "wayland_session",
]

BUS_NAME = "org.freedesktop.portal.Desktop"
OBJECT_PATH = "/org/freedesktop/portal/desktop"
REQUEST_INTERFACE = "org.freedesktop.portal.Request"
PROPERTIES = "org.freedesktop.DBus.Properties"
#: Response codes of ``org.freedesktop.portal.Request.Response``.
SUCCESS, CANCELLED, OTHER = 0, 1, 2


def wayland_session() -> bool:
    """Whether this desktop session is Wayland (``WAYLAND_DISPLAY`` or
    ``XDG_SESSION_TYPE=wayland``)."""
    return bool(os.environ.get("WAYLAND_DISPLAY", "").strip()) or (
        os.environ.get("XDG_SESSION_TYPE", "").strip().lower() == "wayland"
    )


def session_address() -> str | None:
    """The session bus address (``DBUS_SESSION_BUS_ADDRESS``), None when not set."""
    return os.environ.get("DBUS_SESSION_BUS_ADDRESS", "").strip() or None


def sender_path_part(unique_name: str) -> str:
    """``:1.42`` -> ``1_42``: how a portal puts the caller's bus name into object paths."""
    return unique_name.lstrip(":").replace(".", "_")


def unwrap(value: Any) -> Any:
    """A D-Bus variant's value (recursively for dicts and lists of variants)."""
    from dbus_fast import Variant

    if isinstance(value, Variant):
        return unwrap(value.value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unwrap(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class PortalResponse:
    """A Request's outcome: the code and the (unwrapped) results."""

    code: int
    results: dict[str, Any]


async def interface_version(bus: MessageBus, interface: str) -> int | None:
    """The ``version`` property of ``interface`` on the portal object, None when the portal
    (or that interface) is not there."""
    from dbus_fast import Variant

    try:
        reply = await call(
            bus, (BUS_NAME, OBJECT_PATH, PROPERTIES), "Get", "ss", [interface, "version"]
        )
    except BusError:
        return None
    value = reply[0].value if reply and isinstance(reply[0], Variant) else None
    return int(value) if isinstance(value, int) else None


async def get_property(bus: MessageBus, interface: str, name: str) -> Any:
    """Property ``name`` of ``interface`` on the portal object (unwrapped), None when it
    cannot be read."""
    try:
        reply = await call(bus, (BUS_NAME, OBJECT_PATH, PROPERTIES), "Get", "ss", [interface, name])
    except BusError:
        return None
    return unwrap(reply[0]) if reply else None


def _match_rule(path: str) -> str:
    return f"type='signal',interface='{REQUEST_INTERFACE}',member='Response',path='{path}'"


async def _add_match(bus: MessageBus, path: str, add: bool = True) -> None:
    member = "AddMatch" if add else "RemoveMatch"
    target = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
    await call(bus, target, member, "s", [_match_rule(path)])


async def portal_request(
    bus: MessageBus,
    interface: str,
    member: str,
    signature: str,
    body: list[Any],
    timeout: float,
) -> PortalResponse:
    """Call ``interface.member`` on the portal with ``body`` (its last element, the options
    dict, gets a fresh ``handle_token``) and wait for the Request's ``Response``.

    Raises:
        BusError: the call itself was refused (no such interface or method, bad args).
        TimeoutError: no Response within ``timeout`` s (the request is closed first, so a
            dialog left open goes away; so it is when the caller is cancelled).
    """
    from dbus_fast import MessageType, Variant

    token = f"openclaw_{secrets.token_hex(8)}"
    options = dict(body[-1])
    options["handle_token"] = Variant("s", token)
    body = [*body[:-1], options]
    expected = f"{OBJECT_PATH}/request/{sender_path_part(bus.unique_name or '')}/{token}"
    paths = {expected}
    answer: asyncio.Future[PortalResponse] = asyncio.get_running_loop().create_future()

    def on_message(message: Message) -> None:
        if (
            message.message_type is MessageType.SIGNAL
            and message.interface == REQUEST_INTERFACE
            and message.member == "Response"
            and message.path in paths
            and not answer.done()
        ):
            code, results = message.body
            answer.set_result(PortalResponse(int(code), unwrap(results)))

    bus.add_message_handler(on_message)
    try:
        await _add_match(bus, expected)
        reply = await call(bus, (BUS_NAME, OBJECT_PATH, interface), member, signature, body)
        handle = str(reply[0]) if reply else expected
        if handle != expected:
            paths.add(handle)
            await _add_match(bus, handle)
        try:
            async with asyncio.timeout(timeout):
                return await answer
        except (TimeoutError, asyncio.CancelledError):
            # Nobody waits for the answer any more: close the request (a dialog goes away).
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await call(bus, (BUS_NAME, handle, REQUEST_INTERFACE), "Close")
            raise
    finally:
        bus.remove_message_handler(on_message)
        for path in paths:
            with contextlib.suppress(Exception):
                await _add_match(bus, path, add=False)
