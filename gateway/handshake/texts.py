"""Texts and detail fields of handshake rejections, as the real gateway 2026.9.6 words them.

* Credential (auth) failures: the message and its hint depend on the failure reason and on the
  kind of client (CLI, Control UI / webchat, other); the detail code on the reason; the
  recommended next step on the reason and on whether a device-token retry is possible.
* Device-proof failures: message and detail code per verifier reason.
* Pairing-required failures: message, details and close reason per pairing reason.
* Close reasons: cut to 120 UTF-8 bytes like the gateway's ``truncateCloseReason``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from openclaw_desktop.protocol import ConnectErrorCode, NextStep

__all__ = [
    "CLOSE_REASON_MAX_BYTES",
    "DEVICE_AUTH_FAILURES",
    "PAIRING_REASONS",
    "auth_detail_code",
    "auth_failure_message",
    "auth_next_step",
    "auth_provided",
    "can_retry_with_device_token",
    "pairing_failure",
    "truncate_close_reason",
]

_AUTH_CODES: Mapping[str, ConnectErrorCode] = {
    "token_missing": ConnectErrorCode.AUTH_TOKEN_MISSING,
    "token_mismatch": ConnectErrorCode.AUTH_TOKEN_MISMATCH,
    "token_missing_config": ConnectErrorCode.AUTH_TOKEN_NOT_CONFIGURED,
    "password_missing": ConnectErrorCode.AUTH_PASSWORD_MISSING,
    "password_mismatch": ConnectErrorCode.AUTH_PASSWORD_MISMATCH,
    "password_missing_config": ConnectErrorCode.AUTH_PASSWORD_NOT_CONFIGURED,
    "bootstrap_token_invalid": ConnectErrorCode.AUTH_BOOTSTRAP_TOKEN_INVALID,
    "tailscale_user_missing": ConnectErrorCode.AUTH_TAILSCALE_IDENTITY_MISSING,
    "tailscale_proxy_missing": ConnectErrorCode.AUTH_TAILSCALE_PROXY_MISSING,
    "tailscale_whois_failed": ConnectErrorCode.AUTH_TAILSCALE_WHOIS_FAILED,
    "tailscale_user_mismatch": ConnectErrorCode.AUTH_TAILSCALE_IDENTITY_MISMATCH,
    "rate_limited": ConnectErrorCode.AUTH_RATE_LIMITED,
    "device_token_mismatch": ConnectErrorCode.AUTH_DEVICE_TOKEN_MISMATCH,
    "scope_mismatch": ConnectErrorCode.AUTH_SCOPE_MISMATCH,
}

_NEXT_STEP: Mapping[str, NextStep] = {
    **dict.fromkeys(
        (
            "token_missing",
            "token_missing_config",
            "token_redacted_config",
            "password_redacted_config",
            "password_missing",
            "password_missing_config",
        ),
        NextStep.UPDATE_AUTH_CONFIGURATION,
    ),
    **dict.fromkeys(
        ("token_mismatch", "password_mismatch", "device_token_mismatch"),
        NextStep.UPDATE_AUTH_CREDENTIALS,
    ),
    "scope_mismatch": NextStep.REVIEW_AUTH_CONFIGURATION,
    "rate_limited": NextStep.WAIT_THEN_RETRY,
}

_SETUP_CODE_REJECTED = (
    "unauthorized: setup code invalid, expired, revoked, or already used "
    "(create a new code; review `openclaw devices list`)"
)
_REDACTED = (
    "gateway credential is a redaction sentinel "
    "(run openclaw doctor --fix on the Gateway, then restart and re-pair)"
)
_TAILSCALE_HINT = "(use Tailscale Serve auth or gateway token/password)"
_FIXED_AUTH_MESSAGES: Mapping[str, str] = {
    "token_missing_config": (
        "unauthorized: gateway token not configured on gateway (set gateway.auth.token)"
    ),
    "token_redacted_config": _REDACTED,
    "password_redacted_config": _REDACTED,
    "password_missing_config": (
        "unauthorized: gateway password not configured on gateway (set gateway.auth.password)"
    ),
    "bootstrap_token_invalid": _SETUP_CODE_REJECTED,
    "tailscale_user_missing": f"unauthorized: tailscale identity missing {_TAILSCALE_HINT}",
    "tailscale_proxy_missing": (
        "unauthorized: tailscale proxy headers missing (use Tailscale Serve or gateway "
        "token/password)"
    ),
    "tailscale_whois_failed": f"unauthorized: tailscale identity check failed {_TAILSCALE_HINT}",
    "tailscale_user_mismatch": f"unauthorized: tailscale identity mismatch {_TAILSCALE_HINT}",
    "rate_limited": "unauthorized: too many failed authentication attempts (retry later)",
    "device_token_mismatch": "unauthorized: device token mismatch (rotate/reissue device token)",
    "scope_mismatch": (
        "unauthorized: device token scope mismatch (re-pair or approve scope upgrade)"
    ),
}
_OPERATOR_UI_IDS = frozenset({"openclaw-control-ui", "openclaw-browser-copilot", "openclaw-tui"})


def auth_provided(auth: Mapping[str, Any] | None) -> str:
    """Which credential the connect presented, by the gateway's precedence."""
    auth = auth or {}
    for field, kind in (
        ("password", "password"),
        ("token", "token"),
        ("bootstrapToken", "bootstrap-token"),
        ("deviceToken", "device-token"),
    ):
        if auth.get(field):
            return kind
    return "none"


