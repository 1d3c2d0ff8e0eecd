"""Admission of one ``connect``: validation, device proof, credentials, pairing gate, hello.

The checks run in the real gateway's order so the same bad input gets the same answer:
closed schema, protocol range, role, device proof, credentials, then device pairing.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import uuid
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode
from websockets.protocol import State
from websockets.server import ServerProtocol

from gateway import handshake as hs
from gateway.connect_rules import (
    _Auth,
    _code_profile,
    _token_covers,
)
from gateway.core import GatewayCore
from gateway.handshake.deviceless import deviceless_scopes
from gateway.hub import now_ms
from gateway.nodes.inventory import NodeInventory
from gateway.pairing_gate import (
    _node_host_client,
    _pairing_gate,
)
from gateway.peer import Peer
from gateway.proxies import Attribution, has_forwarding_headers
from openclaw_desktop.protocol import ConnectParams

__all__ = ["GatewayServerConnection", "admit"]

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


def _secret_equal(given: str | None, expected: str | None) -> bool:
    if given is None or expected is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _shared_secret_ok(core: GatewayCore, params: ConnectParams) -> bool:
    cfg, auth = core.config, params.auth
    if cfg.auth_mode == "none":
        return True
    if cfg.auth_mode == "token":
        return _secret_equal(auth.token if auth else None, cfg.token)
    return _secret_equal(auth.password if auth else None, cfg.password)


def _credential_failure(
    core: GatewayCore, params: ConnectParams, local: bool
) -> hs.ConnectRejection:
    auth = params.auth
    if core.config.auth_mode == "password":
        if auth is None or not auth.password:
            return hs.password_missing(params, is_local_client=local)
        return hs.password_mismatch(params, is_local_client=local)
    if auth is None or not (auth.token or auth.password):
        return hs.token_missing(params, is_local_client=local)
    return hs.token_mismatch(params, is_local_client=local)


def _authenticate(
    core: GatewayCore,
    params: ConnectParams,
    device: hs.VerifiedDevice,
    role: str,
    address: str,
    local: bool,
) -> _Auth:
    """Shared secret, then setup-code bootstrap token, then the device token."""
    now = now_ms()
    limiter = core.auth_limiter
    limited = not local or core.config.auth_rate_limit_loopback
    retry_after = limiter.retry_after_ms(address, now) if limited else None
    if retry_after is not None:
        raise hs.rate_limited(retry_after, params)
    auth = params.auth
    if _shared_secret_ok(core, params):
        limiter.reset(address)
        return _Auth(core.config.auth_mode)
    if auth is not None and auth.bootstrap_token:
        # As the real gateway: a role or scopes outside the code's profile is refused like
        # a bad code (AUTH_BOOTSTRAP_TOKEN_INVALID), before the code is bound to the device.
        # While the bound device awaits approval it must ask for the same thing again.
        asked = list(params.scopes or [])
        record = core.state.bootstrap.redeem(
            auth.bootstrap_token,
            device.device_id,
            device.public_key_b64url,
            now,
            admit=lambda found: _code_profile(core, found, local).allows(role, asked),
            request=lambda found: (role, _code_profile(core, found, local).bounded(role, asked)),
        )
        if record is not None:
            limiter.reset(address)
            return _Auth("bootstrap-token", bootstrap=record)
        if limited:
            limiter.record_failure(address, now)
        raise hs.bootstrap_token_invalid(params)
    candidate = (auth.device_token or auth.token) if auth else None
    if candidate:
        # last_used_at_ms is written after hello-ok went out (see admit)
        token = core.state.tokens.verify(device.device_id, role, candidate)
        if token is not None and not _token_covers(role, params.scopes or [], token.scopes):
            # As the real gateway: a device token never widens itself (AUTH_SCOPE_MISMATCH,
            # whether it came in auth.token or auth.deviceToken).
            if limited:
                limiter.record_failure(address, now)
            raise hs.scope_mismatch(params)
        if token is not None:
            limiter.reset(address)
            return _Auth(
                "device-token",
                token_scopes=list(token.scopes),
                presented=candidate,
                presented_issued_at_ms=token.rotated_at_ms or token.created_at_ms,
            )
        if auth is not None and auth.device_token:
            if limited:
                limiter.record_failure(address, now)
            raise hs.device_token_mismatch(params)
    if limited:
        limiter.record_failure(address, now)
    raise _credential_failure(core, params, local)


def _record_use(
    core: GatewayCore,
    device_id: str,
    role: str,
    authed: _Auth,
    local: bool,
    address: str,
    platform: str | None = None,
) -> Callable[[], None]:
    def record() -> None:
        now = now_ms()
        core.state.devices.touch(device_id, now, None if local else address, platform=platform)
        if authed.method == "device-token":
            core.state.tokens.mark_used(device_id, role, now)

    return record


async def admit(
    core: GatewayCore,
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
    # A forwarded request got here only through a trusted proxy (gateway.proxies): its
    # client is the one the proxy vouches for, and never local.
    local = _is_loopback(address) and not has_forwarding_headers(headers)
    admission = hs.admit_connect(
        params,
        origin=headers.get("Origin") if headers is not None else None,
        request_host=headers.get("Host") if headers is not None else None,
        is_local_client=local,
    )
    role = str(admission.role)
    requested = list(params.scopes or []) if role == "operator" else []
    device: hs.VerifiedDevice | None = None
    handoff = False
    refresh_platform: str | None = None
    if params.device is None:
        if admission.is_control_ui:
            raise hs.ConnectRejection.control_ui_device_identity_required()
        # Shared-secret guesses without a device are rate limited like any other.
        limited = not local or core.config.auth_rate_limit_loopback
        retry_after = core.auth_limiter.retry_after_ms(address, now_ms()) if limited else None
        if retry_after is not None:
            raise hs.rate_limited(retry_after, params)
        shared_ok = _shared_secret_ok(core, params)
        if not (role == "operator" and shared_ok and local):
            auth = params.auth
            if not shared_ok and auth is not None and (auth.token or auth.password):
                if limited:
                    core.auth_limiter.record_failure(address, now_ms())
                raise _credential_failure(core, params, local)
            raise hs.device_identity_required()
        core.auth_limiter.reset(address)
        authed = _Auth(core.config.auth_mode)
        scopes = deviceless_scopes(
            requested,
            client_id=str(params.client.id),
            client_mode=str(params.client.mode),
            auth_method=authed.method,
            local=local,
            has_origin=headers is not None and headers.get("Origin") is not None,
        )
        client = _node_host_client(params.client)
    else:
        device = hs.verify_device_proof(params, nonce=nonce, now_ms=now_ms())
        authed = _authenticate(core, params, device, role, address, local)
        # After the proof (which signs the client as sent), as on the real gateway.
        params = params.model_copy(update={"client": _node_host_client(params.client)})
        gate = _pairing_gate(core, params, device, role, requested, authed, address, local)
        scopes, handoff, client = gate.scopes, gate.handoff, gate.client
        refresh_platform = gate.refresh_platform
    peer = Peer(
        ws=ws,
        conn_id=str(uuid.uuid4()),
        role=role,
        scopes=scopes,
        client=client.to_wire(),
        device_id=device.device_id if device else None,
        remote_ip=address,
        permissions=dict(params.permissions or {}),
        caps=list(params.caps or []),
        connected_at_ms=now_ms(),
        auth_method=authed.method,
        inventory=NodeInventory(path_env=params.path_env if role == "node" else None),
    )
    hello_auth = _issue_tokens(core, device, role, scopes, authed, local, handoff=handoff)
    peer.start()
    peer.respond(request_id, True, core.hello_payload(peer, hello_auth))
    if authed.bootstrap is not None:
        # setupStatus reports a completion (not deliveryUncertain) once hello-ok went out.
        setup_id = authed.bootstrap.setup_id
        peer.after_sent(lambda: core.state.bootstrap.confirm_delivery(setup_id))
    if device is not None:  # last seen and token use: database writes, after hello-ok
        peer.after_sent(
            _record_use(core, device.device_id, role, authed, local, address, refresh_platform)
        )
    core.hub.add(peer)
    if role == "node":
        core.node_connected(peer, list(params.commands or []), list(params.caps or []))
    log.info(
        "%s %s connected from %s (%s)",
        role,
        (peer.device_id or peer.conn_id)[:12],
        address,
        authed.method,
    )
    return peer


def _replacement_scopes(
    core: GatewayCore, device_id: str, role: str, scopes: list[str]
) -> list[str]:
    """Scopes for the token that replaces the device's current one: the old token's scopes
    while they are still approved and cover this connection, so the replacement does not
    narrow the device's token (a narrower connect never narrows it)."""
    existing = core.state.tokens.get(device_id, role)
    record = core.state.devices.get(device_id)
    if existing is None or not existing.active or record is None:
        return scopes
    if not set(existing.scopes) <= set(record.scopes):
        return scopes
    if not _token_covers(role, scopes, existing.scopes):
        return scopes
    return list(existing.scopes)


