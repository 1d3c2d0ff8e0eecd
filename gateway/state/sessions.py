"""The chat sessions index: one row per session key (the transcript itself is a JSONL file).

Counters and status are what ``sessions.list`` reports without reading transcripts.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from gateway.state._db import Database

__all__ = ["ChatSession", "ChatSessions"]

_COLUMNS = (
    "session_key, session_id, agent_id, label, model, thinking, status, last_run_id, "
    "aborted_last_run, input_tokens, output_tokens, compactions, created_at_ms, updated_at_ms, "
    "archived_at_ms, archive_reason, pinned_at_ms, marked_unread_at_ms, last_read_at_ms, "
    "icon, color, category"
)
#: Fields :meth:`ChatSessions.update` may change.
_MUTABLE = frozenset(
    {
        "label",
        "model",
        "thinking",
        "status",
        "last_run_id",
        "aborted_last_run",
        "input_tokens",
        "output_tokens",
        "compactions",
        "archived_at_ms",
        "archive_reason",
        "pinned_at_ms",
        "marked_unread_at_ms",
        "last_read_at_ms",
        "icon",
        "color",
        "category",
    }
)


@dataclass(frozen=True, slots=True)
class ChatSession:
    """One row of the index."""

    key: str
    session_id: str
    agent_id: str
    label: str | None
    model: str | None
    thinking: str | None
    status: str
    last_run_id: str | None
    aborted_last_run: bool
    input_tokens: int
    output_tokens: int
    compactions: int
    created_at_ms: int
    updated_at_ms: int
    archived_at_ms: int | None = None
    archive_reason: str | None = None
    pinned_at_ms: int | None = None
    marked_unread_at_ms: int | None = None
    last_read_at_ms: int | None = None
    icon: str | None = None
    color: str | None = None
    category: str | None = None

    @classmethod
    def from_row(cls, row: Any) -> ChatSession:
        """Decode a database row."""
        return cls(
            key=row[0],
            session_id=row[1],
            agent_id=row[2],
            label=row[3],
            model=row[4],
            thinking=row[5],
            status=row[6],
            last_run_id=row[7],
            aborted_last_run=bool(row[8]),
            input_tokens=int(row[9]),
            output_tokens=int(row[10]),
            compactions=int(row[11]),
            created_at_ms=int(row[12]),
            updated_at_ms=int(row[13]),
            archived_at_ms=_int_or_none(row[14]),
            archive_reason=row[15],
            pinned_at_ms=_int_or_none(row[16]),
            marked_unread_at_ms=_int_or_none(row[17]),
            last_read_at_ms=_int_or_none(row[18]),
            icon=row[19],
            color=row[20],
            category=row[21],
        )


def _int_or_none(value: Any) -> int | None:
    return None if value is None else int(value)


class ChatSessions:
    """The ``chat_sessions`` table. Get one from :attr:`GatewayState.sessions`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: str) -> ChatSession | None:
        """The session under ``key`` (canonical), or None."""
        row = self._db.row(f"SELECT {_COLUMNS} FROM chat_sessions WHERE session_key = ?", (key,))
        return None if row is None else ChatSession.from_row(row)

    def list(self, limit: int = 100, offset: int = 0) -> list[ChatSession]:
        """Most recently updated first."""
        rows = self._db.rows(
            f"SELECT {_COLUMNS} FROM chat_sessions ORDER BY updated_at_ms DESC, session_key "
            "LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [ChatSession.from_row(r) for r in rows]

    def count(self) -> int:
        """How many sessions exist."""
        row = self._db.row("SELECT COUNT(*) FROM chat_sessions")
        return int(row[0]) if row else 0

    def ensure(
        self, key: str, agent_id: str, now_ms: int, *, label: str | None = None
    ) -> ChatSession:
        """The session under ``key``, created when missing."""
        with self._db.transaction():
            self._db.execute(
                "INSERT INTO chat_sessions (session_key, session_id, agent_id, label, "
                "created_at_ms, updated_at_ms) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session_key) DO NOTHING",
                (key, str(uuid.uuid4()), agent_id, label, now_ms, now_ms),
            )
        found = self.get(key)
        assert found is not None
        return found

    def update(self, key: str, now_ms: int, **changes: Any) -> ChatSession | None:
        """Change some fields (see ``_MUTABLE``); None when the session does not exist.

        Raises:
            ValueError: An unknown field.
        """
        unknown = set(changes) - _MUTABLE
        if unknown:
            raise ValueError(f"cannot update {', '.join(sorted(unknown))}")
        if changes:
            assignments = ", ".join(f"{name} = ?" for name in changes)
            values = [int(v) if isinstance(v, bool) else v for v in changes.values()]
            with self._db.transaction():
                self._db.execute(
                    f"UPDATE chat_sessions SET {assignments}, updated_at_ms = ? "
                    "WHERE session_key = ?",
                    (*values, now_ms, key),
                )
        return self.get(key)

    def add_usage(self, key: str, now_ms: int, input_tokens: int, output_tokens: int) -> None:
        """Add a run's token counts."""
        with self._db.transaction():
            self._db.execute(
                "UPDATE chat_sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ?, updated_at_ms = ? WHERE session_key = ?",
                (input_tokens, output_tokens, now_ms, key),
            )

    def renew(self, key: str, now_ms: int) -> ChatSession | None:
        """``sessions.reset``: a new session id, counters cleared."""
        with self._db.transaction():
            self._db.execute(
                "UPDATE chat_sessions SET session_id = ?, status = 'idle', last_run_id = NULL, "
                "aborted_last_run = 0, input_tokens = 0, output_tokens = 0, compactions = 0, "
                "updated_at_ms = ? WHERE session_key = ?",
                (str(uuid.uuid4()), now_ms, key),
            )
        return self.get(key)

    def mark_interrupted(self, now_ms: int) -> int:
        """At start: runs recorded as running were cut by a crash or kill; say so."""
        with self._db.transaction():
            cursor = self._db.execute(
                "UPDATE chat_sessions SET status = 'interrupted', updated_at_ms = ? "
                "WHERE status = 'running'",
                (now_ms,),
            )
        return cursor.rowcount

    def delete(self, key: str) -> bool:
        """Remove the row; False when there was none."""
        with self._db.transaction():
            cursor = self._db.execute("DELETE FROM chat_sessions WHERE session_key = ?", (key,))
        return cursor.rowcount > 0
