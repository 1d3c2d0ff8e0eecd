"""The small D-Bus client both freedesktop services use (GeoClue2 on the system bus,
the notification center on the session bus): a fresh connection closed on exit, and one
method call whose error reply is raised as :class:`BusError`. Callers bound the time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from openclaw_desktop.errors import OpenClawError

if TYPE_CHECKING:
    from dbus_fast.aio import MessageBus

__all__ = ["BusError", "call", "connected"]


class BusError(OpenClawError):
    """A D-Bus error reply: its error ``name`` and the text it carried."""

    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name}: {text}" if text else name)
        self.name = name
        self.text = text


@contextlib.asynccontextmanager
async def connected(address: str | None) -> AsyncIterator[MessageBus]:
    """A fresh connection to the bus at ``address`` (None: the system bus), closed on exit."""
    from dbus_fast import BusType
    from dbus_fast.aio import MessageBus

    if address is None:
        bus = MessageBus(bus_type=BusType.SYSTEM)
    else:
        bus = MessageBus(bus_address=address)
    await bus.connect()
    try:
        yield bus
    finally:
        bus.disconnect()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]


async def call(
    bus: MessageBus,
    target: tuple[str, str, str],
    member: str,
    signature: str = "",
    body: list[Any] | None = None,
) -> list[Any]:
    """Call ``member`` on ``target`` (destination, path, interface) and answer the reply's
    body; a D-Bus error reply is raised as :class:`BusError`."""
    from dbus_fast import Message, MessageType

    destination, path, interface = target
    reply = await bus.call(
        Message(
            destination=destination,
            path=path,
            interface=interface,
            member=member,
            signature=signature,
            body=body or [],
        )
    )
    if reply.message_type is MessageType.ERROR:
        text = reply.body[0] if reply.body and isinstance(reply.body[0], str) else ""
        raise BusError(reply.error_name or "unknown", text)
    return list(reply.body)