def _ensure_token(
    core: GatewayCore, device_id: str, role: str, scopes: list[str], now: int
) -> tuple[str, list[str], int]:
    """The device token for a device that authenticated some other way (shared token,
    password, setup code). The real gateway's ``ensureDeviceToken`` hands back the device's
    existing token; only token hashes are kept here (see :mod:`gateway.state.tokens`), so the
    device gets a new token, with :func:`_replacement_scopes`, and the old one stops working.

    Returns:
        The token, its scopes and when it was issued (``issuedAtMs``).
    """
    wanted = _replacement_scopes(core, device_id, role, scopes)
    existing = core.state.tokens.get(device_id, role)
    if existing is not None and existing.active:
        return core.state.tokens.rotate(device_id, role, wanted, now), wanted, now
    return core.state.tokens.issue(device_id, role, wanted, now), wanted, now


def _issue_tokens(
    core: GatewayCore,
    device: hs.VerifiedDevice | None,
    role: str,
    scopes: list[str],
    authed: _Auth,
    local: bool,
    *,
    handoff: bool = False,
) -> dict[str, Any]:
    """``hello-ok.auth``: the device token (the presented one, or a new one) and, for the
    setup-code hand-off, the bounded tokens of the code's other roles (``deviceTokens``).

    A setup code is used up by the hand-off, or once the connects that redeemed it cover
    every role of its profile (the real gateway's ``redeemDeviceBootstrapTokenProfile``):
    an operator-only connect leaves a node + operator code redeemable by its device.
    """
    auth: dict[str, Any] = {"method": authed.method, "role": role, "scopes": scopes}
    if device is None:
        return auth
    now = now_ms()
    if authed.method == "device-token" and authed.presented:
        auth["deviceToken"] = authed.presented
        if authed.presented_issued_at_ms is not None:
            auth["issuedAtMs"] = authed.presented_issued_at_ms
        return auth
    auth["deviceToken"], _granted, auth["issuedAtMs"] = _ensure_token(
        core, device.device_id, role, scopes, now
    )
    bootstrap = authed.bootstrap
    if authed.method != "bootstrap-token" or bootstrap is None:
        return auth
    profile = _code_profile(core, bootstrap, local)
    if not handoff:
        roles, redeemed = core.state.bootstrap.redeem_leg(
            bootstrap, role, profile.bounded(role, scopes)
        )
        if profile.covered_by(roles, sorted(redeemed)):
            core.state.bootstrap.consume(bootstrap.setup_id, now)
        return auth
    handoff_tokens: list[dict[str, Any]] = []
    for extra in profile.roles:
        if extra == role:
            continue
        extra_scopes = list(profile.scopes) if extra == "operator" else []
        core.state.devices.approve(
            device.device_id,
            device.public_key_b64url,
            role=extra,
            scopes=extra_scopes,
            approved_via="bootstrap",
            now_ms=now,
        )
        token, granted, issued_at = _ensure_token(core, device.device_id, extra, extra_scopes, now)
        handoff_tokens.append(
            {"deviceToken": token, "role": extra, "scopes": granted, "issuedAtMs": issued_at}
        )
    if handoff_tokens:
        auth["deviceTokens"] = handoff_tokens
    core.state.bootstrap.consume(bootstrap.setup_id, now)
    return auth
