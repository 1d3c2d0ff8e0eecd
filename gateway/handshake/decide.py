"""The connect decision: admission, device proof, credentials, pairing gate, hello-ok auth.

The checks run in the real gateway's order so the same bad input gets the same answer:
protocol range, role, origin, device proof, credentials, then device pairing. The decision
does no I/O: it reads through a :class:`~gateway.handshake.decision.StateView` and yields
every write as an effect (see :mod:`gateway.handshake.decision`); the server carries the
effects out, sends hello-ok or the rejection and creates the peer
(:func:`gateway.connect.admit`), as websockets' ``ServerProtocol.accept``/``reject`` leave
the sending to the connection.
"""

from __future__ import annotations

import hmac
from collections.abc import Generator
from typing import Any

from gateway.handshake.client_metadata import node_host_client
from gateway.handshake.decision import (
    Admitted,
    ConfirmSetupDelivery,
    ConnectContext,
    Credential,
    Decision,
    Effect,
    LimiterFailure,
    LimiterReset,
    RecordUse,
    RedeemSetupCode,
    StateView,
)
from gateway.handshake.deviceless import deviceless_scopes
from gateway.handshake.hello_tokens import hello_auth
from gateway.handshake.pairing import pairing_gate
from gateway.handshake.proof import VerifiedDevice, verify_device_proof
from gateway.handshake.protocol_range import admit_connect
from gateway.handshake.rejection import ConnectRejection
from gateway.handshake.setup_profile import SetupCodeProfile, setup_profile, token_covers
from gateway.handshake.shortcuts import (
    bootstrap_token_invalid,
    device_identity_required,
    device_token_mismatch,
    password_mismatch,
    password_missing,
    rate_limited,
    scope_mismatch,
    token_mismatch,
    token_missing,
)
from gateway.state.records import BootstrapRecord
from openclaw_desktop.protocol import ConnectParams

__all__ = ["decide"]


def _secret_equal(given: str | None, expected: str | None) -> bool:
    if given is None or expected is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _shared_secret_ok(view: StateView, params: ConnectParams) -> bool:
    policy, auth = view.policy, params.auth
    if policy.auth_mode == "none":
        return True
    if policy.auth_mode == "token":
        return _secret_equal(auth.token if auth else None, policy.token)
    return _secret_equal(auth.password if auth else None, policy.password)


def _credential_failure(view: StateView, params: ConnectParams, local: bool) -> ConnectRejection:
    auth = params.auth
    if view.policy.auth_mode == "password":
        if auth is None or not auth.password:
            return password_missing(params, is_local_client=local)
        return password_mismatch(params, is_local_client=local)
    if auth is None or not (auth.token or auth.password):
        return token_missing(params, is_local_client=local)
    return token_mismatch(params, is_local_client=local)


def _authenticate(
    view: StateView,
    ctx: ConnectContext,
    params: ConnectParams,
    device: VerifiedDevice,
    role: str,
) -> Generator[Effect, Any, Credential]:
    """Shared secret, then setup-code bootstrap token, then the device token."""
    now, address, local = ctx.now_ms, ctx.address, ctx.local
    limited = not local or view.policy.auth_rate_limit_loopback
    retry_after = view.retry_after_ms(address, now) if limited else None
    if retry_after is not None:
        raise rate_limited(retry_after, params)
    auth = params.auth
    if _shared_secret_ok(view, params):
        yield LimiterReset(address)
        return Credential(view.policy.auth_mode)
    if auth is not None and auth.bootstrap_token:
        # As the real gateway: a role or scopes outside the code's profile is refused like
        # a bad code (AUTH_BOOTSTRAP_TOKEN_INVALID), before the code is bound to the device.
        # While the bound device awaits approval it must ask for the same thing again.
        asked = list(params.scopes or [])

        def profile_of(found: BootstrapRecord) -> SetupCodeProfile:
            return setup_profile(view.setup_profile_name(found), local=local, tls=ctx.tls)

        record: BootstrapRecord | None = yield RedeemSetupCode(
            auth.bootstrap_token,
            device.device_id,
            device.public_key_b64url,
            now,
            admit=lambda found: profile_of(found).allows(role, asked),
            request=lambda found: (role, profile_of(found).bounded(role, asked)),
        )
        if record is not None:
            yield LimiterReset(address)
            return Credential("bootstrap-token", bootstrap=record)
        if limited:
            yield LimiterFailure(address, now)
        raise bootstrap_token_invalid(params)
    candidate = (auth.device_token or auth.token) if auth else None
    if candidate:
        # its last use is recorded after hello-ok went out (Admitted.after_hello)
        token = view.verify_token(device.device_id, role, candidate)
        if token is not None and not token_covers(role, params.scopes or [], token.scopes):
            # As the real gateway: a device token never widens itself (AUTH_SCOPE_MISMATCH,
            # whether it came in auth.token or auth.deviceToken).
            if limited:
                yield LimiterFailure(address, now)
            raise scope_mismatch(params)
        if token is not None:
            yield LimiterReset(address)
            return Credential(
                "device-token",
                presented=candidate,
                presented_issued_at_ms=token.rotated_at_ms or token.created_at_ms,
            )
        if auth is not None and auth.device_token:
            if limited:
                yield LimiterFailure(address, now)
            raise device_token_mismatch(params)
    if limited:
        yield LimiterFailure(address, now)
    raise _credential_failure(view, params, local)


