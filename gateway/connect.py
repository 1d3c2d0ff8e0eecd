"""The I/O side of one ``connect``: the server's connection class, what the decision reads
from the request and the state, carrying out its effects, hello-ok and the peer.

The decision itself is :func:`gateway.handshake.decide.decide` (no I/O). Closed schema
first, then the decision; a rejection is raised as
:class:`~gateway.handshake.ConnectRejection` for the server to answer and close with.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import uuid
from collections.abc import Callable
from typing import Any, Protocol, cast

from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode
from websockets.protocol import State
from websockets.server import ServerProtocol

from gateway import handshake as hs
from gateway.app import GatewayApp
from gateway.config import GatewayConfig
from gateway.handshake import decision as d
from gateway.handshake.decide import decide
from gateway.hub import now_ms
from gateway.nodes.inventory import NodeInventory
from gateway.peer import Peer
from gateway.peer_transport import WebSocketTransport
from gateway.proxies import Attribution, has_forwarding_headers
from gateway.ratelimit import AuthRateLimiter
from gateway.state import GatewayState
from gateway.state.records import BootstrapRecord, DeviceRecord, PairingRequest, TokenRecord

__all__ = [
    "DecisionStateView",
    "GatewayServerConnection",
    "StateHost",
    "admit",
    "perform",
    "run_decision",
]

log = logging.getLogger("gateway.connect")


class _GatewayProtocol(ServerProtocol):
    """Closes an oversized frame with 1009 and no reason, as the real gateway's ``ws`` layer
    does (websockets would put ``"frame with N bytes exceeds limit of M bytes"`` there)."""

    def fail(self, code: CloseCode | int, reason: str = "") -> None:
        super().fail(code, "" if code == CloseCode.MESSAGE_TOO_BIG else reason)


class GatewayServerConnection(ServerConnection):
    """The server's connection class (``serve(create_connection=...)``): see
    :class:`_GatewayProtocol`. It also remembers the client the upgrade was attributed to
    (:mod:`gateway.proxies`) and whether the peer sent anything since the upgrade (the
    pre-auth budget never evicts a socket that did)."""

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        if type(protocol) is ServerProtocol:
            protocol.__class__ = _GatewayProtocol
        super().__init__(protocol, *args, **kwargs)
        self.attribution: Attribution | None = None
        self.heard = False

    def data_received(self, data: bytes) -> None:
        if self.protocol.state is State.OPEN:
            self.heard = True
        super().data_received(data)

    @property
    def gone(self) -> bool:
        """Whether the connection is closing or closed."""
        return self.transport.is_closing() or self.protocol.state is State.CLOSED

    def evict(self) -> None:
        """Drop the connection at once, without a closing handshake."""
        self.transport.abort()


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class StateHost(Protocol):
    """What :class:`DecisionStateView` reads of the gateway: its settings, its state and
    its auth rate limiter."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def state(self) -> GatewayState: ...
    @property
    def auth_limiter(self) -> AuthRateLimiter: ...


class DecisionStateView:
    """The connect decision's read-only view of the gateway (:class:`~gateway.handshake.
    decision.StateView`): live reads of the state, the settings and the auth rate limiter."""

    def __init__(self, host: StateHost) -> None:
        self._host = host

    @property
    def policy(self) -> GatewayConfig:
        return self._host.config

    def retry_after_ms(self, address: str, now_ms: int) -> int | None:
        return self._host.auth_limiter.retry_after_ms(address, now_ms)

    def device(self, device_id: str) -> DeviceRecord | None:
        return self._host.state.devices.get(device_id)

    def token(self, device_id: str, role: str) -> TokenRecord | None:
        return self._host.state.tokens.get(device_id, role)

    def verify_token(self, device_id: str, role: str, token: str) -> TokenRecord | None:
        return self._host.state.tokens.verify(device_id, role, token)

    def setup_profile_name(self, record: BootstrapRecord) -> str:
        return self._host.state.bootstrap.profile_of(record)

    def pairing_request(self, request_id: str, now_ms: int) -> PairingRequest | None:
        return self._host.state.pairing.get(request_id, now_ms)

    def pairing_requests_for(self, device_id: str, now_ms: int) -> list[PairingRequest]:
        return self._host.state.pairing.for_device(device_id, now_ms)


