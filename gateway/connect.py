"""Admission of one ``connect``: validation, device proof, credentials, pairing gate, hello.

The checks run in the real gateway's order so the same bad input gets the same answer:
closed schema, protocol range, role, device proof, credentials, then device pairing.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode
from websockets.server import ServerProtocol

from gateway import handshake as hs
from gateway.core import GatewayCore
from gateway.hub import now_ms
from gateway.peer import Peer
from gateway.scopes import scope_satisfied
from gateway.state import ApprovalKind, BootstrapRecord
from openclaw_desktop.protocol import ConnectParams

__all__ = ["GatewayServerConnection", "admit"]

log = logging.getLogger("gateway.connect")

#: Operator scopes handed to a phone through a setup code (full access).
BOOTSTRAP_OPERATOR_SCOPES = [
    "operator.admin",
    "operator.approvals",
    "operator.read",
    "operator.talk.secrets",
    "operator.write",
]


@dataclass(frozen=True)
class _Auth:
    method: str
    token_scopes: list[str] | None = None
    bootstrap: BootstrapRecord | None = None
    #: The device token the client authenticated with (handed back in hello-ok).
    presented: str | None = None
    #: When that token was issued or last rotated (``hello-ok.auth.issuedAtMs``).
    presented_issued_at_ms: int | None = None


class _GatewayProtocol(ServerProtocol):
    """Closes an oversized frame with 1009 and no reason, as the real gateway's ``ws`` layer
    does (websockets would put ``"frame with N bytes exceeds limit of M bytes"`` there)."""

    def fail(self, code: CloseCode | int, reason: str = "") -> None:
        super().fail(code, "" if code == CloseCode.MESSAGE_TOO_BIG else reason)


class GatewayServerConnection(ServerConnection):
    """The server's connection class (``serve(create_connection=...)``): see
    :class:`_GatewayProtocol`."""

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        if type(protocol) is ServerProtocol:
            protocol.__class__ = _GatewayProtocol
        super().__init__(protocol, *args, **kwargs)


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


def _token_covers(role: str, requested: Sequence[str], granted: Sequence[str]) -> bool:
    """Whether a device token's scopes allow the requested ones (``roleScopesAllow``):
    operator scopes with their implications (admin covers all, write covers read and talk),
    other roles' scopes only as ``<role>.*`` and listed."""
    for raw in requested:
        scope = raw.strip()
        if not scope:
            continue
        if role == "operator":
            if not scope_satisfied(scope, granted):
                return False
        elif not (scope.startswith(f"{role}.") and scope in granted):
            return False
    return True


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
        record = core.state.bootstrap.redeem(
            auth.bootstrap_token, device.device_id, device.public_key_b64url, now
        )
        if record is not None:
            limiter.reset(address)
            return _Auth("bootstrap-token", bootstrap=record)
        if limited:
            limiter.record_failure(address, now)
        raise hs.bootstrap_token_invalid(params)
    candidate = (auth.device_token or auth.token) if auth else None
    if candidate:
        token = core.state.tokens.verify(device.device_id, role, candidate, now_ms=now)
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
    proxied = headers is not None and any(
        h in headers for h in ("Forwarded", "X-Forwarded-For", "X-Real-IP")
    )
    local = _is_loopback(address) and not proxied
    admission = hs.admit_connect(
        params,
        origin=headers.get("Origin") if headers is not None else None,
        request_host=headers.get("Host") if headers is not None else None,
        is_local_client=local,
    )
    role = str(admission.role)
    requested = list(params.scopes or []) if role == "operator" else []
    device: hs.VerifiedDevice | None = None
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
        scopes = requested
    else:
        device = hs.verify_device_proof(params, nonce=nonce, now_ms=now_ms())
        authed = _authenticate(core, params, device, role, address, local)
        scopes = _pairing_gate(core, params, device, role, requested, authed, address, local)
    peer = Peer(
        ws=ws,
        conn_id=str(uuid.uuid4()),
        role=role,
        scopes=scopes,
        client=params.client.to_wire(),
        device_id=device.device_id if device else None,
        remote_ip=address,
        permissions=dict(params.permissions or {}),
        caps=list(params.caps or []),
        connected_at_ms=now_ms(),
        auth_method=authed.method,
    )
    hello_auth = _issue_tokens(core, device, role, scopes, authed, local)
    peer.start()
    peer.respond(request_id, True, core.hello_payload(peer, hello_auth))
    if authed.bootstrap is not None:
        # setupStatus reports a completion (not deliveryUncertain) once hello-ok went out.
        setup_id = authed.bootstrap.setup_id
        peer.after_sent(lambda: core.state.bootstrap.confirm_delivery(setup_id))
    core.hub.add(peer)
    if device is not None:
        core.state.devices.touch(device.device_id, now_ms(), None if local else address)
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


