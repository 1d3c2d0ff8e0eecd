"""NodeHost: one node connection with a live command surface.

It derives ``caps``/``commands``/``permissions`` from the registry and the user's settings,
connects, answers invokes through the dispatcher, and re-advertises when the surface changes:
the settings file changed (``openclaw-desktop settings set node.camera on``, or the app's
Settings page) or hardware came or went (a camera plugged in). Re-advertising means a
reconnect, since ``connect`` params are read only at the handshake; a gateway may then hold
the wider surface for operator approval, which :class:`NodeSession` reports as ``pending``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from openclaw_desktop.config.settings import NodeSettings, Settings, SettingsStore
from openclaw_desktop.errors import ConfigError
from openclaw_desktop.node.computer_control import descriptor
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.registry import Surface, SurfaceEntry
from openclaw_desktop.node.session import NodeSession
from openclaw_desktop.node.surface import build_dispatcher
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection

__all__ = ["NodeHost", "SurfaceChange"]

log = logging.getLogger("openclaw.node")

#: How often the settings file is checked for changes.
SETTINGS_POLL_S = 1.0
#: How often availability (hot-plugged devices) is re-surveyed.
RESURVEY_S = 30.0


class SurfaceChange:
    """What changed between two advertised surfaces."""

    def __init__(self, old: Surface, new: Surface) -> None:
        self.added = [c for c in new.commands if c not in old.commands]
        self.removed = [c for c in old.commands if c not in new.commands]

    @property
    def widened(self) -> bool:
        """New commands appeared: a gateway may ask an operator to approve them."""
        return bool(self.added)

    def describe(self) -> str:
        """``+camera.snap, -screen.snapshot``."""
        return ", ".join([f"+{c}" for c in self.added] + [f"-{c}" for c in self.removed])


class NodeHost:
    """Owns the node connection, its session and the settings watch."""

    def __init__(
        self,
        options: ConnectionOptions,
        store: SettingsStore,
        *,
        ctx: NodeContext | None = None,
        settings_poll_s: float = SETTINGS_POLL_S,
        resurvey_s: float = RESURVEY_S,
    ) -> None:
        self.options = options
        self.store = store
        self._settings = store.load()
        self._mtime = store.mtime_ns()
        self.ctx = ctx or NodeContext()
        self.ctx.settings = self._node_settings
        self.dispatcher = build_dispatcher(self.ctx)
        self.connection = GatewayConnection(options)
        self.session = NodeSession(self.connection, self.dispatcher)
        self.session.stop_listeners.append(self._user_stopped)
        self.surface = Surface((), (), {})
        self.entries: list[SurfaceEntry] = []
        self.change_listeners: list[Callable[[SurfaceChange], None]] = []
        self._settings_poll_s = settings_poll_s
        self._resurvey_s = resurvey_s
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._stopping: set[asyncio.Task[None]] = set()

    def _user_stopped(self, prefix: str) -> None:
        """The capture indicator's Stop of computer control: end the execution at once
        (held input released) and switch Computer control off, so nothing more is accepted
        until the user switches it on again."""
        if not prefix.startswith("computer"):
            return
        task = asyncio.get_running_loop().create_task(self.ctx.computer.stop())
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        try:
            self.store.set("node.computer", "off")
        except ConfigError as exc:
            log.error("could not switch computer control off: %s", exc)

    def _node_settings(self) -> NodeSettings:
        return self._settings.node

    @property
    def settings(self) -> Settings:
        """The settings in effect."""
        return self._settings

    async def start(self) -> None:
        """Survey the surface, connect, and start watching settings and devices."""
        await self._survey()
        self.connection.start()
        self._tasks = [
            asyncio.create_task(self._watch_settings(), name="node-settings"),
            asyncio.create_task(self._watch_devices(), name="node-devices"),
        ]

    async def aclose(self) -> None:
        """Stop watching, cancel running invokes, close the connection."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.session.aclose()
        await self.ctx.computer.close(None)
        await self.connection.aclose()

    async def apply(self, settings: Settings) -> SurfaceChange | None:
        """Use new settings now; re-advertise (reconnect) when the surface changed."""
        self._settings = settings
        if not settings.node.computer:  # off: the Stop is lifted, a live execution ends
            self.ctx.computer.resume()
            await self.ctx.computer.close(None)
        return await self.refresh()

    async def refresh(self) -> SurfaceChange | None:
        """Re-survey; when the advertised surface changed, reconnect to advertise it."""
        async with self._lock:
            old = self.surface
            await self._survey()
            if (old.commands, old.caps, old.permissions) == (
                self.surface.commands,
                self.surface.caps,
                self.surface.permissions,
            ):
                return None
            change = SurfaceChange(old, self.surface)
            log.warning("node surface changed (%s); re-advertising", change.describe())
            if change.widened:
                log.warning("the gateway may hold the new commands until an operator approves them")
            for listener in list(self.change_listeners):
                listener(change)
            await self.connection.reconnect("node surface changed")
            return change

    async def _survey(self) -> None:
        self.entries = await self.dispatcher.registry.survey(self._settings.node.toggles())
        self.surface = Surface.from_entries(self.entries)
        self.options.caps = self.surface.caps
        self.options.commands = self.surface.commands
        self.options.permissions = dict(self.surface.permissions)
        both = {"computer.act", "screen.snapshot"} <= set(self.surface.commands)
        self.options.computer_use = descriptor() if both else None

    async def _watch_settings(self) -> None:
        while True:
            await asyncio.sleep(self._settings_poll_s)
            mtime = self.store.mtime_ns()
            if mtime == self._mtime:
                continue
            self._mtime = mtime
            try:
                settings = self.store.load()
            except ConfigError as exc:
                log.error("settings not applied: %s", exc)
                continue
            if settings != self._settings:
                log.info("settings changed; applying")
                await self.apply(settings)

    async def _watch_devices(self) -> None:
        while True:
            await asyncio.sleep(self._resurvey_s)
            await self.refresh()