def perform(app: GatewayApp, effect: d.Effect) -> object:
    """Carry out one effect of the decision; its result goes back to the decision."""
    state = app.state
    match effect:
        case d.LimiterReset(address=address):
            app.auth_limiter.reset(address)
        case d.LimiterFailure(address=address, now_ms=now):
            app.auth_limiter.record_failure(address, now)
        case d.RedeemSetupCode():
            return state.bootstrap.redeem(
                effect.token,
                effect.device_id,
                effect.public_key,
                effect.now_ms,
                admit=effect.admit,
                request=effect.request,
            )
        case d.ApproveDevice():
            if effect.described is not None:
                return state.devices.approve(
                    effect.device_id,
                    effect.public_key,
                    approved_via=effect.approved_via,
                    **effect.described.as_kwargs(),
                )
            return state.devices.approve(
                effect.device_id,
                effect.public_key,
                role=effect.role,
                scopes=effect.scopes,
                approved_via=effect.approved_via,
                now_ms=effect.now_ms,
            )
        case d.RequestPairing():
            return state.pairing.request(
                effect.device_id,
                effect.public_key,
                silent=effect.silent,
                **effect.described.as_kwargs(),
            )
        case d.ResolvePairing():
            approved = state.pairing.resolve(
                effect.request_id, "approved", effect.now_ms, approved_via="silent"
            )
            if approved is not None:
                log.info("device pairing auto-approved device=%s", effect.device_id[:12])
            return approved
        case d.Broadcast(event=event, payload=payload):
            app.hub.broadcast(event, payload)
        case d.IssueToken():
            tokens = state.tokens
            issue = tokens.rotate if effect.rotate else tokens.issue
            return issue(effect.device_id, effect.role, effect.scopes, effect.now_ms)
        case d.RedeemSetupLeg():
            return state.bootstrap.redeem_leg(effect.record, effect.role, effect.scopes)
        case d.ConsumeSetupCode():
            state.bootstrap.consume(effect.setup_id, effect.now_ms)
        case d.ConfirmSetupDelivery():
            state.bootstrap.confirm_delivery(effect.setup_id)
        case d.RecordUse():
            now = now_ms()
            state.devices.touch(effect.device_id, now, effect.remote_ip, platform=effect.platform)
            if effect.token_used:
                state.tokens.mark_used(effect.device_id, effect.role, now)
    return None


def run_decision(
    decision: d.Decision, carry_out: Callable[[d.Effect], object]
) -> d.Admitted | hs.ConnectRejection:
    """Drive a decision to its end, carrying out each effect as it is yielded."""
    result: object = None
    while True:
        try:
            effect = decision.send(result)
        except StopIteration as stop:
            return cast("d.Admitted | hs.ConnectRejection", stop.value)
        result = carry_out(effect)


async def admit(
    app: GatewayApp,
    ws: ServerConnection,
    request_id: str,
    raw_params: Any,
    *,
    nonce: str,
    address: str,
) -> Peer:
    """Admit one client or raise :class:`~gateway.handshake.ConnectRejection`."""
    params = hs.validate_connect_params(raw_params)
    headers = ws.request.headers if ws.request is not None else None
    context = d.ConnectContext(
        address=address,
        # A forwarded request got here only through a trusted proxy (gateway.proxies): its
        # client is the one the proxy vouches for, and never local.
        local=_is_loopback(address) and not has_forwarding_headers(headers),
        origin=headers.get("Origin") if headers is not None else None,
        host=headers.get("Host") if headers is not None else None,
        nonce=nonce,
        now_ms=now_ms(),
        tls=app.config.tls,
    )
    outcome = run_decision(
        decide(params, context, DecisionStateView(app)), lambda effect: perform(app, effect)
    )
    if isinstance(outcome, hs.ConnectRejection):
        raise outcome
    peer = Peer(
        transport=WebSocketTransport(ws),
        conn_id=str(uuid.uuid4()),
        role=outcome.role,
        scopes=outcome.scopes,
        client=outcome.client.to_wire(),
        device_id=outcome.device_id,
        remote_ip=address,
        permissions=dict(params.permissions or {}),
        caps=list(params.caps or []),
        connected_at_ms=now_ms(),
        auth_method=outcome.auth_method,
        inventory=NodeInventory(path_env=params.path_env if outcome.role == "node" else None),
    )
    peer.start()
    peer.respond(request_id, True, app.hello_payload(peer, outcome.hello_auth))
    for effect in outcome.after_hello:
        peer.after_sent(functools.partial(perform, app, effect))
    app.hub.add(peer)
    if peer.role == "node":
        app.nodes.node_connected(peer, list(params.commands or []), list(params.caps or []))
    log.info(
        "%s %s connected from %s (%s)",
        peer.role,
        (peer.device_id or peer.conn_id)[:12],
        address,
        outcome.auth_method,
    )
    return peer
