"""The gateway's shared state and behaviour, independent of sockets.

:class:`GatewayCore` owns the SQLite state, the hub of connected peers, the invoke router
and the command policy; the server hands it authenticated peers and their requests.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from gateway import __version__
from gateway.config import GatewayConfig
from gateway.errors import MethodError, invalid_request
from gateway.hello import hello_ok
from gateway.hub import Hub, now_ms
from gateway.methods import TABLE
from gateway.methods.models import CAPABILITIES as SERVER_CAPS
from gateway.methods.nodes import node_request_wire
from gateway.nodes.inventory import catalog_fields
from gateway.nodes.invoke import InvokeRouter
from gateway.nodes.policy import CommandPolicy
from gateway.peer import Peer
from gateway.ratelimit import AuthRateLimiter
from gateway.request_gate import refuse
from gateway.rpc import CURRENT_REQUEST_ID
from gateway.setup_code import build_setup_payload, encode_setup_code, qr_png_data_url
from gateway.state import ApprovalKind, GatewayState
from gateway.state.bootstrap import SetupProfile
from openclaw_desktop.protocol import ErrorCode, ServerInfo, error_shape

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.talk.service import TalkService

__all__ = ["EVENTS", "GatewayCore", "reported_ip"]

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
    "node.hostStats",
    "device.pair.requested",
    "device.pair.resolved",
    "chat",
    "agent",
    "sessions.changed",
    "session.message",
    "session.compacted",
    "talk.mode",
    "talk.event",
]


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
        self._background: set[asyncio.Task[None]] = set()
        #: Chat runs and sessions; set by the server once it starts.
        self.chat: ChatService | None = None
        #: Talk sessions, mode and speech; started by :meth:`talk_service` on first use.
        self.talk: TalkService | None = None
        self._talk_lock = asyncio.Lock()

    async def talk_service(self) -> TalkService:
        """The talk service, started on first use: reading ``talk.json`` and the speech
        providers (and loading their code) is left out of the gateway's start, which serves
        handshakes first."""
        if self.talk is None:
            async with self._talk_lock:
                if self.talk is None:
                    from gateway.talk.setup import start_talk

                    self.talk = await start_talk(self)
        return self.talk

    def health_snapshot(self) -> dict[str, Any]:
        """What ``health`` events carry (and ``hello-ok.snapshot.health``)."""
        return {
            "ok": True,
            "ts": now_ms(),
            "uptimeMs": self.uptime_ms(),
            "nodes": {"connected": len(self.hub.nodes)},
            "clients": {"connected": len(self.hub.peers)},
            "invokes": {"pending": self.router.pending_count},
        }

    def uptime_ms(self) -> int:
        """Milliseconds since start."""
        return int((time.monotonic() - self._started) * 1000)

    @property
    def methods(self) -> list[str]:
        """Methods this gateway serves (``hello-ok.features.methods``)."""
        return TABLE.names()

    # ------------------------------------------------------------------ requests
    async def handle_request(
        self, peer: Peer, frame: dict[str, Any], *, may_nest: bool = True
    ) -> None:
        """Authorize, run and answer one request: exactly one response, whatever happens.
        ``may_nest`` False says the frame's text has too few brackets to nest too deep,
        which spares walking its params."""
        request_id: str = frame["id"]
        method: str = frame["method"]
        params = frame.get("params")
        try:
            refusal = refuse(self, peer, method, params, may_nest=may_nest)
            if refusal is not None:
                peer.respond(request_id, False, error=refusal)
                return
            CURRENT_REQUEST_ID.set(request_id)  # this request's own task: no reset needed
            result = await TABLE[method].handler(self, peer, params)
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
    def node_entries(self, viewer: Peer | None = None) -> list[dict[str, Any]]:
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

    def node_entry(self, node_id: str, viewer: Peer | None = None) -> dict[str, Any] | None:
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
                "node.pair.resolved",
                {"requestId": old, "nodeId": node_id, "decision": "rejected", "ts": now_ms()},
            )
        if outcome.created:
            self.hub.broadcast("node.pair.requested", node_request_wire(outcome.request))

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

    def disconnect_device(
        self, device_id: str, reason: str, *, role: str | None = None, code: int = 1008
    ) -> None:
        """Close the device's connections (only ``role``'s, when given) in the background,
        after whatever they were sent so far, including the response being answered now (a
        device that revokes its own token still gets the answer), went out."""
        targets = [
            p
            for p in self.hub.peers.values()
            if p.device_id == device_id and (role is None or p.role == role)
        ]
        if not targets:
            return

        async def close_all() -> None:
            await asyncio.sleep(0)  # let the current request's response be queued first
            await asyncio.gather(
                *(peer.close(code, reason) for peer in targets), return_exceptions=True
            )

        task = asyncio.get_running_loop().create_task(close_all(), name="disconnect-device")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain_background(self, timeout: float) -> None:
        """Wait (bounded) for background work such as pending disconnects."""
        if self._background:
            await asyncio.wait(set(self._background), timeout=timeout)
        for task in list(self._background):
            task.cancel()

    # ------------------------------------------------------------------ setup codes
    def mint_setup_code(
        self,
        *,
        access: SetupProfile = "full",
        public_url: str | None = None,
        include_qr: bool = True,
    ) -> dict[str, Any]:
        """A single-use setup code for a phone (bootstrap token, 10 minutes): the
        ``device.pair.setupCode`` result, shaped as the real gateway's.

        Args:
            access: The code's profile: ``full``, ``limited``, ``node`` or ``voice-node``.
            public_url: A URL the caller already normalized and checked (the request's
                ``publicUrl``); else this gateway's LAN URLs, or loopback.
            include_qr: Add ``qrDataUrl`` (a PNG data URL of the code).

        As the real gateway, full access through a plaintext URL that is not loopback is
        minted as limited (``accessDowngraded``), and a voice-node code reports ``access``
        ``limited``.
        """
        from urllib.parse import urlsplit

        def full_access_url(url: str) -> bool:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower()
            if parts.scheme == "wss":
                return True
            try:
                loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = False
            return parts.scheme == "ws" and loopback

        if public_url is not None:
            urls, source = [public_url], "request.publicUrl"
        elif self.public_urls:
            urls, source = list(self.public_urls), "gateway.bind=lan"
        else:
            scheme = "wss" if self.config.tls else "ws"
            urls, source = [f"{scheme}://127.0.0.1:{self.config.port}"], "loopback"
        downgraded = access == "full" and not all(full_access_url(u) for u in urls)
        issued: SetupProfile = "limited" if downgraded else access
        token, record = self.state.bootstrap.mint(now_ms(), access=issued)
        # As the real gateway: the expiry always, the TLS pin for this gateway's own wss://
        # URL (not for a publicUrl, which may be a proxy with another certificate).
        own_tls = public_url is None and urls[0].startswith("wss://")
        pin = self.tls_fingerprint if own_tls else None
        payload = build_setup_payload(
            urls[0], urls, token, expires_at_ms=record.expires_at_ms, tls_fingerprint=pin
        )
        code = encode_setup_code(payload)
        result: dict[str, Any] = {
            "setupId": record.setup_id,
            "expiresAtMs": record.expires_at_ms,
            "setupCode": code,
        }
        if include_qr:
            result["qrDataUrl"] = qr_png_data_url(code)
        result["gatewayUrl"] = urls[0]
        if len(urls) > 1:
            result["gatewayUrls"] = urls
        result["auth"] = self.config.auth_mode
        result["urlSource"] = source
        result["access"] = "limited" if issued == "voice-node" else issued
        if downgraded:
            result["accessDowngraded"] = True
        return result

    # ------------------------------------------------------------------ hello
    def hello_payload(self, peer: Peer, auth: dict[str, Any]) -> dict[str, Any]:
        """The ``hello-ok`` payload for a freshly authenticated peer (from its model)."""
        return hello_ok(
            server=ServerInfo(version=__version__, boot_id=self.boot_id, conn_id=peer.conn_id),
            methods=self.methods,
            events=EVENTS,
            capabilities=SERVER_CAPS,
            snapshot={
                "presence": self.hub.presence(),
                "health": self.health_snapshot(),
                "stateVersion": self.hub.state_version(),
                "uptimeMs": self.uptime_ms(),
                "authMode": self.config.auth_mode,
            },
            auth=auth,
            tick_interval_ms=self.config.tick_interval_ms,
        )