def _pairing_gate(
    core: GatewayCore,
    params: ConnectParams,
    device: hs.VerifiedDevice,
    role: str,
    requested: list[str],
    authed: _Auth,
    address: str,
    local: bool,
) -> list[str]:
    """The scopes this device gets, approving it when allowed or raising NOT_PAIRED."""
    now = now_ms()
    record = core.state.devices.get(device.device_id)
    if authed.method == "device-token":
        return requested  # _authenticate checked that the token covers them
    if record is not None and role in record.roles and set(requested) <= set(record.scopes):
        return requested
    client = params.client
    via: ApprovalKind | None = None
    if authed.method == "bootstrap-token":
        via = "bootstrap"
    elif local and core.config.auto_approve_local:
        via = "silent"
    if via is not None:
        core.state.devices.approve(
            device.device_id,
            device.public_key_b64url,
            role=role,
            scopes=requested,
            client_id=client.id.value,
            client_mode=client.mode.value,
            display_name=client.display_name,
            platform=client.platform,
            device_family=client.device_family,
            remote_ip=None if local else address,  # the real gateway records none for local
            approved_via=via,
            now_ms=now,
        )
        return requested
    outcome = core.state.pairing.request(
        device.device_id,
        device.public_key_b64url,
        role=role,
        scopes=requested,
        client_id=client.id.value,
        client_mode=client.mode.value,
        display_name=client.display_name,
        platform=client.platform,
        device_family=client.device_family,
        remote_ip=None if local else address,
        now_ms=now,
    )
    for old in outcome.superseded:
        core.hub.broadcast(
            "device.pair.resolved",
            {"requestId": old, "deviceId": device.device_id, "decision": "rejected", "ts": now},
        )
    if outcome.created:
        core.hub.broadcast("device.pair.requested", outcome.request.to_wire())
    reason = "not-paired"
    if record is not None:
        reason = "role-upgrade" if role not in record.roles else "scope-upgrade"
    raise hs.pairing_required(
        request_id=outcome.request.request_id,
        device_id=device.device_id,
        role=role,
        # The scopes as sent, for nodes too (the real gateway echoes them); a node is still
        # granted none.
        scopes=list(params.scopes or []),
        reason=reason,
        approved_roles=list(record.roles) if record else [],
        approved_scopes=list(record.scopes) if record else [],
    )


def _token_scopes(core: GatewayCore, device_id: str, role: str, scopes: list[str]) -> list[str]:
    """The scopes of the token to issue: the real gateway hands back the existing token when
    it covers this connection's scopes (so a narrower connect never narrows the device's
    token). Only token hashes are stored here, so the token is replaced, but with the
    existing token's scopes (while they are still approved)."""
    existing = core.state.tokens.get(device_id, role)
    record = core.state.devices.get(device_id)
    if existing is None or not existing.active or record is None:
        return scopes
    if not set(existing.scopes) <= set(record.scopes):
        return scopes
    if not _token_covers(role, scopes, existing.scopes):
        return scopes
    return list(existing.scopes)


def _issue_tokens(
    core: GatewayCore,
    device: hs.VerifiedDevice | None,
    role: str,
    scopes: list[str],
    authed: _Auth,
    local: bool,
) -> dict[str, Any]:
    """``hello-ok.auth``: the device token (the presented one, or a new one) and, for a
    setup-code connect, the bounded operator hand-off token."""
    auth: dict[str, Any] = {"method": authed.method, "role": role, "scopes": scopes}
    if device is None:
        return auth
    now = now_ms()
    if authed.method == "device-token" and authed.presented:
        auth["deviceToken"] = authed.presented
        if authed.presented_issued_at_ms is not None:
            auth["issuedAtMs"] = authed.presented_issued_at_ms
        return auth
    auth["deviceToken"] = core.state.tokens.issue(
        device.device_id, role, _token_scopes(core, device.device_id, role, scopes), now
    )
    auth["issuedAtMs"] = now
    bootstrap = authed.bootstrap
    if authed.method == "bootstrap-token" and bootstrap is not None:
        # Plaintext to anything but this machine only ever gets limited access.
        limited = bootstrap.access == "limited" or (not local and not core.config.tls)
        op_scopes = [
            s for s in BOOTSTRAP_OPERATOR_SCOPES if not (limited and s == "operator.admin")
        ]
        core.state.devices.approve(
            device.device_id,
            device.public_key_b64url,
            role="operator",
            scopes=op_scopes,
            approved_via="bootstrap",
            now_ms=now,
        )
        op_token = core.state.tokens.issue(device.device_id, "operator", op_scopes, now)
        auth["deviceTokens"] = [
            {"deviceToken": op_token, "role": "operator", "scopes": op_scopes, "issuedAtMs": now}
        ]
        core.state.bootstrap.consume(bootstrap.setup_id, now)
    return auth
