"""A real status-notifier host for journeys: the system tray of a KDE-style desktop panel.

It owns ``org.kde.StatusNotifierWatcher`` on a (private) session bus and says a host is
registered, which is what makes ``QSystemTrayIcon.isSystemTrayAvailable()`` true for a Qt app
started on that bus. The app then registers its icon (``RegisterStatusNotifierItem``), and the
test does what a person does with a panel icon: click it (``Activate``) or pick an entry of
its menu (``com.canonical.dbusmenu``: ``GetLayout`` then ``Event(id, "clicked")``).

Usage (inside the test's event loop)::

    async with TrayHost.running(address) as tray:
        item = await tray.item()
        await tray.click_menu("Quit")
"""

# No ``from __future__ import annotations``: dbus-fast reads the D-Bus signatures from the
# annotations at class creation.
import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from dbus_fast import Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.annotations import DBusBool, DBusInt32, DBusSignature, DBusStr
from dbus_fast.constants import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property, dbus_signal

from tests.helpers.dbus_service import own_name, release

__all__ = ["WATCHER", "TrayHost"]

WATCHER = "org.kde.StatusNotifierWatcher"
_PATH = "/StatusNotifierWatcher"
_ITEM = "org.kde.StatusNotifierItem"
_MENU = "com.canonical.dbusmenu"

_StrList = Annotated[list[str], DBusSignature("as")]


class _Watcher(ServiceInterface):
    def __init__(self, items: list[str], registered: asyncio.Event) -> None:
        super().__init__(WATCHER)
        self._items = items
        self._registered = registered

    @dbus_method()
    def RegisterStatusNotifierItem(self, service: DBusStr) -> None:  # noqa: N802
        if service not in self._items:
            self._items.append(service)
        self._registered.set()
        self.StatusNotifierItemRegistered(service)

    @dbus_method()
    def RegisterStatusNotifierHost(self, service: DBusStr) -> None:  # noqa: N802
        return None

    @dbus_property(access=PropertyAccess.READ)
    def RegisteredStatusNotifierItems(self) -> _StrList:  # noqa: N802
        return list(self._items)

    @dbus_property(access=PropertyAccess.READ)
    def IsStatusNotifierHostRegistered(self) -> DBusBool:  # noqa: N802
        return True

    @dbus_property(access=PropertyAccess.READ)
    def ProtocolVersion(self) -> DBusInt32:  # noqa: N802
        return 0

    @dbus_signal()
    def StatusNotifierItemRegistered(self, service: DBusStr) -> DBusStr:  # noqa: N802
        return service

    @dbus_signal()
    def StatusNotifierHostRegistered(self) -> None:  # noqa: N802
        return None


class TrayHost:
    """The watcher plus the panel's side of each registered icon."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.items: list[str] = []
        self._registered = asyncio.Event()
        self._bus: MessageBus | None = None

    async def start(self) -> None:
        """Connect and own :data:`WATCHER`."""
        watcher = _Watcher(self.items, self._registered)
        self._bus = await own_name(self.address, WATCHER, {_PATH: watcher})

    async def stop(self) -> None:
        """Disconnect (bounded)."""
        bus, self._bus = self._bus, None
        if bus is not None:
            await release(bus, None)

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls, address: str) -> "AsyncIterator[TrayHost]":
        """A host on the bus at ``address`` for the ``async with`` block."""
        host = cls(address)
        await host.start()
        try:
            yield host
        finally:
            await host.stop()

    # ------------------------------------------------------------------ the panel's side
    async def item(self, timeout: float = 20.0) -> tuple[str, str]:
        """The (bus name, object path) of the icon an app registered, waiting for it."""
        async with asyncio.timeout(timeout):
            await self._registered.wait()
        service = self.items[-1]
        name, _, path = service.partition("/")
        return name, f"/{path}" if path else "/StatusNotifierItem"

    async def _call(
        self, dest: str, path: str, iface: str, member: str, sig: str = "", body: Any = ()
    ) -> list[Any]:
        assert self._bus is not None
        reply = await asyncio.wait_for(
            self._bus.call(
                Message(
                    destination=dest,
                    path=path,
                    interface=iface,
                    member=member,
                    signature=sig,
                    body=list(body),
                )
            ),
            10,
        )
        if reply.message_type is not MessageType.METHOD_RETURN:
            raise RuntimeError(f"{iface}.{member}: {reply.body}")
        return list(reply.body)

    async def _item_property(self, name: str) -> Any:
        dest, path = await self.item()
        [value] = await self._call(
            dest, path, "org.freedesktop.DBus.Properties", "Get", "ss", (_ITEM, name)
        )
        return value.value if isinstance(value, Variant) else value

    async def tooltip(self) -> str:
        """The icon's tooltip text (title and body joined by a newline)."""
        _icon, _pixmaps, title, body = await self._item_property("ToolTip")
        return f"{title}\n{body}".strip()

    async def activate(self) -> None:
        """A left click on the icon."""
        dest, path = await self.item()
        await self._call(dest, path, _ITEM, "Activate", "ii", (0, 0))

    async def menu(self) -> dict[str, int]:
        """The icon's menu entries, label (mnemonics removed) -> dbusmenu id."""
        dest, _ = await self.item()
        menu_path = str(await self._item_property("Menu"))
        [_revision, layout] = await self._call(
            dest, menu_path, _MENU, "GetLayout", "iias", (0, -1, [])
        )
        entries: dict[str, int] = {}

        def visit(node: Any) -> None:
            ident, props, children = node
            label = props.get("label")
            if label is not None:
                entries[str(label.value).replace("_", "")] = int(ident)
            for child in children:
                visit(child.value if isinstance(child, Variant) else child)

        visit(layout)
        return entries

    async def click_menu(self, label: str, timeout: float = 10.0) -> None:
        """Pick the menu entry ``label``, as a person does in the panel's menu."""
        dest, _ = await self.item()
        menu_path = str(await self._item_property("Menu"))
        deadline = time.monotonic() + timeout
        entries = await self.menu()
        while label not in entries and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
            entries = await self.menu()
        if label not in entries:
            raise AssertionError(f"no tray menu entry {label!r} in {sorted(entries)}")
        await self._call(dest, menu_path, _MENU, "AboutToShow", "i", (0,))
        await self._call(
            dest,
            menu_path,
            _MENU,
            "Event",
            "isvu",
            (entries[label], "clicked", Variant("i", 0), 0),
        )
