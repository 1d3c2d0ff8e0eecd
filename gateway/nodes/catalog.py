"""The node catalog: what ``node.list`` / ``node.describe`` show, each node's live command
surface, and the approval of new surfaces (:class:`NodeCatalog`)."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

from gateway.errors import invalid_request
from gateway.hub import Hub, now_ms
from gateway.nodes.inventory import catalog_fields
from gateway.nodes.invoke import InvokeRouter
from gateway.nodes.invoker import NodeInvoker
from gateway.nodes.policy import CommandPolicy
from gateway.peer import Peer
from gateway.state import GatewayState, NodePairRequest
from openclaw_desktop.protocol import EventName

__all__ = ["NodeCatalog", "node_request_wire", "reported_ip"]

log = logging.getLogger("gateway.nodes")


def reported_ip(address: str | None) -> str | None:
    """The client address the real gateway records: none for loopback (local) clients."""
    if not address:
        return None
    try:
        if ipaddress.ip_address(address.split("%")[0]).is_loopback:
            return None
    except ValueError:
        return None
    return address


def node_request_wire(request: NodePairRequest) -> dict[str, Any]:
    """A pending node surface as ``node.pair.list``/``node.pair.requested`` show it: the real
    gateway sends ``silent`` only when it is true."""
    wire = request.to_wire()
    if not wire.get("silent"):
        wire.pop("silent", None)
    return wire


class NodeCatalog:
    """Paired, pending and connected nodes, and their surfaces (no sockets here: a live node
    is its :class:`~gateway.peer.Peer` in the hub)."""

    def __init__(
        self, state: GatewayState, hub: Hub, policy: CommandPolicy, router: InvokeRouter
    ) -> None:
        self.state = state
        self.hub = hub
        self.policy = policy
        self.router = router
        #: Invoking a command on a live node (``node.invoke`` and the agent's node tools).
        self.invoker = NodeInvoker(state, hub, policy, router)

    def entries(self, viewer: Peer | None = None) -> list[dict[str, Any]]:
        """``node.list`` entries, as the real gateway's node catalog: paired node devices,
        approved surfaces, pending surface requests and live nodes; connected first, then by
        name. ``viewer`` without operator.pairing/admin sees no pending details."""
        now = now_ms()
        pending = {r.node_id: r for r in self.state.nodes.list_pending(now)}
        ids = (
            {d.device_id for d in self.state.devices.list() if "node" in d.roles}
            | {s.node_id for s in self.state.nodes.list_approved()}
            | set(pending)
            | set(self.hub.nodes)
        )
        entries = [self._node_entry(node_id, pending.get(node_id)) for node_id in ids]
        visible = [self._visible(e, viewer) for e in entries if e is not None]
        shown = [e for e in visible if e is not None]
        shown.sort(
            key=lambda e: (
                not e["connected"],
                str(e.get("displayName") or e["nodeId"]).lower(),
                e["nodeId"],
            )
        )
        return shown

    def entry(self, node_id: str, viewer: Peer | None = None) -> dict[str, Any] | None:
        """One node as ``node.describe`` shows it (None when unknown or not visible)."""
        entry = self._node_entry(node_id, self.pending_surface(node_id))
        return None if entry is None else self._visible(entry, viewer)

    @staticmethod
    def _visible(entry: dict[str, Any], viewer: Peer | None) -> dict[str, Any] | None:
        """The real ``safeNodeReadProjection``: pending details need pairing or admin."""
        if viewer is None or any(
            s in viewer.scopes for s in ("operator.admin", "operator.pairing")
        ):
            return entry
        if not entry["paired"] and not entry["connected"]:
            return None
        hidden = ("pendingDeclaredCaps", "pendingDeclaredCommands", "pendingDeclaredPermissions")
        safe = {k: v for k, v in entry.items() if k not in hidden}
        if entry["nodeId"] != viewer.device_id:
            safe.pop("pendingRequestId", None)
        return safe

    def _node_entry(self, node_id: str, pending: Any) -> dict[str, Any] | None:
        """One catalog row, field by field as the real ``buildEffectiveKnownNode``."""
        peer = self.hub.nodes.get(node_id)
        surface = self.state.nodes.approved(node_id)
        device = self.state.devices.get(node_id)
        node_device = device if device is not None and "node" in device.roles else None
        if peer is None and surface is None and node_device is None and pending is None:
            return None
        live = peer.client if peer is not None else {}

        def first(*values: Any) -> Any:
            for value in values:
                if isinstance(value, str) and value.strip():
                    return value.strip()
            return None

        seen: list[tuple[int, str | None]] = []
        if peer is not None:
            seen.append((peer.connected_at_ms, "connect"))
        if surface is not None and surface.last_seen_at_ms:
            seen.append((surface.last_seen_at_ms, surface.last_seen_reason))
        if surface is not None and surface.last_connected_at_ms:
            seen.append((surface.last_connected_at_ms, "connect"))
        if node_device is not None and node_device.last_seen_at_ms:
            seen.append((node_device.last_seen_at_ms, node_device.last_seen_reason))
        last_seen = max(seen, key=lambda item: item[0]) if seen else (None, None)
        connected_stamps = [
            t
            for t in (
                surface.last_connected_at_ms if surface else None,
                peer.connected_at_ms if peer else None,
            )
            if t is not None
        ]
        approved_caps = set(surface.caps) if surface else set()
        if peer is not None:
            caps = sorted({c for c in peer.caps if c in approved_caps})
            commands = sorted(set(peer.commands))
        else:
            caps = sorted(approved_caps)
            commands = sorted(set(surface.commands)) if surface else []
        approval = (
            ("pending-reapproval" if surface else "pending-approval")
            if pending is not None
            else ("approved" if surface else "unapproved")
        )
        entry: dict[str, Any] = {
            "nodeId": node_id,
            "displayName": first(
                surface.display_name if surface else None,
                live.get("displayName"),
                device.display_name if device else None,
                pending.display_name if pending else None,
            ),
            "platform": first(
                live.get("platform"),
                surface.platform if surface else None,
                device.platform if device else None,
                pending.platform if pending else None,
            ),
            "version": first(
                live.get("version"),
                surface.version if surface else None,
                pending.version if pending else None,
            ),
            "clientId": first(
                live.get("id"),
                device.client_id if device else None,
                pending.client_id if pending else None,
            ),
            "clientMode": first(
                live.get("mode"),
                device.client_mode if device else None,
                pending.client_mode if pending else None,
            ),
            "deviceFamily": first(
                live.get("deviceFamily"),
                surface.device_family if surface else None,
                pending.device_family if pending else None,
            ),
            "modelIdentifier": first(live.get("modelIdentifier")),  # kept by no record here
            "remoteIp": first(
                reported_ip(peer.remote_ip) if peer else None,
                surface.remote_ip if surface else None,
                device.remote_ip if device else None,
                pending.remote_ip if pending else None,
            ),
            "caps": caps,
            "commands": commands,
            "sessionHost": False,  # this gateway places no worker sessions on nodes
            **catalog_fields(peer, surface.last_host_stats if surface else None),
            "permissions": (dict(peer.permissions) if peer and peer.permissions else None)
            or (dict(surface.permissions) if surface and surface.permissions else None),
            "approvalState": approval,
            "pendingRequestId": pending.request_id if pending else None,
            "pendingDeclaredCaps": sorted(pending.caps) if pending else None,
            "pendingDeclaredCommands": sorted(pending.commands) if pending else None,
            "pendingDeclaredPermissions": dict(pending.permissions)
            if pending and pending.permissions
            else None,
            "connectedAtMs": peer.connected_at_ms if peer else None,
            "lastConnectedAtMs": max(connected_stamps) if connected_stamps else None,
            "lastDisconnectedAtMs": surface.last_disconnected_at_ms
            if surface and peer is None
            else None,
            "lastSeenAtMs": last_seen[0],
            "lastSeenReason": last_seen[1],
            "approvedAtMs": surface.approved_at_ms
            if surface
            else (node_device.approved_at_ms if node_device else None),
            "paired": node_device is not None or surface is not None,
            "connected": peer is not None,
        }
        return {k: v for k, v in entry.items() if v is not None}

    def pending_surface(self, node_id: str) -> Any:
        """The pending node-surface request of a node, if any."""
        for request in self.state.nodes.list_pending(now_ms()):
            if request.node_id == node_id:
                return request
        return None

    def surface_pending(self, peer: Peer) -> bool:
        """Whether the node's declared surface waits for approval."""
        return (
            bool(peer.declared_commands)
            and set(peer.declared_commands) - set(peer.commands) != set()
        )

    def node_connected(self, peer: Peer, declared: list[str], caps: list[str]) -> None:
        """Work out the node's live commands; ask for approval of anything new."""
        node_id = peer.device_id or ""
        allowed = self.policy.filter_declared(peer.platform, peer.device_family, caps, declared)
        peer.declared_commands = allowed
        peer.caps = list(caps)
        surface = self.state.nodes.approved(node_id)
        approved = set(surface.commands) if surface else set()
        peer.commands = [c for c in allowed if c in approved]
        if surface is not None:
            self.state.nodes.record_connection(node_id, peer.connected_at_ms)
        if set(allowed) - approved or (surface is None and allowed):
            self._request_surface(peer, allowed, caps)

    def node_disconnected(self, peer: Peer) -> None:
        """A node's socket is gone: fail its invokes at once and note when it left."""
        self.router.node_disconnected(peer)
        node_id = peer.device_id
        if node_id and node_id not in self.hub.nodes:
            try:
                self.state.nodes.record_disconnection(node_id, now_ms())
            except Exception as exc:  # closing down; the timestamp is informational
                log.debug("could not record the disconnection of %s: %s", node_id[:12], exc)

    def _request_surface(self, peer: Peer, commands: list[str], caps: list[str]) -> None:
        node_id = peer.device_id or ""
        client = peer.client
        outcome = self.state.nodes.request(
            node_id,
            commands=commands,
            caps=caps,
            permissions=peer.permissions or None,
            client_id=str(client.get("id")),
            client_mode=str(client.get("mode")),
            display_name=client.get("displayName"),
            platform=peer.platform,
            version=client.get("version"),
            device_family=peer.device_family,
            required_approve_scopes=self.policy.required_approve_scopes(commands),
            now_ms=now_ms(),
            remote_ip=reported_ip(peer.remote_ip),
        )
        for old in outcome.superseded:
            self.hub.broadcast(
                EventName.NODE_PAIR_RESOLVED,
                {"requestId": old, "nodeId": node_id, "decision": "rejected", "ts": now_ms()},
            )
        if outcome.created:
            self.hub.broadcast(EventName.NODE_PAIR_REQUESTED, node_request_wire(outcome.request))

    def resolve_surface(self, request_id: str, *, approved: bool) -> dict[str, Any]:
        """Approve or reject a node surface; the live node is told and updated at once."""
        now = now_ms()
        request = self.state.nodes.get(request_id, now)
        if request is None:
            raise invalid_request("unknown requestId")
        decision = "approved" if approved else "rejected"
        event = {
            "requestId": request_id,
            "nodeId": request.node_id,
            "decision": decision,
            "ts": now,
        }
        peer = self.hub.nodes.get(request.node_id)
        if approved:
            surface = self.state.nodes.approve(request_id, now)
            if peer is not None:
                peer.commands = [c for c in peer.declared_commands if c in surface.commands]
            result: dict[str, Any] = {"requestId": request_id, "node": surface.to_wire()}
        else:
            self.state.nodes.reject(request_id, now)
            result = {"requestId": request_id, "decision": "rejected"}
        self.hub.broadcast(EventName.NODE_PAIR_RESOLVED, event)
        if peer is not None:
            peer.send_event(EventName.NODE_PAIR_RESOLVED, event, seq=False)
        return result
