"""Module-level shortcuts for the rejections the server raises most, by the gateway's names.

Each credential shortcut takes the validated connect params when it has them, because the
real gateway words the message by client kind (CLI, Control UI / webchat, other) and offers a
device-token retry only when a device identity came with a plain shared token. Without
params they describe a local CLI client with a device identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_desktop.protocol import ConnectParams

from .rejection import ConnectRejection

__all__ = [
    "bootstrap_token_invalid",
    "device_identity_required",
    "device_token_mismatch",
    "pairing_required",
    "password_mismatch",
    "password_missing",
    "rate_limited",
    "scope_mismatch",
    "token_mismatch",
    "token_missing",
]


def _auth(
    reason: str,
    params: ConnectParams | None,
    *,
    is_local_client: bool,
    auth_mode: str,
    retry_after_ms: int | None = None,
) -> ConnectRejection:
    auth: dict[str, Any] | None
    if params is None:
        client_id, client_mode, has_device = "cli", "cli", True
        auth = {"token": "<sent>"} if reason == "token_mismatch" else None
    else:
        client_id, client_mode = str(params.client.id), str(params.client.mode)
        auth = params.auth.model_dump(by_alias=True, exclude_none=True) if params.auth else None
        has_device = params.device is not None
    return ConnectRejection.auth_failed(
        reason,
        client_id=client_id,
        client_mode=client_mode,
        auth=auth,
        has_device_identity=has_device,
        is_local_client=is_local_client,
        auth_mode=auth_mode,
        retry_after_ms=retry_after_ms,
    )


def token_missing(
    params: ConnectParams | None = None, *, is_local_client: bool = True
) -> ConnectRejection:
    """``AUTH_TOKEN_MISSING``: token auth and no ``auth.token``."""
    return _auth("token_missing", params, is_local_client=is_local_client, auth_mode="token")


def token_mismatch(
    params: ConnectParams | None = None, *, is_local_client: bool = True
) -> ConnectRejection:
    """``AUTH_TOKEN_MISMATCH``: wrong shared token (retry with a device token if it had one)."""
    return _auth("token_mismatch", params, is_local_client=is_local_client, auth_mode="token")


def password_missing(
    params: ConnectParams | None = None, *, is_local_client: bool = True
) -> ConnectRejection:
    """``AUTH_PASSWORD_MISSING``: password auth and no ``auth.password``."""
    return _auth("password_missing", params, is_local_client=is_local_client, auth_mode="password")


def password_mismatch(
    params: ConnectParams | None = None, *, is_local_client: bool = True
) -> ConnectRejection:
    """``AUTH_PASSWORD_MISMATCH``: wrong shared password."""
    return _auth("password_mismatch", params, is_local_client=is_local_client, auth_mode="password")


def device_token_mismatch(params: ConnectParams | None = None) -> ConnectRejection:
    """``AUTH_DEVICE_TOKEN_MISMATCH``: an explicit ``auth.deviceToken`` was not accepted."""
    return _auth("device_token_mismatch", params, is_local_client=True, auth_mode="token")


def scope_mismatch(params: ConnectParams | None = None) -> ConnectRejection:
    """``AUTH_SCOPE_MISMATCH``: the device token does not cover the requested scopes."""
    return _auth("scope_mismatch", params, is_local_client=True, auth_mode="token")


def bootstrap_token_invalid(params: ConnectParams | None = None) -> ConnectRejection:
    """``AUTH_BOOTSTRAP_TOKEN_INVALID``: setup code invalid, expired, revoked or used."""
    return _auth("bootstrap_token_invalid", params, is_local_client=True, auth_mode="token")


def rate_limited(retry_after_ms: int, params: ConnectParams | None = None) -> ConnectRejection:
    """``AUTH_RATE_LIMITED`` with top-level ``retryable`` and ``retryAfterMs``."""
    return _auth(
        "rate_limited",
        params,
        is_local_client=True,
        auth_mode="token",
        retry_after_ms=retry_after_ms,
    )


def device_identity_required() -> ConnectRejection:
    """``NOT_PAIRED`` / ``DEVICE_IDENTITY_REQUIRED``."""
    return ConnectRejection.device_identity_required()


def pairing_required(
    *,
    request_id: str | None,
    device_id: str,
    role: str,
    scopes: Sequence[str] = (),
    reason: str = "not-paired",
    approved_roles: Sequence[str] = (),
    approved_scopes: Sequence[str] = (),
    wait_then_retry: bool = False,
) -> ConnectRejection:
    """``NOT_PAIRED`` / ``PAIRING_REQUIRED`` (see :meth:`ConnectRejection.pairing_required`)."""
    return ConnectRejection.pairing_required(
        request_id=request_id,
        device_id=device_id,
        role=role,
        scopes=scopes,
        reason=reason,
        approved_roles=approved_roles,
        approved_scopes=approved_scopes,
        wait_then_retry=wait_then_retry,
    )