def _deviceless(
    view: StateView, ctx: ConnectContext, params: ConnectParams, role: str, requested: list[str]
) -> Generator[Effect, Any, Admitted]:
    """A connect without a device identity: only this machine's operator with the shared
    secret (its scopes bounded by :func:`deviceless_scopes`)."""
    # Shared-secret guesses without a device are rate limited like any other.
    local, address = ctx.local, ctx.address
    limited = not local or view.policy.auth_rate_limit_loopback
    retry_after = view.retry_after_ms(address, ctx.now_ms) if limited else None
    if retry_after is not None:
        raise rate_limited(retry_after, params)
    shared_ok = _shared_secret_ok(view, params)
    if not (role == "operator" and shared_ok and local):
        auth = params.auth
        if not shared_ok and auth is not None and (auth.token or auth.password):
            if limited:
                yield LimiterFailure(address, ctx.now_ms)
            raise _credential_failure(view, params, local)
        raise device_identity_required()
    yield LimiterReset(address)
    method = str(view.policy.auth_mode)
    scopes = deviceless_scopes(
        requested,
        client_id=str(params.client.id),
        client_mode=str(params.client.mode),
        auth_method=method,
        local=local,
        has_origin=ctx.origin is not None,
    )
    auth_payload = yield from hello_auth(view, ctx, None, role, scopes, Credential(method))
    return Admitted(
        role=role,
        scopes=scopes,
        client=node_host_client(params.client),
        device_id=None,
        auth_method=method,
        hello_auth=auth_payload,
    )


def _decide(view: StateView, ctx: ConnectContext, params: ConnectParams) -> Decision:
    admission = admit_connect(
        params, origin=ctx.origin, request_host=ctx.host, is_local_client=ctx.local
    )
    role = str(admission.role)
    requested = list(params.scopes or []) if role == "operator" else []
    if params.device is None:
        if admission.is_control_ui:
            raise ConnectRejection.control_ui_device_identity_required()
        return (yield from _deviceless(view, ctx, params, role, requested))
    device = verify_device_proof(params, nonce=ctx.nonce, now_ms=ctx.now_ms)
    authed = yield from _authenticate(view, ctx, params, device, role)
    # After the proof (which signs the client as sent), as on the real gateway.
    params = params.model_copy(update={"client": node_host_client(params.client)})
    gate = yield from pairing_gate(view, ctx, params, device, role, requested, authed)
    auth_payload = yield from hello_auth(
        view, ctx, device, role, gate.scopes, authed, handoff=gate.handoff
    )
    after: list[Effect] = []
    if authed.bootstrap is not None:
        # setupStatus reports a completion (not deliveryUncertain) once hello-ok went out.
        after.append(ConfirmSetupDelivery(authed.bootstrap.setup_id))
    # last seen and token use: database writes, after hello-ok
    after.append(
        RecordUse(
            device.device_id,
            role,
            remote_ip=None if ctx.local else ctx.address,
            platform=gate.refresh_platform,
            token_used=authed.method == "device-token",
        )
    )
    return Admitted(
        role=role,
        scopes=gate.scopes,
        client=gate.client,
        device_id=device.device_id,
        auth_method=authed.method,
        hello_auth=auth_payload,
        after_hello=tuple(after),
    )


def decide(params: ConnectParams, ctx: ConnectContext, view: StateView) -> Decision:
    """Decide one ``connect`` (validated params): a generator that yields the effects to
    carry out (send each one's result back), returning :class:`Admitted` or the
    :class:`ConnectRejection` to answer with."""
    try:
        return (yield from _decide(view, ctx, params))
    except ConnectRejection as rejection:
        return rejection
