"""A small AT-SPI client over D-Bus (dbus-fast): what a screen reader sees of a running app.

Qt's accessibility bridge (``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1``) puts every widget on the
accessibility bus that ``at-spi-bus-launcher`` announces on the session bus (``org.a11y.Bus``).
:class:`Atspi` connects there, finds an application among the registry's children, walks its
tree (``org.a11y.atspi.Accessible``: ``GetChildren``, ``GetRoleName``, ``Name``) and reads
what a node shows: its extents on the screen (``Component.GetExtents``, for clicks), its
states (``GetState``) and its text (``Text.GetText``). Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dbus_fast import BusType, Message, MessageType, Variant
from dbus_fast.aio import MessageBus
from dbus_fast.errors import DBusError

__all__ = [
    "ENABLED",
    "FOCUSED",
    "SHOWING",
    "VISIBLE",
    "Atspi",
    "AtspiError",
    "Extents",
    "Node",
    "Seen",
]

_ACCESSIBLE = "org.a11y.atspi.Accessible"
_REGISTRY = ("org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root")
#: ``AtspiStateType`` bit numbers used by the journeys.
SHOWING = 25
VISIBLE = 30
FOCUSED = 12
ENABLED = 8
#: A walk never visits more nodes than this (a runaway tree fails instead of hanging).
MAX_NODES = 4000


class AtspiError(RuntimeError):
    """The accessibility bus or a node did not answer as expected."""


@dataclass(frozen=True)
class Node:
    """One accessible object: the D-Bus name of its application and its object path."""

    bus_name: str
    path: str


@dataclass(frozen=True)
class Extents:
    """Where a node is on the screen (pixels)."""

    x: int
    y: int
    width: int
    height: int

    @property
    def center(self) -> tuple[int, int]:
        """The middle of the node (where a person clicks)."""
        return self.x + self.width // 2, self.y + self.height // 2


@dataclass(frozen=True)
class Seen:
    """A node with what the walk read of it."""

    node: Node
    role: str
    name: str


class Atspi:
    """A connection to the accessibility bus of one desktop session."""

    def __init__(self, bus: MessageBus) -> None:
        self.bus = bus

    @classmethod
    async def connect(cls, session_address: str, timeout: float = 15.0) -> Atspi:
        """Ask the session bus for the accessibility bus (``org.a11y.Bus.GetAddress``) and
        connect to it; waits up to ``timeout`` for the bus launcher to appear."""
        session = await MessageBus(bus_address=session_address, bus_type=BusType.SESSION).connect()
        try:
            deadline = time.monotonic() + timeout
            while True:
                reply = await session.call(
                    Message(
                        destination="org.a11y.Bus",
                        path="/org/a11y/bus",
                        interface="org.a11y.Bus",
                        member="GetAddress",
                    )
                )
                if reply.message_type is MessageType.METHOD_RETURN:
                    address = str(reply.body[0])
                    break
                if time.monotonic() > deadline:
                    raise AtspiError(f"no org.a11y.Bus on the session bus: {_error(reply)}")
                await asyncio.sleep(0.1)
        finally:
            session.disconnect()
        bus = await MessageBus(bus_address=address).connect()
        return cls(bus)

    def close(self) -> None:
        """Disconnect from the accessibility bus."""
        self.bus.disconnect()

    # ------------------------------------------------------------------ raw calls
    async def _call(
        self, node: Node, interface: str, member: str, signature: str = "", body: Any = ()
    ) -> list[Any]:
        reply = await asyncio.wait_for(
            self.bus.call(
                Message(
                    destination=node.bus_name,
                    path=node.path,
                    interface=interface,
                    member=member,
                    signature=signature,
                    body=list(body),
                )
            ),
            10,
        )
        if reply.message_type is not MessageType.METHOD_RETURN:
            raise AtspiError(f"{interface}.{member} on {node.path}: {_error(reply)}")
        return list(reply.body)

    async def _property(self, node: Node, interface: str, name: str) -> Any:
        [value] = await self._call(
            node, "org.freedesktop.DBus.Properties", "Get", "ss", (interface, name)
        )
        return value.value if isinstance(value, Variant) else value

    # ------------------------------------------------------------------ reading nodes
    async def children(self, node: Node) -> list[Node]:
        """The node's children, in order."""
        [items] = await self._call(node, _ACCESSIBLE, "GetChildren")
        return [Node(str(name), str(path)) for name, path in items]

    async def name(self, node: Node) -> str:
        """The accessible name."""
        return str(await self._property(node, _ACCESSIBLE, "Name"))

    async def description(self, node: Node) -> str:
        """The accessible description."""
        return str(await self._property(node, _ACCESSIBLE, "Description"))

    async def role(self, node: Node) -> str:
        """The role's name (``push button``, ``text``, ``list item``, ``dialog``, ...)."""
        [role] = await self._call(node, _ACCESSIBLE, "GetRoleName")
        return str(role)

    async def states(self, node: Node) -> set[int]:
        """The set bits of the node's state (see :data:`SHOWING` and friends)."""
        [words] = await self._call(node, _ACCESSIBLE, "GetState")
        return {
            i * 32 + bit for i, word in enumerate(words) for bit in range(32) if word >> bit & 1
        }

    async def extents(self, node: Node) -> Extents:
        """Where the node is, in screen coordinates."""
        [(x, y, width, height)] = await self._call(
            node, "org.a11y.atspi.Component", "GetExtents", "u", (0,)
        )
        return Extents(int(x), int(y), int(width), int(height))

    async def text(self, node: Node) -> str:
        """All of a text node's text (``Text.GetText(0, -1)``)."""
        [text] = await self._call(node, "org.a11y.atspi.Text", "GetText", "ii", (0, -1))
        return str(text)

    async def do_action(self, node: Node, index: int = 0) -> None:
        """Run the node's action ``index`` (press a button, activate a menu item)."""
        await self._call(node, "org.a11y.atspi.Action", "DoAction", "i", (index,))

    # ------------------------------------------------------------------ finding nodes
    async def application(self, name: str, timeout: float = 30.0) -> Node:
        """The registered application called ``name``, waiting up to ``timeout``."""
        registry = Node(*_REGISTRY)
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while time.monotonic() < deadline:
            seen = []
            for app in await self.children(registry):
                try:
                    app_name = await self.name(app)
                except (AtspiError, DBusError, TimeoutError):
                    continue
                seen.append(app_name)
                if app_name == name:
                    return app
            await asyncio.sleep(0.2)
        raise AtspiError(f"no application {name!r} on the accessibility bus (saw {seen})")

    async def walk(self, root: Node, max_nodes: int = MAX_NODES) -> list[Seen]:
        """Every node under ``root`` (breadth first), with its role and name. Nodes that
        vanish while the walk runs (a row scrolled away) are skipped."""
        found: list[Seen] = []
        queue = [root]
        while queue:
            if len(found) >= max_nodes:
                raise AtspiError(f"more than {max_nodes} accessible nodes under {root.path}")
            node = queue.pop(0)
            try:
                role, name = await self.role(node), await self.name(node)
                kids = await self.children(node)
            except (AtspiError, DBusError, TimeoutError):
                continue
            found.append(Seen(node, role, name))
            queue.extend(kids)
        return found

    async def find(
        self,
        root: Node,
        predicate: Callable[[Seen], bool],
        what: str,
        timeout: float = 20.0,
        alive: Callable[[], None] | None = None,
    ) -> list[Seen]:
        """The nodes under ``root`` for which ``predicate`` holds, waiting until there is at
        least one (AssertionError naming ``what`` and listing the tree after ``timeout``).
        ``alive`` is called on every round (it raises when waiting is pointless)."""
        deadline = time.monotonic() + timeout
        while True:
            if alive is not None:
                alive()
            nodes = await self.walk(root)
            matches = [n for n in nodes if predicate(n)]
            if matches:
                return matches
            if time.monotonic() > deadline:
                listing = "\n".join(f"  {n.role}: {n.name!r}" for n in nodes)
                raise AssertionError(f"{what}: not found in {timeout:g} s; the tree:\n{listing}")
            await asyncio.sleep(0.25)

    async def find_one(self, root: Node, role: str, name: str, timeout: float = 20.0) -> Node:
        """The first node with this role and accessible name."""
        [first, *_] = await self.find(
            root, lambda n: n.role == role and n.name == name, f"{role} {name!r}", timeout
        )
        return first.node


def _error(reply: Message) -> str:
    if reply.message_type is MessageType.ERROR:
        return f"{reply.error_name}: {reply.body[0] if reply.body else ''}"
    return str(reply.message_type)
