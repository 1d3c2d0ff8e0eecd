"""Who asked for session events: ``sessions.subscribe`` and ``sessions.messages.subscribe``.

As the reference gateway: a connection that called ``sessions.subscribe`` gets
``sessions.changed`` for every session and ``session.message`` for every session; one that
called ``sessions.messages.subscribe {key}`` gets ``session.message`` for that session only.
Nobody else gets either event. A subscription lasts until ``sessions.messages.unsubscribe``
(there is no ``sessions.unsubscribe`` on the reference) or the connection closes.
"""

from __future__ import annotations

from typing import Any

from openclaw_desktop.protocol import EventName

__all__ = ["ROUTED_EVENTS", "SessionSubscriptions"]

#: The events this registry decides the receivers of.
ROUTED_EVENTS = frozenset({EventName.SESSIONS_CHANGED, EventName.SESSION_MESSAGE})


class SessionSubscriptions:
    """Connection ids subscribed to session events (all sessions, or some session keys)."""

    def __init__(self) -> None:
        self._all: set[str] = set()
        self._by_key: dict[str, set[str]] = {}

    def subscribe_all(self, conn_id: str) -> None:
        """``sessions.subscribe``: every session's ``sessions.changed`` and messages."""
        self._all.add(conn_id)

    def subscribe_messages(self, conn_id: str, key: str) -> None:
        """``sessions.messages.subscribe {key}``: that session's ``session.message``."""
        self._by_key.setdefault(key, set()).add(conn_id)

    def unsubscribe_messages(self, conn_id: str, key: str) -> None:
        """``sessions.messages.unsubscribe {key}`` (nothing to do when not subscribed)."""
        conns = self._by_key.get(key)
        if conns is None:
            return
        conns.discard(conn_id)
        if not conns:
            del self._by_key[key]

    def drop(self, conn_id: str) -> None:
        """Forget every subscription of a closed connection."""
        self._all.discard(conn_id)
        for key in [k for k, conns in self._by_key.items() if conn_id in conns]:
            self.unsubscribe_messages(conn_id, key)

    def any(self) -> bool:
        """Whether anyone is subscribed to anything (cheap; safe to read from a thread)."""
        return bool(self._all) or bool(self._by_key)

    def subscribed_all(self, conn_id: str) -> bool:
        """Whether ``conn_id`` called ``sessions.subscribe``."""
        return conn_id in self._all

    def message_keys(self, conn_id: str) -> list[str]:
        """The session keys ``conn_id`` follows the messages of, sorted."""
        return sorted(k for k, conns in self._by_key.items() if conn_id in conns)

    def receivers(self, event: EventName, payload: Any) -> set[str] | None:
        """The connection ids that may get ``event``, or None when it is not routed here."""
        if event not in ROUTED_EVENTS:
            return None
        if event == EventName.SESSIONS_CHANGED:
            return set(self._all)
        key = payload.get("sessionKey") if isinstance(payload, dict) else None
        return self._all | self._by_key.get(key, set()) if isinstance(key, str) else set()
