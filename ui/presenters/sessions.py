"""The sessions sidebar's presenter: the list from ``sessions.list``, kept fresh by
``session.*`` events, and the actions new / rename / reset / delete."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.sdk import OpenClaw, Unsupported

__all__ = ["SessionsPresenter", "session_title"]

log = logging.getLogger("openclaw.ui")


def session_title(row: dict[str, Any]) -> str:
    """What the sidebar shows for a session."""
    label = row.get("label") or row.get("displayName")
    if label:
        return str(label)
    key = str(row.get("key") or "")
    rest = key.split(":", 2)[-1] if key.startswith("agent:") else key
    return "Main" if rest == "main" else rest


class SessionsPresenter(QObject):
    """Owns the session rows."""

    #: The rows changed.
    changed = Signal()
    #: An action failed (text for the status bar).
    failed = Signal(str)

    def __init__(self, client: OpenClaw) -> None:
        super().__init__()
        self.client = client
        self.rows: list[dict[str, Any]] = []
        self._pump: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Load the list and follow session events."""
        await self.refresh()
        self._pump = asyncio.create_task(self._follow(), name="sessions-events")

    async def aclose(self) -> None:
        """Stop following events."""
        if self._pump is not None:
            self._pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pump

    async def refresh(self) -> None:
        """Reload ``sessions.list``."""
        try:
            rows = await self.client.sessions.list(limit=200)
        except OpenClawError as exc:
            self.failed.emit(f"sessions unavailable: {exc}")
            return
        if not any(r.get("key") in ("agent:main:main", "main") for r in rows):
            rows.insert(0, {"key": "agent:main:main"})  # the main session always exists
        self.rows = rows
        self.changed.emit()

    async def _follow(self) -> None:
        async for event in self.client.events():
            if event.type.startswith("session.") or event.type in ("run.completed", "run.started"):
                await self.refresh()

    async def _act(self, coro: Any, what: str) -> None:
        try:
            await coro
        except Unsupported:
            self.failed.emit(f"this gateway cannot {what} sessions")
        except OpenClawError as exc:
            self.failed.emit(f"could not {what} the session: {exc}")
        await self.refresh()

    async def create(self, label: str | None = None) -> str | None:
        """A new session; returns its key."""
        try:
            created = await self.client.sessions.create(**({"label": label} if label else {}))
        except OpenClawError as exc:
            self.failed.emit(f"could not create a session: {exc}")
            return None
        await self.refresh()
        key = created.get("key")
        return str(key) if key else None

    async def rename(self, key: str, label: str) -> None:
        """Set a session's label."""
        await self._act(self.client.sessions.patch(key, label=label), "rename")

    async def reset(self, key: str) -> None:
        """Start a session over (its transcript is archived)."""
        await self._act(self.client.sessions.reset(key), "reset")

    async def delete(self, key: str) -> None:
        """Delete a session."""
        await self._act(self.client.sessions.delete(key), "delete")
