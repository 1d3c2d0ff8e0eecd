"""The gateway's shared state and behaviour, independent of sockets.

:class:`GatewayCore` owns the SQLite state, the hub of connected peers, the invoke router
and the command policy; the server hands it authenticated peers and their requests.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from gateway import __version__
from gateway.config import GatewayConfig
from gateway.errors import MethodError, invalid_request
from gateway.hub import Hub, now_ms
from gateway.methods import HANDLERS
from gateway.nodes.invoke import InvokeRouter
from gateway.nodes.policy import CommandPolicy
from gateway.peer import Peer
from gateway.ratelimit import AuthRateLimiter
from gateway.scopes import authorize
from gateway.setup_code import build_setup_payload, encode_setup_code, qr_png_data_url
from gateway.state import ApprovalKind, GatewayState, SetupAccess
from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = ["EVENTS", "GatewayCore"]

log = logging.getLogger("gateway.core")

#: Events this gateway may send (``hello-ok.features.events``).
EVENTS = [
    "connect.challenge",
    "tick",
    "presence",
    "health",
    "shutdown",
    "node.invoke.request",
    "node.invoke.cancel",
    "node.pair.requested",
    "node.pair.resolved",
    "device.pair.requested",
    "device.pair.resolved",
]


class GatewayCore:
    """Everything the methods need, in one place (no sockets here)."""

    def __init__(
        self,
        config: GatewayConfig,
        state: GatewayState,
        *,
        tls_fingerprint: str | None = None,
    ) -> None:
        self.config = config
        self.state = state
        self.tls_fingerprint = tls_fingerprint
        self.boot_id = str(uuid.uuid4())
        self.hub = Hub(self.boot_id)
        self.router = InvokeRouter()
        self.policy = CommandPolicy(config.nodes_allow, config.nodes_deny)
        self.public_urls: list[str] = []
        self.auth_limiter = AuthRateLimiter(
            config.auth_rate_limit_attempts,
            config.auth_rate_limit_window_ms,
            config.auth_rate_limit_lockout_ms,
        )
        self._started = time.monotonic()

    def uptime_ms(self) -> int:
        """Milliseconds since start."""
        return int((time.monotonic() - self._started) * 1000)

    @property
    def methods(self) -> list[str]:
        """Methods this gateway serves (``hello-ok.features.methods``)."""
        return sorted(HANDLERS)

    # ------------------------------------------------------------------ requests
    async def handle_request(self, peer: Peer, frame: dict[str, Any]) -> None:
        """Authorize, run and answer one request."""
        request_id: str = frame["id"]
        method: str = frame["method"]
        params = frame.get("params")
        denied = authorize(peer.role, peer.scopes, method, params)
        if denied is not None:
            peer.respond(request_id, False, error=denied)
            return
        handler = HANDLERS.get(method)
        if handler is None:
            peer.respond(
                request_id,
                False,
                error=error_shape(ErrorCode.INVALID_REQUEST, f"unknown method: {method}"),
            )
            return
        try:
            result = await handler(self, peer, params)
        except MethodError as exc:
            peer.respond(request_id, False, error=exc.shape)
        except Exception:
            log.exception("method %s failed", method)
            peer.respond(
                request_id, False, error=error_shape(ErrorCode.UNAVAILABLE, f"{method} failed")
            )
        else:
            peer.respond(request_id, True, result)

    # ------------------------------------------------------------------ nodes
    def node_entries(self) -> list[dict[str, Any]]:
        """``node.list`` entries: every approved or connected node."""
        ids = {s.node_id for s in self.state.nodes.list_approved()} | set(self.hub.nodes)
        entries = [self.node_entry(node_id) for node_id in sorted(ids)]
        return [e for e in entries if e is not None]

    def node_entry(self, node_id: str) -> dict[str, Any] | None:
        """One node as ``node.list`` / ``node.describe`` show it."""
        peer = self.hub.nodes.get(node_id)
        surface = self.state.nodes.approved(node_id)
        device = self.state.devices.get(node_id)
        if peer is None and surface is None:
            return None
        client = peer.client if peer else {}
        entry: dict[str, Any] = {
            "nodeId": node_id,
            "displayName": self.state.nodes.display_name(node_id)
            or client.get("displayName")
            or (device.display_name if device else None),
            "platform": client.get("platform") or (device.platform if device else None),
            "version": client.get("version"),
            "clientId": client.get("id") or (device.client_id if device else None),
            "clientMode": client.get("mode") or (device.client_mode if device else None),
            "deviceFamily": client.get("deviceFamily")
            or (device.device_family if device else None),
            "caps": list(peer.caps)
            if peer and peer.commands
            else list(surface.caps if surface else []),
            "commands": list(peer.commands) if peer else list(surface.commands if surface else []),
            "permissions": dict(peer.permissions) if peer else {},
            "approvalState": "approved" if surface is not None else "pending-approval",
            "paired": device is not None,
            "connected": peer is not None,
        }
        pending = self.pending_surface(node_id)
        if pending is not None:
            entry["approvalState"] = "pending-approval"
            entry["pendingRequestId"] = pending.request_id
            entry["pendingDeclaredCaps"] = list(pending.caps)
            entry["pendingDeclaredCommands"] = list(pending.commands)
        if peer is not None:
            entry["connectedAtMs"] = peer.connected_at_ms
            entry["remoteIp"] = peer.remote_ip
        if surface is not None:
            entry["approvedAtMs"] = surface.approved_at_ms
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
        if set(allowed) - approved or (surface is None and allowed):
            self._request_surface(peer, allowed, caps)

    def _request_surface(self, peer: Peer, commands: list[str], caps: list[str]) -> None:
        node_id = peer.device_id or ""
        client = peer.client
        outcome = self.state.nodes.request(
            node_id,
            commands=commands,
            caps=caps,
            permissions=peer.permissions,
            client_id=str(client.get("id")),
            client_mode=str(client.get("mode")),
            display_name=client.get("displayName"),
            platform=peer.platform,
            version=client.get("version"),
            device_family=peer.device_family,
            required_approve_scopes=self.policy.required_approve_scopes(commands),
            now_ms=now_ms(),
            remote_ip=peer.remote_ip,
        )
        for old in outcome.superseded:
            self.hub.broadcast(
                "node.pair.resolved",
                {"requestId": old, "nodeId": node_id, "decision": "rejected", "ts": now_ms()},
            )
        if outcome.created:
            self.hub.broadcast("node.pair.requested", outcome.request.to_wire())

    def resolve_node_surface(self, request_id: str, *, approved: bool) -> dict[str, Any]:
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
        self.hub.broadcast("node.pair.resolved", event)
        if peer is not None:
            peer.send_event("node.pair.resolved", event, seq=False)
        return result

    # ------------------------------------------------------------------ devices
    def approve_device_request(
        self, request_id: str, *, approved_via: ApprovalKind
    ) -> dict[str, Any]:
        """Approve a pending device pairing request."""
        now = now_ms()
        request = self.state.pairing.resolve(request_id, "approved", now, approved_via=approved_via)
        if request is None:
            raise invalid_request("unknown requestId")
        device = self.state.devices.get(request.device_id)
        if device is None:
            raise invalid_request("unknown requestId")
        self.hub.broadcast(
            "device.pair.resolved",
            {
                "requestId": request_id,
                "deviceId": request.device_id,
                "decision": "approved",
                "ts": now,
            },
        )
        return device.to_wire()

    def reject_device_request(self, request_id: str) -> None:
        """Reject a pending device pairing request."""
        now = now_ms()
        request = self.state.pairing.resolve(request_id, "rejected", now)
        if request is not None:
            self.hub.broadcast(
                "device.pair.resolved",
                {
                    "requestId": request_id,
                    "deviceId": request.device_id,
                    "decision": "rejected",
                    "ts": now,
                },
            )

    async def disconnect_device(self, device_id: str, reason: str) -> None:
        """Close every connection of a device (after it was removed)."""
        for peer in list(self.hub.peers.values()):
            if peer.device_id == device_id:
                await peer.ws.close(1008, reason)

    # ------------------------------------------------------------------ setup codes
    def mint_setup_code(self, *, access: SetupAccess = "full") -> dict[str, Any]:
        """A single-use setup code for a phone (bootstrap token, 10 minutes)."""
        token, record = self.state.bootstrap.mint(now_ms(), access=access)
        urls = self.public_urls or [
            f"{'wss' if self.config.tls else 'ws'}://127.0.0.1:{self.config.port}"
        ]
        payload = build_setup_payload(urls[0], urls, token)
        code = encode_setup_code(payload)
        return {
            "setupId": record.setup_id,
            "expiresAtMs": record.expires_at_ms,
            "setupCode": code,
            "qrDataUrl": qr_png_data_url(code),
            "gatewayUrl": urls[0],
            "auth": "bootstrap-token",
            "urlSource": "bind" if self.public_urls else "loopback",
            "access": access,
        }

    # ------------------------------------------------------------------ hello
    def hello_payload(self, peer: Peer, auth: dict[str, Any]) -> dict[str, Any]:
        """The ``hello-ok`` payload for a freshly authenticated peer."""
        return {
            "type": "hello-ok",
            "protocol": 4,
            "server": {"version": __version__, "bootId": self.boot_id, "connId": peer.conn_id},
            "features": {"methods": self.methods, "events": EVENTS, "capabilities": []},
            "snapshot": {
                "presence": self.hub.presence(),
                "health": {"ok": True},
                "stateVersion": self.hub.state_version(),
                "uptimeMs": self.uptime_ms(),
                "sessionDefaults": {
                    "defaultAgentId": "main",
                    "mainKey": "main",
                    "mainSessionKey": "agent:main:main",
                    "scope": "per-sender",
                },
                "authMode": self.config.auth_mode,
            },
            "auth": auth,
            "policy": {
                "maxPayload": 25 * 1024 * 1024,
                "maxBufferedBytes": 50 * 1024 * 1024,
                "tickIntervalMs": self.config.tick_interval_ms,
            },
        }
