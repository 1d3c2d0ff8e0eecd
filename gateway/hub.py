"""Connected peers, presence and scope-filtered broadcasts.

When asked (:mod:`gateway.wire_check`), each event the hub sends is checked against its
payload model once, before it goes to its peers.
"""

from __future__ import annotations

import logging
import socket
import time
from typing import TYPE_CHECKING, Any

from gateway import __version__
from gateway.chat_timing import SendTimings
from gateway.scopes import PAIRING, READ, TALK, scope_satisfied
from gateway.subscriptions import SessionSubscriptions
from gateway.wire_check import check_event, checking_events
from openclaw_desktop.protocol import EventName, OperatorScope

if TYPE_CHECKING:
    from gateway.peer import Peer

__all__ = ["EVENT_SCOPES", "Hub", "now_ms"]

log = logging.getLogger("gateway.hub")

#: Events that need a scope (others go to every authenticated operator).
EVENT_SCOPES: dict[EventName, OperatorScope] = {
    EventName.CHAT: READ,
    EventName.AGENT: READ,
    EventName.NODE_PAIR_REQUESTED: PAIRING,
    EventName.NODE_PAIR_RESOLVED: PAIRING,
    EventName.DEVICE_PAIR_REQUESTED: PAIRING,
    EventName.DEVICE_PAIR_RESOLVED: PAIRING,
    EventName.NODE_HOST_STATS: READ,
    EventName.SESSIONS_CHANGED: READ,
    EventName.SESSION_COMPACTED: READ,
    EventName.SESSION_MESSAGE: READ,
    EventName.PRESENCE: READ,
    EventName.TALK_MODE: TALK,
    EventName.TALK_EVENT: READ,
    EventName.CHAT_SEND_TIMING: READ,
}


def now_ms() -> int:
    """Wall clock in ms."""
    return int(time.time() * 1000)


class Hub:
    """Who is connected; presence entries and broadcasts with ``stateVersion``."""

    def __init__(self, instance_id: str) -> None:
        self.peers: dict[str, Peer] = {}
        self.nodes: dict[str, Peer] = {}
        self.instance_id = instance_id
        self.presence_version = 1
        self.health_version = 1
        #: Who subscribed to ``sessions.changed`` / ``session.message`` (only they get them).
        self.sessions = SessionSubscriptions()
        #: The UI clients' ``chat.send`` runs whose phases go to their sender.
        self.send_timings = SendTimings(self.send_to)
        #: Whether each event sent is checked against its model (:func:`check_event`).
        self.check_events = checking_events()

    def send_to(self, conn_id: str, event: EventName, payload: Any) -> None:
        """Send an event to one connection, if it is still there and may see it."""
        if self.check_events:
            check_event(event, payload)
        peer = self.peers.get(conn_id)
        needed = EVENT_SCOPES.get(event)
        if peer is not None and (needed is None or scope_satisfied(needed, peer.scopes)):
            peer.send_event(event, payload, checked=self.check_events)

    def add(self, peer: Peer) -> None:
        """Register an authenticated peer (a node replaces its older connection)."""
        self.peers[peer.conn_id] = peer
        if peer.is_node and peer.device_id:
            self.nodes[peer.device_id] = peer
        self.presence_changed()

    def remove(self, peer: Peer) -> None:
        """Forget a peer."""
        self.peers.pop(peer.conn_id, None)
        self.sessions.drop(peer.conn_id)
        if peer.is_node and peer.device_id and self.nodes.get(peer.device_id) is peer:
            del self.nodes[peer.device_id]
        self.presence_changed()

    @property
    def operators(self) -> list[Peer]:
        """Connected operators."""
        return [p for p in self.peers.values() if not p.is_node]

    def state_version(self) -> dict[str, int]:
        """``{presence, health}``."""
        return {"presence": self.presence_version, "health": self.health_version}

    def presence(self) -> list[dict[str, Any]]:
        """Presence entries: the gateway itself, then each connected client."""
        host = socket.gethostname()
        entries: list[dict[str, Any]] = [
            {
                "host": host,
                "version": __version__,
                "platform": "python",
                "mode": "gateway",
                "reason": "self",
                "instanceId": self.instance_id,
                "text": f"Gateway: {host} · app {__version__} · mode gateway · reason self",
                "ts": now_ms(),
            }
        ]
        for peer in self.peers.values():
            client = peer.client
            name = client.get("displayName") or client.get("id")
            kind = "Node" if peer.is_node else "Client"
            entry: dict[str, Any] = {
                "host": name,
                "clientId": client.get("id"),
                "version": client.get("version"),
                "platform": client.get("platform"),
                "mode": client.get("mode"),
                "roles": [peer.role],
                # As the real gateway: a node is known by its device id.
                "instanceId": (peer.device_id if peer.is_node else None)
                or client.get("instanceId")
                or peer.device_id
                or peer.conn_id,
                "reason": "connect",
                "ts": peer.connected_at_ms,
                "text": f"{kind}: {name} · mode {client.get('mode')}",
            }
            if client.get("deviceFamily"):
                entry["deviceFamily"] = client["deviceFamily"]
            if peer.device_id:
                entry["deviceId"] = peer.device_id
            if peer.scopes:
                entry["scopes"] = list(peer.scopes)
            entries.append(entry)
        return entries

    def presence_changed(self) -> None:
        """Bump the presence version and tell operators."""
        self.presence_version += 1
        self.broadcast(EventName.PRESENCE, {"presence": self.presence()}, state_version=True)

    def health_changed(self, snapshot: dict[str, Any]) -> None:
        """Bump the health version and send operators the new ``health`` snapshot."""
        self.health_version += 1
        self.broadcast(EventName.HEALTH, snapshot, state_version=True)

    def broadcast(
        self,
        event: EventName,
        payload: Any,
        *,
        state_version: bool = False,
        cap: str | None = None,
    ) -> None:
        """Send an event to every operator allowed to see it (and, with ``cap``, only to
        those that advertised that client capability, e.g. ``tool-events``)."""
        if self.check_events:
            check_event(event, payload)
        needed = EVENT_SCOPES.get(event)
        version = self.state_version() if state_version else None
        subscribed = self.sessions.receivers(event, payload)
        for peer in self.operators:
            if cap is not None and cap not in peer.caps:
                continue
            if subscribed is not None and peer.conn_id not in subscribed:
                continue
            if needed is None or scope_satisfied(needed, peer.scopes):
                peer.send_event(event, payload, state_version=version, checked=self.check_events)
