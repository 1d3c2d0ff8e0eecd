"""A small, real ``org.freedesktop.Notifications`` server for tests.

It owns the name on a (private) session bus, like dunst or mako would, and records every
``Notify`` call. In ``hang`` mode ``Notify`` never answers (until the server stops), which is
how a wedged notification daemon looks to a client.

Usage (inside the test's event loop)::

    async with NotificationServer.running(address) as server:
        ...
        assert server.received[0].summary == "Build done"
"""

# No ``from __future__ import annotations``: dbus-fast reads the D-Bus signatures from the
# annotations at class creation, and a postponed ``-> None`` would not parse.
import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusDict, DBusInt32, DBusSignature, DBusStr, DBusUInt32
from dbus_fast.service import ServiceInterface, dbus_method, dbus_signal

from tests.helpers.dbus_service import own_name, release

__all__ = ["NAME", "PATH", "NotificationServer", "Received"]

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
SERVER_INFO = ("openclaw-test-notifyd", "OpenClaw tests", "1.0", "1.2")
CAPABILITIES = ["body", "persistence", "sound"]

_StrList = Annotated[list[str], DBusSignature("as")]
_ServerInfo = Annotated[list[str], DBusSignature("ssss")]


@dataclass(frozen=True)
class Received:
    """One ``Notify`` call as the server saw it."""

    app_name: str
    replaces_id: int
    app_icon: str
    summary: str
    body: str
    actions: list[str]
    hints: dict[str, Any]
    expire_timeout: int

    @property
    def urgency(self) -> int | None:
        """The ``urgency`` hint byte (0 low, 1 normal, 2 critical), if sent."""
        value = self.hints.get("urgency")
        return int(value) if value is not None else None


@dataclass
class _State:
    hang: bool = False
    capabilities: list[str] = field(default_factory=lambda: list(CAPABILITIES))
    received: list[Received] = field(default_factory=list)
    closed: list[int] = field(default_factory=list)
    next_id: int = 1
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


class _Interface(ServiceInterface):
    def __init__(self, state: _State) -> None:
        super().__init__(NAME)
        self._state = state

    @dbus_method()
    async def Notify(  # noqa: N802 - D-Bus method names
        self,
        app_name: DBusStr,
        replaces_id: DBusUInt32,
        app_icon: DBusStr,
        summary: DBusStr,
        body: DBusStr,
        actions: _StrList,
        hints: DBusDict,
        expire_timeout: DBusInt32,
    ) -> DBusUInt32:
        state = self._state
        plain = {key: value.value for key, value in hints.items()}
        state.received.append(
            Received(
                app_name, replaces_id, app_icon, summary, body, list(actions), plain, expire_timeout
            )
        )
        state.arrived.set()
        if state.hang:
            await state.release.wait()
        nid = replaces_id or state.next_id
        state.next_id += 1
        return nid

    @dbus_method()
    def GetServerInformation(self) -> _ServerInfo:  # noqa: N802
        return list(SERVER_INFO)

    @dbus_method()
    def GetCapabilities(self) -> _StrList:  # noqa: N802
        return list(self._state.capabilities)

    @dbus_method()
    def CloseNotification(self, nid: DBusUInt32) -> None:  # noqa: N802
        self._state.closed.append(nid)
        self.NotificationClosed(nid, 3)

    @dbus_signal()
    def NotificationClosed(  # noqa: N802
        self, nid: DBusUInt32, reason: DBusUInt32
    ) -> Annotated[list[int], DBusSignature("uu")]:
        return [nid, reason]


class NotificationServer:
    """The server; :meth:`running` starts and stops it.

    Attributes:
        received: every ``Notify`` call, in order.
        closed: ids passed to ``CloseNotification``.
    """

    def __init__(
        self, address: str, *, hang: bool = False, capabilities: list[str] | None = None
    ) -> None:
        self.address = address
        self._state = _State(hang=hang)
        if capabilities is not None:
            self._state.capabilities = list(capabilities)
        self._bus: MessageBus | None = None

    @property
    def received(self) -> list[Received]:
        """Every ``Notify`` call so far."""
        return self._state.received

    @property
    def closed(self) -> list[int]:
        """Every ``CloseNotification`` id so far."""
        return self._state.closed

    @property
    def hang(self) -> bool:
        """Whether ``Notify`` is left unanswered."""
        return self._state.hang

    @hang.setter
    def hang(self, value: bool) -> None:
        self._state.hang = value
        if not value:
            self._state.release.set()
            self._state.release = asyncio.Event()

    async def wait_for(self, count: int, timeout: float = 5.0) -> list[Received]:
        """Wait (bounded) until ``count`` notifications arrived; returns them."""
        async with asyncio.timeout(timeout):
            while len(self._state.received) < count:
                self._state.arrived.clear()
                await self._state.arrived.wait()
        return self._state.received

    async def start(self) -> None:
        """Connect and own :data:`NAME`."""
        self._bus = await own_name(self.address, NAME, {PATH: _Interface(self._state)})

    async def stop(self) -> None:
        """Answer hung calls, release the name and disconnect (bounded)."""
        bus, self._bus = self._bus, None
        if bus is None:
            return
        self._state.release.set()
        await asyncio.sleep(0)
        await release(bus, NAME)

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls, address: str, *, hang: bool = False, capabilities: list[str] | None = None
    ) -> "AsyncIterator[NotificationServer]":
        """Start a server on the bus at ``address`` for the ``async with`` block
        (``capabilities``: what ``GetCapabilities`` answers, the helper's default if None)."""
        server = cls(address, hang=hang, capabilities=capabilities)
        await server.start()
        try:
            yield server
        finally:
            await server.stop()
