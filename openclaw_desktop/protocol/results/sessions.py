"""Results of the session methods (``sessions.*``, ``commands.list``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "CommandsListResult",
    "SessionEntry",
    "SessionRow",
    "SessionsCreateResult",
    "SessionsDeleteResult",
    "SessionsDescribeResult",
    "SessionsListResult",
    "SessionsMessagesSubscribeResult",
    "SessionsPatchResult",
    "SessionsSubscribeResult",
]


class SessionRow(OpenModel):
    """One session as ``sessions.list`` and the mutations return it."""

    key: str
    session_id: str | None = None
    agent_id: str | None = None
    kind: str | None = None
    label: str | None = None
    display_name: str | None = None
    status: str | None = None
    updated_at: int | None = None
    model_provider: str | None = None
    model: str | None = None


class SessionEntry(OpenModel):
    """The stored entry ``sessions.create``, ``sessions.patch`` and ``sessions.reset`` return
    beside the key: the real gateway's carries no ``key`` of its own (the answer's ``key`` is
    the session's), so every field is optional."""

    key: str | None = None
    session_id: str | None = None
    label: str | None = None
    updated_at: int | None = None
    model_provider: str | None = None
    model: str | None = None


class SessionsListResult(OpenModel):
    """``sessions.list``: a page of sessions, newest first."""

    ts: int
    count: int
    sessions: list[SessionRow]
    total_count: int | None = None
    limit_applied: int | None = None
    next_offset: int | None = None
    has_more: bool | None = None
    defaults: dict[str, Any] | None = None


class SessionsDescribeResult(OpenModel):
    """``sessions.describe``: ``{session}`` (null for an unknown key)."""

    session: SessionRow | None


class SessionsCreateResult(OpenModel):
    """``sessions.create``: ``{ok, key, sessionId, entry, runStarted}``."""

    ok: bool
    key: str
    session_id: str | None = None
    entry: SessionEntry | None = None
    run_started: bool | None = None


class SessionsPatchResult(OpenModel):
    """``sessions.patch`` and ``sessions.reset``: ``{ok, key, entry}``."""

    ok: bool
    key: str
    entry: SessionEntry | None = None


class SessionsDeleteResult(OpenModel):
    """``sessions.delete``: ``{ok, key, deleted}``."""

    ok: bool
    key: str
    deleted: bool


class SessionsSubscribeResult(OpenModel):
    """``sessions.subscribe``: ``{subscribed, list?}`` (a first page when one was asked)."""

    subscribed: bool
    list: SessionsListResult | None = None


class SessionsMessagesSubscribeResult(OpenModel):
    """``sessions.messages.subscribe`` / ``.unsubscribe``: ``{subscribed, key}``."""

    subscribed: bool
    key: str
    approval_replay: dict[str, Any] | None = None


class CommandsListResult(OpenModel):
    """``commands.list``: ``{commands}`` (slash commands)."""

    commands: list[dict[str, Any]]


RESULTS: dict[str, type[BaseModel]] = {
    "sessions.list": SessionsListResult,
    "sessions.describe": SessionsDescribeResult,
    "commands.list": CommandsListResult,
    "sessions.create": SessionsCreateResult,
    "sessions.patch": SessionsPatchResult,
    "sessions.reset": SessionsPatchResult,
    "sessions.delete": SessionsDeleteResult,
    "sessions.subscribe": SessionsSubscribeResult,
    "sessions.messages.subscribe": SessionsMessagesSubscribeResult,
    "sessions.messages.unsubscribe": SessionsMessagesSubscribeResult,
}
"""Method name -> result model, for the sessions family's methods."""
