"""The sessions sidebar's presenter: the list from ``sessions.list``, kept fresh by
``session.*`` events, and the actions new / rename / reset / delete."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from datetime import datetime
from typing import Any

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.chat.history import from_history
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.protocol.session_keys import (
    MAIN_SESSION_KEY,
    is_main_session,
    session_key_forms,
)
from openclaw_desktop.sdk import OpenClaw, Unsupported

__all__ = ["SessionsPresenter", "session_title", "short_title"]

log = logging.getLogger("openclaw.ui")


#: A sidebar title is cut to this many characters (the row shows it whole as a tooltip).
TITLE_CHARS = 48
#: Unlabelled sessions whose first message is looked up per refresh (``chat.history``).
LOOKUPS_PER_REFRESH = 8

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def short_title(text: str, limit: int = TITLE_CHARS) -> str:
    """One line of ``text``, whitespace collapsed, cut at a word with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut).rstrip() + "…"


def _tail(key: str) -> str:
    """``agent:main:dashboard:<uuid>`` -> ``dashboard:<uuid>``."""
    return key.split(":", 2)[-1] if key.startswith("agent:") else key


def session_title(row: dict[str, Any], first_message: str | None = None) -> str:
    """What the sidebar shows for a session: its label (given by a person or the gateway),
    else its first user message, never an id such as ``dashboard:<uuid>``."""
    key = str(row.get("key") or "")
    for field in ("label", "derivedTitle", "displayName", "subject"):
        value = row.get(field)
        if not isinstance(value, str) or not value.strip():
            continue
        name = value.strip()
        if name not in (key, _tail(key)) and (field == "label" or not _UUID.search(name)):
            return short_title(name)
    rest = _tail(key)
    if rest == "main":
        return "Main"
    if first_message and first_message.strip():
        return short_title(first_message)
    if rest and not _UUID.search(rest):
        return short_title(rest)  # a key a person chose (``agent:main:work``)
    created = row.get("createdAt") or row.get("updatedAt")
    if isinstance(created, int | float) and created > 0:
        when = datetime.fromtimestamp(created / 1000).strftime("%d %b %H:%M")
        return f"New session ({when})"
    return "New session"


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
        #: The first user message of sessions the gateway gave no title (by key).
        self.first_messages: dict[str, str] = {}
        self._pump: asyncio.Task[None] | None = None

    def title(self, row: dict[str, Any]) -> str:
        """The readable title of a session row (see :func:`session_title`)."""
        return session_title(row, self.first_messages.get(str(row.get("key"))))

    def row(self, key: str) -> dict[str, Any] | None:
        """The row of ``key`` (``main`` and ``agent:main:main`` alike), if listed."""
        wanted = session_key_forms(key)
        return next((r for r in self.rows if r.get("key") in wanted), None)

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
            # The real gateway derives titles from first messages when asked; ours does not
            # (it ignores the flag), and those are looked up below.
            rows = await self.client.sessions.list(limit=200, includeDerivedTitles=True)
        except OpenClawError as exc:
            self.failed.emit(f"sessions unavailable: {exc}")
            return
        if not any(is_main_session(str(r.get("key"))) for r in rows):
            rows.insert(0, {"key": MAIN_SESSION_KEY})  # the main session always exists
        self.rows = rows
        self.changed.emit()
        await self._look_up_first_messages()

    def _untitled(self) -> list[str]:
        keys = []
        for row in self.rows:
            key = str(row.get("key") or "")
            if key in self.first_messages or not row.get("sessionId"):
                continue
            if session_title(row, "x") == "x":  # only a first message would name it
                keys.append(key)
        return keys[:LOOKUPS_PER_REFRESH]

    async def _look_up_first_messages(self) -> None:
        """Name the sessions that have no label by their first user message (the oldest
        one ``chat.history`` returns); one without any yet is looked up again later."""
        found = False
        for key in self._untitled():
            try:
                messages = await self.client.sessions.history(key, limit=200)
            except OpenClawError as exc:
                log.info("no first message of %s: %s", key, exc)
                continue
            users = [i for i in from_history(messages).items if i.role == "user" and i.text]
            if users:
                self.first_messages[key] = users[0].text
                found = True
        if found:
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