def auth_failure_message(
    reason: str | None,
    *,
    client_id: str,
    client_mode: str,
    auth_mode: str = "token",
    auth_provided: str = "none",
    is_local_client: bool = True,
) -> str:
    """The gateway's auth failure text, whose hint depends on the client kind.

    Args:
        reason: The internal auth reason, or None.
        client_id: ``client.id``.
        client_mode: ``client.mode``.
        auth_mode: ``gateway.auth.mode``.
        auth_provided: ``password``, ``token``, ``bootstrap-token``, ``device-token`` or ``none``.
        is_local_client: Whether the socket is direct local.

    Returns:
        The ``error.message`` (and, truncated, the close reason).
    """
    is_cli = client_mode == "cli"
    is_ui = client_id in _OPERATOR_UI_IDS
    is_webchat = client_mode == "webchat" or client_id == "webchat-ui"
    if client_mode == "node" and (reason or "").startswith("trusted_proxy_missing_header_"):
        return (
            "gateway rejected this node: trusted-proxy identity-header authentication is "
            "required and no usable machine credential was accepted; run `openclaw doctor` "
            "on the Gateway"
        )
    if is_cli:
        token_hint = (
            "use this gateway's gateway.auth.token or pair the device"
            if is_local_client
            else "set gateway.remote.token to match gateway.auth.token"
        )
        password_hint = (
            "use this gateway's gateway.auth.password"
            if is_local_client
            else "set gateway.remote.password to match gateway.auth.password"
        )
    elif is_ui or is_webchat:
        token_hint = "open the dashboard URL and paste the token in Control UI settings"
        password_hint = "enter the password in Control UI settings"
    else:
        token_hint = "provide gateway auth token"
        password_hint = "provide gateway auth password"
    if reason == "token_missing":
        hint = (
            "paste in Control UI settings or openclaw doctor --generate-gateway-token; restart"
            if is_ui or is_webchat
            else token_hint
        )
        return f"unauthorized: gateway token missing ({hint})"
    if reason == "token_mismatch":
        return f"unauthorized: gateway token mismatch ({token_hint})"
    if reason == "password_missing":
        return f"unauthorized: gateway password missing ({password_hint})"
    if reason == "password_mismatch":
        return f"unauthorized: gateway password mismatch ({password_hint})"
    if reason == "proxy_attribution_required":
        return (
            "unauthorized: proxy client attribution is required (configure "
            "gateway.trustedProxies narrowly and make the proxy overwrite or safely rebuild "
            "forwarded client headers)"
        )
    if reason is not None and reason in _FIXED_AUTH_MESSAGES:
        return _FIXED_AUTH_MESSAGES[reason]
    if auth_mode == "token" and auth_provided == "none":
        return f"unauthorized: gateway token missing ({token_hint})"
    if auth_mode == "token" and auth_provided == "device-token":
        return (
            "unauthorized: device token rejected (pair/repair this device, or provide gateway "
            "token)"
        )
    if auth_provided == "bootstrap-token":
        return _SETUP_CODE_REJECTED
    if auth_mode == "password" and auth_provided == "none":
        return f"unauthorized: gateway password missing ({password_hint})"
    return "unauthorized"


def can_retry_with_device_token(
    reason: str | None, auth: Mapping[str, Any] | None, *, has_device_identity: bool
) -> bool:
    """True when a shared-token mismatch may be retried once with a stored device token."""
    return (
        reason == "token_mismatch"
        and has_device_identity
        and auth_provided(auth) == "token"
        and not (auth or {}).get("deviceToken")
    )


def auth_next_step(reason: str | None, *, can_retry: bool) -> NextStep:
    """``details.recommendedNextStep`` for an auth failure."""
    if can_retry:
        return NextStep.RETRY_WITH_DEVICE_TOKEN
    return _NEXT_STEP.get(reason or "", NextStep.REVIEW_AUTH_CONFIGURATION)


