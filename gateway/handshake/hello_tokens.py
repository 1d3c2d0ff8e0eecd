"""``hello-ok.auth`` of an admitted device: the device token it authenticated with, or a
new one, and for the setup-code hand-off the bounded tokens of the code's other roles.
Part of the connect decision: the tokens are issued by the server (yielded effects)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from gateway.handshake.decision import (
    ApproveDevice,
    ConnectContext,
    ConsumeSetupCode,
    Credential,
    Effect,
    IssueToken,
    RedeemSetupLeg,
    StateView,
)
from gateway.handshake.proof import VerifiedDevice
from gateway.handshake.setup_profile import setup_profile, token_covers

__all__ = ["hello_auth"]


def _replacement_scopes(view: StateView, device_id: str, role: str, scopes: list[str]) -> list[str]:
    """Scopes for the token that replaces the device's current one: the old token's scopes
    while they are still approved and cover this connection, so the replacement does not
    narrow the device's token (a narrower connect never narrows it)."""
    existing = view.token(device_id, role)
    record = view.device(device_id)
    if existing is None or not existing.active or record is None:
        return scopes
    if not set(existing.scopes) <= set(record.scopes):
        return scopes
    if not token_covers(role, scopes, existing.scopes):
        return scopes
    return list(existing.scopes)


def _ensure_token(
    view: StateView, device_id: str, role: str, scopes: list[str], now: int
) -> Generator[Effect, Any, tuple[str, list[str], int]]:
    """The device token for a device that authenticated some other way (shared token,
    password, setup code). The real gateway's ``ensureDeviceToken`` hands back the device's
    existing token; only token hashes are kept here (see :mod:`gateway.state.tokens`), so the
    device gets a new token, with :func:`_replacement_scopes`, and the old one stops working.

    Returns:
        The token, its scopes and when it was issued (``issuedAtMs``).
    """
    wanted = _replacement_scopes(view, device_id, role, scopes)
    existing = view.token(device_id, role)
    rotate = existing is not None and existing.active
    token: str = yield IssueToken(device_id, role, wanted, now, rotate=rotate)
    return token, wanted, now


def hello_auth(
    view: StateView,
    ctx: ConnectContext,
    device: VerifiedDevice | None,
    role: str,
    scopes: list[str],
    authed: Credential,
    *,
    handoff: bool = False,
) -> Generator[Effect, Any, dict[str, Any]]:
    """``hello-ok.auth``: the device token (the presented one, or a new one) and, for the
    setup-code hand-off, the bounded tokens of the code's other roles (``deviceTokens``).

    A setup code is used up by the hand-off, or once the connects that redeemed it cover
    every role of its profile (the real gateway's ``redeemDeviceBootstrapTokenProfile``):
    an operator-only connect leaves a node + operator code redeemable by its device.
    """
    auth: dict[str, Any] = {"method": authed.method, "role": role, "scopes": scopes}
    if device is None:
        return auth
    now = ctx.now_ms
    if authed.method == "device-token" and authed.presented:
        auth["deviceToken"] = authed.presented
        if authed.presented_issued_at_ms is not None:
            auth["issuedAtMs"] = authed.presented_issued_at_ms
        return auth
    auth["deviceToken"], _granted, auth["issuedAtMs"] = yield from _ensure_token(
        view, device.device_id, role, scopes, now
    )
    bootstrap = authed.bootstrap
    if authed.method != "bootstrap-token" or bootstrap is None:
        return auth
    profile = setup_profile(view.setup_profile_name(bootstrap), local=ctx.local, tls=ctx.tls)
    if not handoff:
        redeemed_so_far: tuple[frozenset[str], frozenset[str]] = yield RedeemSetupLeg(
            bootstrap, role, profile.bounded(role, scopes)
        )
        roles, redeemed = redeemed_so_far
        if profile.covered_by(roles, sorted(redeemed)):
            yield ConsumeSetupCode(bootstrap.setup_id, now)
        return auth
    handoff_tokens: list[dict[str, Any]] = []
    for extra in profile.roles:
        if extra == role:
            continue
        extra_scopes = list(profile.scopes) if extra == "operator" else []
        yield ApproveDevice(
            device.device_id,
            device.public_key_b64url,
            role=extra,
            scopes=extra_scopes,
            approved_via="bootstrap",
            now_ms=now,
        )
        token, granted, issued_at = yield from _ensure_token(
            view, device.device_id, extra, extra_scopes, now
        )
        handoff_tokens.append(
            {"deviceToken": token, "role": extra, "scopes": granted, "issuedAtMs": issued_at}
        )
    if handoff_tokens:
        auth["deviceTokens"] = handoff_tokens
    yield ConsumeSetupCode(bootstrap.setup_id, now)
    return auth
