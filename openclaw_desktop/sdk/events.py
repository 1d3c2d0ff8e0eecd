"""Normalized, replayable events of the app SDK.

Every gateway ``chat`` / ``agent`` / ``sessions.*`` / approval event becomes zero or more
:class:`Event` objects of a small closed set of types (see :data:`EVENT_TYPES`), so apps never
need the raw frames for ordinary UI.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EVENT_TYPES", "Event", "now_ms"]

#: Every normalized event type.
EVENT_TYPES = frozenset(
    {
        "run.created",
        "run.queued",
        "run.started",
        "run.completed",
        "run.failed",
        "run.cancelled",
        "run.timed_out",
        "assistant.delta",
        "assistant.message",
        "thinking.delta",
        "tool.call.started",
        "tool.call.delta",
        "tool.call.completed",
        "tool.call.failed",
        "approval.requested",
        "approval.resolved",
        "session.created",
        "session.updated",
        "session.compacted",
        "stream.reset",
    }
)


def now_ms() -> int:
    """Wall-clock milliseconds."""
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Event:
    """One normalized event.

    Attributes:
        version: schema version (1).
        id: a stable replay cursor: the same gateway event always yields the same id, ids of
            one run sort in stream order (see :func:`event_id`), so ``run.events(after=id)``
            can resume without duplicates.
        ts: milliseconds since the epoch (the gateway's when it sent one, else receipt time).
        type: one of :data:`EVENT_TYPES`.
        run_id, session_key, agent_id: where it belongs, when known.
        data: the type's fields (documented per type in the README).
        raw: the gateway frame payload(s) it came from, for debugging only.
    """

    id: str
    ts: int
    type: str
    data: dict[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    session_key: str | None = None
    agent_id: str | None = None
    raw: Any = None
    version: int = 1

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape ``{version, id, ts, type, runId?, sessionKey?, agentId?, data, raw}``."""
        out: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "ts": self.ts,
            "type": self.type,
        }
        if self.run_id is not None:
            out["runId"] = self.run_id
        if self.session_key is not None:
            out["sessionKey"] = self.session_key
        if self.agent_id is not None:
            out["agentId"] = self.agent_id
        out["data"] = self.data
        out["raw"] = self.raw
        return out
