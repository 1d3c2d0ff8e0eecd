"""A chat session as the reference's session entry shows it (``sessions.list`` rows, the
``entry`` of ``sessions.create``/``patch``/``reset``, ``session.message``'s ``session``).

It lives below the methods so the chat service's composition (``gateway.chat_host``) and
the methods build the same row without the service reaching up into
:mod:`gateway.methods`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.state import ChatSession

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = ["display_fields", "session_row"]


def session_row(service: ChatService, row: ChatSession) -> dict[str, Any]:
    """One ``sessions.list`` entry."""
    provider, _, model = (row.model or "").partition("/")
    default = service.providers.model
    active = service.active_run_ids(row.key)
    entry: dict[str, Any] = {
        "key": row.key,
        "sessionId": row.session_id,
        "agentId": row.agent_id,
        "kind": "direct",
        "isMain": row.key == f"agent:{row.agent_id}:main",
        "createdAt": row.created_at_ms,
        "updatedAt": row.updated_at_ms,
        "status": "running" if active else row.status,
        "abortedLastRun": row.aborted_last_run,
        "inputTokens": row.input_tokens,
        "outputTokens": row.output_tokens,
        "totalTokens": row.input_tokens + row.output_tokens,
        "compactionCount": row.compactions,
        "modelProvider": provider or (default.provider if default else None),
        "model": model or (default.model if default else None),
        "contextTokens": default.context_window if default else None,
        "hasActiveRun": bool(active),
        "activeRunIds": active,
    }
    for name, value in (
        ("label", row.label),
        ("thinkingLevel", row.thinking),
        ("lastRunId", row.last_run_id),
    ):
        if value is not None:
            entry[name] = value
    return entry | display_fields(row)


def display_fields(row: ChatSession) -> dict[str, Any]:
    """The entry fields for the display metadata (archive, pin, unread marks, icon, colour,
    category; the reference's names, unset ones left out as the reference leaves out what
    an entry does not hold)."""
    fields: dict[str, Any] = {
        "archived": row.archived_at_ms is not None,
        "pinned": row.pinned_at_ms is not None,
        "unread": row.marked_unread_at_ms is not None,
    }
    for name, value in (
        ("archivedAt", row.archived_at_ms),
        ("archiveReason", row.archive_reason),
        ("pinnedAt", row.pinned_at_ms),
        ("lastReadAt", row.last_read_at_ms),
        ("markedUnreadAt", row.marked_unread_at_ms),
        ("icon", row.icon),
        ("color", row.color),
        ("category", row.category),
    ):
        if value is not None:
            fields[name] = value
    return fields
