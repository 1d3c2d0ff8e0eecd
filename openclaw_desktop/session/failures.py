"""What to do after a connection attempt fails: retry with backoff, retry at once, or pause.

A pure policy. The reconnect loop in ``transport`` asks :func:`decide_after_failure` and
then sleeps by the backoff schedule of the category. Auth, pairing and protocol mismatches
never loop: they pause until the user acts (the Android rules in the reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from openclaw_desktop.errors import (
    ConnectionClosed,
    GatewayError,
    OpenClawError,
    PairingRequired,
    PayloadTooLarge,
    ProtocolError,
    ProtocolMismatch,
    RequestTimeout,
    TrustError,
)
from openclaw_desktop.protocol import CloseCode, ConnectErrorCode, ErrorCode, NextStep, Role
from openclaw_desktop.session.plan import AuthSource

__all__ = ["ErrorCategory", "FailureDecision", "decide_after_failure"]

#: Close codes meaning "service restarting / try again later".
SERVER_BUSY_CLOSE_CODES = frozenset({CloseCode.SERVICE_RESTART, CloseCode.TRY_AGAIN_LATER})

_PAUSE_DETAIL_CODES = frozenset(
    {
        ConnectErrorCode.AUTH_TOKEN_MISSING,
        ConnectErrorCode.AUTH_TOKEN_NOT_CONFIGURED,
        ConnectErrorCode.AUTH_DEVICE_TOKEN_MISMATCH,
        ConnectErrorCode.AUTH_BOOTSTRAP_TOKEN_INVALID,
        ConnectErrorCode.AUTH_PASSWORD_MISSING,
        ConnectErrorCode.AUTH_PASSWORD_MISMATCH,
        ConnectErrorCode.AUTH_PASSWORD_NOT_CONFIGURED,
        ConnectErrorCode.AUTH_SCOPE_MISMATCH,
        ConnectErrorCode.AUTH_VERIFIED_USER_REQUIRED,
        ConnectErrorCode.CONTROL_UI_DEVICE_IDENTITY_REQUIRED,
        ConnectErrorCode.DEVICE_IDENTITY_REQUIRED,
        ConnectErrorCode.PROTOCOL_MISMATCH,
        ConnectErrorCode.AUTH_RATE_LIMITED,
        ConnectErrorCode.AUTH_UNAUTHORIZED,
        ConnectErrorCode.PAIRING_REJECTED,
        ConnectErrorCode.PAIRING_EXPIRED,
    }
)
_PAUSE_NEXT_STEPS = frozenset(
    {
        NextStep.UPDATE_AUTH_CONFIGURATION,
        NextStep.UPDATE_AUTH_CREDENTIALS,
        NextStep.REVIEW_AUTH_CONFIGURATION,
    }
)


class ErrorCategory(StrEnum):
    """Why an attempt failed, for the retry policy and the status shown to the user."""

    AUTH = "auth"
    PAIRING = "pairing"
    RATE_LIMITED = "rate-limited"
    PROTOCOL_MISMATCH = "protocol-mismatch"
    UNAVAILABLE = "unavailable"
    SERVER_RESTART = "server-restart"
    TRUST = "trust"
    PROTOCOL = "protocol"
    NETWORK = "network"


@dataclass(frozen=True, slots=True)
class FailureDecision:
    """The policy's answer.

    Attributes:
        category: what kind of failure this was.
        pause: stop reconnecting until the user acts (or, for pairing, until approval
            is polled for by the caller's waiting loop).
        retry_with_device_token: make the one allowed retry with the stored device token.
        clear_device_token: the stored device token is dead; delete it.
        retry_now: retry at once (after clearing a dead device token with a fallback left).
        retry_after_ms: the gateway's hint for the next attempt.
    """

    category: ErrorCategory
    pause: bool
    retry_with_device_token: bool = False
    clear_device_token: bool = False
    retry_now: bool = False
    retry_after_ms: int | None = None


def decide_after_failure(
    error: OpenClawError,
    *,
    auth_source: AuthSource,
    device_token_retry_available: bool = False,
    has_fallback_credential: bool = False,
    role: str | None = None,
) -> FailureDecision:
    """Classify a failed attempt.

    Args:
        error: what ended the attempt.
        auth_source: which credential the attempt used.
        device_token_retry_available: a stored device token exists, the endpoint is trusted
            (loopback/LAN cleartext or pinned TLS) and the one retry was not used yet.
        has_fallback_credential: a shared or bootstrap token remains if the stored device
            token turns out to be dead.
        role: the role the attempt connected as (``operator`` or ``node``); when not given,
            ``details.requestedRole`` of a pairing error stands in for it.
    """
    if isinstance(error, TrustError):
        return FailureDecision(ErrorCategory.TRUST, pause=True)
    if isinstance(error, ConnectionClosed):
        if error.code in SERVER_BUSY_CLOSE_CODES:
            return FailureDecision(ErrorCategory.SERVER_RESTART, pause=False)
        return FailureDecision(ErrorCategory.NETWORK, pause=False)
    if isinstance(error, ProtocolMismatch):
        return FailureDecision(ErrorCategory.PROTOCOL_MISMATCH, pause=True)
    if isinstance(error, PayloadTooLarge):
        # Our own connect frame is over the gateway's cap: the same plan fails every time.
        return FailureDecision(ErrorCategory.PROTOCOL, pause=True)
    if isinstance(error, GatewayError):
        return _decide_gateway_error(
            error,
            auth_source=auth_source,
            device_token_retry_available=device_token_retry_available,
            has_fallback_credential=has_fallback_credential,
            role=role,
        )
    if isinstance(error, ProtocolError | RequestTimeout):
        return FailureDecision(ErrorCategory.PROTOCOL, pause=False)
    return FailureDecision(ErrorCategory.NETWORK, pause=False)


def _decide_gateway_error(
    error: GatewayError,
    *,
    auth_source: AuthSource,
    device_token_retry_available: bool,
    has_fallback_credential: bool,
    role: str | None,
) -> FailureDecision:
    detail = error.detail_code
    next_step = error.detail("recommendedNextStep")
    if error.code == ErrorCode.UNAVAILABLE and detail is None:
        return FailureDecision(
            ErrorCategory.UNAVAILABLE, pause=False, retry_after_ms=error.retry_after_ms
        )
    if isinstance(error, PairingRequired):
        # The one exception (Android): a bootstrap-token node connect (nodes request no
        # scopes) that the gateway says to keep retrying while approval is pending.
        waiting = next_step == NextStep.WAIT_THEN_RETRY or error.detail("pauseReconnect") is False
        connect_role = role if role is not None else error.detail("requestedRole")
        if (
            auth_source == "bootstrap-token"
            and connect_role == Role.NODE
            and error.detail("reason") == "not-paired"
            and waiting
        ):
            return FailureDecision(ErrorCategory.PAIRING, pause=False)
        return FailureDecision(ErrorCategory.PAIRING, pause=True)
    if detail == ConnectErrorCode.AUTH_RATE_LIMITED:
        return FailureDecision(
            ErrorCategory.RATE_LIMITED, pause=True, retry_after_ms=error.retry_after_ms
        )
    if detail == ConnectErrorCode.AUTH_DEVICE_TOKEN_MISMATCH and auth_source in (
        "device-token",
        "device-token-retry",
    ):
        # The stored token was revoked or rotated elsewhere: drop it; if a shared or
        # bootstrap credential is left, one more attempt with it is worth making now.
        retry = auth_source == "device-token" and has_fallback_credential
        return FailureDecision(
            ErrorCategory.AUTH, pause=not retry, clear_device_token=True, retry_now=retry
        )
    wants_device_retry = (
        detail == ConnectErrorCode.AUTH_TOKEN_MISMATCH
        or error.detail("canRetryWithDeviceToken") is True
        or next_step == NextStep.RETRY_WITH_DEVICE_TOKEN
    )
    if wants_device_retry and auth_source == "shared-token" and device_token_retry_available:
        return FailureDecision(
            ErrorCategory.AUTH, pause=False, retry_with_device_token=True, retry_now=True
        )
    if next_step == NextStep.WAIT_THEN_RETRY:
        return FailureDecision(ErrorCategory.AUTH, pause=False, retry_after_ms=error.retry_after_ms)
    if (
        detail in _PAUSE_DETAIL_CODES
        or next_step in _PAUSE_NEXT_STEPS
        # The device-token retry was not taken above (used, untrusted endpoint, no token).
        or next_step == NextStep.RETRY_WITH_DEVICE_TOKEN
        or detail == ConnectErrorCode.AUTH_TOKEN_MISMATCH
    ):
        return FailureDecision(ErrorCategory.AUTH, pause=True)
    if isinstance(detail, str) and detail.startswith("DEVICE_AUTH_"):
        # A bad signature or stale clock will not fix itself by retrying.
        return FailureDecision(ErrorCategory.AUTH, pause=True)
    if error.code in (ErrorCode.INVALID_REQUEST, ErrorCode.FORBIDDEN, ErrorCode.NOT_PAIRED):
        return FailureDecision(ErrorCategory.AUTH, pause=True)
    return FailureDecision(
        ErrorCategory.UNAVAILABLE, pause=False, retry_after_ms=error.retry_after_ms
    )