def auth_detail_code(reason: str | None) -> ConnectErrorCode:
    """``details.code`` for an auth failure reason (unknown reasons: ``AUTH_UNAUTHORIZED``)."""
    if reason is None:
        return ConnectErrorCode.AUTH_REQUIRED
    if reason.startswith("trusted_proxy_missing_header_"):
        return ConnectErrorCode.AUTH_IDENTITY_HEADER_REQUIRED
    return _AUTH_CODES.get(reason, ConnectErrorCode.AUTH_UNAUTHORIZED)


CLOSE_REASON_MAX_BYTES = 120
"""The gateway cuts close reasons to this many UTF-8 bytes (``truncateCloseReason``)."""

_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# reason -> (message requirement, remediation hint)
PAIRING_REASONS: Mapping[str, tuple[str, str]] = {
    "not-paired": (
        "device is not approved yet",
        "Approve this device from the pending pairing requests.",
    ),
    "role-upgrade": (
        "device is asking for a higher role than currently approved",
        "Review the requested role upgrade, then approve the pending request.",
    ),
    "scope-upgrade": (
        "device is asking for more scopes than currently approved",
        "Review the requested scopes, then approve the pending upgrade.",
    ),
    "metadata-upgrade": (
        "device identity changed and must be re-approved",
        "Review the refreshed device details, then approve the pending request.",
    ),
}
"""The pairing-required reasons with their message text and remediation hint."""

DEVICE_AUTH_FAILURES: Mapping[str, tuple[ConnectErrorCode, str]] = {
    "device-id-mismatch": (
        ConnectErrorCode.DEVICE_AUTH_DEVICE_ID_MISMATCH,
        "device identity mismatch",
    ),
    "device-signature-stale": (
        ConnectErrorCode.DEVICE_AUTH_SIGNATURE_EXPIRED,
        "device signature expired",
    ),
    "device-nonce-missing": (ConnectErrorCode.DEVICE_AUTH_NONCE_REQUIRED, "device nonce required"),
    "device-nonce-mismatch": (ConnectErrorCode.DEVICE_AUTH_NONCE_MISMATCH, "device nonce mismatch"),
    "device-signature": (
        ConnectErrorCode.DEVICE_AUTH_SIGNATURE_INVALID,
        "device signature invalid",
    ),
}


def truncate_close_reason(reason: str, max_bytes: int = CLOSE_REASON_MAX_BYTES) -> str:
    """Cut a close reason to its longest UTF-8 prefix of ``max_bytes`` bytes, as the gateway does.

    An empty reason becomes ``"invalid handshake"``. Like the gateway, the cut is made on the
    first ``max_bytes`` UTF-16 code units, then backed off to a character boundary.
    """
    if not reason:
        return "invalid handshake"
    encoded = reason.encode("utf-8", "surrogatepass")
    if len(encoded) <= max_bytes:
        return reason
    units = reason.encode("utf-16-le", "surrogatepass")[: 2 * max_bytes]
    head = units.decode("utf-16-le", "replace").encode("utf-8", "replace")
    end = max_bytes
    while 0 < end < len(head) and head[end] & 0xC0 == 0x80:
        end -= 1
    return head[:end].decode("utf-8", "replace")


def pairing_failure(
    *,
    reason: str,
    request_id: str | None,
    device_id: str,
    role: str,
    scopes: Sequence[str],
    approved_roles: Sequence[str],
    approved_scopes: Sequence[str],
    wait_then_retry: bool,
) -> tuple[dict[str, Any], str, str]:
    """``(details, message, close_reason)`` of a pairing-required rejection."""
    requirement, hint = PAIRING_REASONS[reason]
    candidate = (request_id or "").strip(_JS_WHITESPACE)
    valid_id = candidate if _REQUEST_ID.fullmatch(candidate) else None
    details: dict[str, Any] = {
        "code": ConnectErrorCode.PAIRING_REQUIRED.value,
        "reason": reason,
    }
    if valid_id:
        details["requestId"] = valid_id
    details["remediationHint"] = hint
    if wait_then_retry:
        details["recommendedNextStep"] = NextStep.WAIT_THEN_RETRY.value
        details["retryable"] = True
        details["pauseReconnect"] = False
    if device_id.strip(_JS_WHITESPACE):
        details["deviceId"] = device_id.strip(_JS_WHITESPACE)
    if role.strip(_JS_WHITESPACE):
        details["requestedRole"] = role.strip(_JS_WHITESPACE)
    for key, values in (
        ("requestedScopes", scopes),
        ("approvedRoles", approved_roles),
        ("approvedScopes", approved_scopes),
    ):
        trimmed = _trimmed_list(values)
        if trimmed:
            details[key] = trimmed
    message = f"pairing required: {requirement}"
    close = f"{message} (requestId: {valid_id})" if valid_id else message
    return details, message, truncate_close_reason(close)


def _trimmed_list(values: Iterable[str]) -> list[str]:
    trimmed = (value.strip(_JS_WHITESPACE) for value in values)
    return [value for value in trimmed if value]
