"""The bus side shared by the small D-Bus services of the tests (GeoClue2, the
notification server, the tray's StatusNotifierWatcher): connect to a (private) bus,
export the objects and own a well-known name; release it and disconnect, bounded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

from dbus_fast import BusType
from dbus_fast.aio import MessageBus
from dbus_fast.constants import RequestNameReply
from dbus_fast.service import ServiceInterface

__all__ = ["own_name", "release"]

_BOUND_S = 2.0


async def own_name(address: str, name: str, objects: Mapping[str, ServiceInterface]) -> MessageBus:
    """Connect to the bus at ``address``, export ``objects`` (path -> interface) and own
    ``name``; RuntimeError (disconnected again) when another connection owns it."""
    bus = await MessageBus(bus_address=address, bus_type=BusType.SESSION).connect()
    for path, interface in objects.items():
        bus.export(path, interface)
    reply = await bus.request_name(name)
    if reply is not RequestNameReply.PRIMARY_OWNER:
        await release(bus, name)
        raise RuntimeError(f"could not own {name}: {reply}")
    return bus


async def release(bus: MessageBus, name: str | None) -> None:
    """Release ``name`` (when given) and disconnect, each bounded and never raising."""
    if name is not None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_BOUND_S):
                await bus.release_name(name)
    bus.disconnect()
    with contextlib.suppress(Exception):
        async with asyncio.timeout(_BOUND_S):
            await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
