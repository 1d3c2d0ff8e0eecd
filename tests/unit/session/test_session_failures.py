"""Unit tests for decide_after_failure: the pause / retry table of gateway-protocol.md 3.4."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.errors import (
    ConnectionClosed,
    GatewayError,
    OpenClawError,
    PairingRequired,
    PayloadTooLarge,
    ProtocolError,
    RequestTimeout,
    TrustError,
    gateway_error_from_shape,
)
from openclaw_desktop.protocol import error_shape
from openclaw_desktop.session import ErrorCategory, FailureDecision, decide_after_failure
from openclaw_desktop.session.plan import AuthSource
from tests.helpers.session_builders import load_fixture

#: A top-level code no rule knows, so that only the detail rule under test decides.
NEUTRAL = "GATEWAY_NEW_CODE"


def gw(
    code: str = "INVALID_REQUEST",
    details: dict[str, Any] | None = None,
    *,
    retry_after_ms: int | None = None,
    retryable: bool | None = None,
) -> GatewayError:
    """A typed gateway error built the way the session builds it from a res frame."""
    shape = error_shape(
        code, "message", details, retryable=retryable, retry_after_ms=retry_after_ms
    )
    return gateway_error_from_shape(shape, method="connect")


def decide(
    error: OpenClawError, source: AuthSource = "shared-token", **kwargs: Any
) -> FailureDecision:
    """decide_after_failure with a default auth source."""
    return decide_after_failure(error, auth_source=source, **kwargs)


# ---------------------------------------------------------------- pairing

PAIRING_WAIT = {
    "code": "PAIRING_REQUIRED",
    "reason": "not-paired",
    "requestId": "req-1",
    "recommendedNextStep": "wait_then_retry",
}


def test_pairing_required_pauses() -> None:
    """PAIRING_REQUIRED (the real NOT_PAIRED answer) pauses reconnecting."""
    row = next(r for r in load_fixture("connect_rejections.json") if r["case"] == "unpaired device")
    error = gateway_error_from_shape(row["frame"]["error"])
    assert isinstance(error, PairingRequired)
    assert decide(error) == FailureDecision(ErrorCategory.PAIRING, pause=True)


def test_not_paired_without_details_is_pairing() -> None:
    """NOT_PAIRED with no details code is still a pairing pause."""
    assert decide(gw("NOT_PAIRED")) == FailureDecision(ErrorCategory.PAIRING, pause=True)


@pytest.mark.parametrize(
    "waiting",
    [{"recommendedNextStep": "wait_then_retry"}, {"pauseReconnect": False}],
    ids=["wait_then_retry", "pauseReconnect-false"],
)
def test_bootstrap_node_waiting_for_approval_keeps_retrying(waiting: dict[str, Any]) -> None:
    """The Android exception: a bootstrap-token node told to wait keeps retrying."""
    details = {"code": "PAIRING_REQUIRED", "reason": "not-paired", **waiting}
    decision = decide(gw("NOT_PAIRED", details), "bootstrap-token", role="node")
    assert decision == FailureDecision(ErrorCategory.PAIRING, pause=False)


def test_bootstrap_exception_reads_the_role_from_details() -> None:
    """Without a role argument, details.requestedRole says whether this was a node."""
    node = gw("NOT_PAIRED", {**PAIRING_WAIT, "requestedRole": "node"})
    operator = gw("NOT_PAIRED", {**PAIRING_WAIT, "requestedRole": "operator"})
    assert decide(node, "bootstrap-token").pause is False
    assert decide(operator, "bootstrap-token").pause is True


@pytest.mark.parametrize(
    ("source", "role", "details"),
    [
        ("bootstrap-token", "operator", PAIRING_WAIT),
        ("bootstrap-token", None, PAIRING_WAIT),
        ("shared-token", "node", PAIRING_WAIT),
        ("device-token", "node", PAIRING_WAIT),
        ("bootstrap-token", "node", {**PAIRING_WAIT, "reason": "scope-upgrade"}),
        ("bootstrap-token", "node", {**PAIRING_WAIT, "recommendedNextStep": None}),
        ("bootstrap-token", "node", {**PAIRING_WAIT, "recommendedNextStep": "retry"}),
        (
            "bootstrap-token",
            "node",
            {**PAIRING_WAIT, "recommendedNextStep": None, "pauseReconnect": True},
        ),
    ],
    ids=[
        "operator",
        "no-role",
        "shared-token",
        "device-token",
        "other-reason",
        "no-wait-hint",
        "other-next-step",
        "pause-true",
    ],
)
def test_pairing_pauses_outside_the_bootstrap_node_exception(
    source: AuthSource, role: str | None, details: dict[str, Any]
) -> None:
    """Every other PAIRING_REQUIRED case pauses."""
    decision = decide(gw("NOT_PAIRED", details), source, role=role)
    assert decision == FailureDecision(ErrorCategory.PAIRING, pause=True)


# ---------------------------------------------------------------- rate limit and next steps


def test_auth_rate_limited_pauses_with_the_hint() -> None:
    """AUTH_RATE_LIMITED pauses (lockouts last minutes) and keeps retryAfterMs."""
    error = gw(details={"code": "AUTH_RATE_LIMITED"}, retry_after_ms=120_000)
    assert decide(error) == FailureDecision(
        ErrorCategory.RATE_LIMITED, pause=True, retry_after_ms=120_000
    )


def test_rate_limit_wins_over_wait_then_retry() -> None:
    """Generic 'wait_then_retry' advice does not undo a rate-limit pause."""
    error = gw(details={"code": "AUTH_RATE_LIMITED", "recommendedNextStep": "wait_then_retry"})
    assert decide(error).pause is True


@pytest.mark.parametrize("code", [NEUTRAL, "INVALID_REQUEST"])
@pytest.mark.parametrize("detail", [None, "AUTH_TOKEN_MISSING", "X_NEW"])
def test_wait_then_retry_does_not_pause(code: str, detail: str | None) -> None:
    """recommendedNextStep wait_then_retry retries, honouring retryAfterMs."""
    details: dict[str, Any] = {"recommendedNextStep": "wait_then_retry"}
    if detail is not None:
        details["code"] = detail
    decision = decide(gw(code, details, retry_after_ms=4000))
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=False, retry_after_ms=4000)


@pytest.mark.parametrize(
    "step", ["update_auth_configuration", "update_auth_credentials", "review_auth_configuration"]
)
def test_configuration_next_steps_pause(step: str) -> None:
    """Next steps that need the user pause, whatever the codes say."""
    decision = decide(gw(NEUTRAL, {"code": "X_NEW", "recommendedNextStep": step}))
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=True)


def test_retry_with_device_token_retries_when_a_retry_is_available() -> None:
    """retry_with_device_token plus an available trusted retry: retry now with the token."""
    error = gw(NEUTRAL, {"code": "X_NEW", "recommendedNextStep": "retry_with_device_token"})
    decision = decide(error, "shared-token", device_token_retry_available=True)
    assert decision == FailureDecision(
        ErrorCategory.AUTH, pause=False, retry_with_device_token=True, retry_now=True
    )


@pytest.mark.parametrize(
    ("source", "available"),
    [("shared-token", False), ("device-token-retry", True), ("device-token", True)],
)
def test_retry_with_device_token_pauses_without_a_pending_retry(
    source: AuthSource, available: bool
) -> None:
    """retry_with_device_token pauses when no device-token retry will be made."""
    error = gw(NEUTRAL, {"code": "X_NEW", "recommendedNextStep": "retry_with_device_token"})
    decision = decide(error, source, device_token_retry_available=available)
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=True)


def test_can_retry_with_device_token_flag_alone_triggers_the_retry() -> None:
    """details.canRetryWithDeviceToken:true is enough to make the one retry."""
    error = gw(NEUTRAL, {"code": "X_NEW", "canRetryWithDeviceToken": True})
    assert decide(error, device_token_retry_available=True).retry_with_device_token is True


# ---------------------------------------------------------------- detail codes

PAUSING_DETAIL_CODES = [
    "AUTH_TOKEN_MISSING",
    "AUTH_TOKEN_NOT_CONFIGURED",
    "AUTH_DEVICE_TOKEN_MISMATCH",
    "AUTH_BOOTSTRAP_TOKEN_INVALID",
    "AUTH_PASSWORD_MISSING",
    "AUTH_PASSWORD_MISMATCH",
    "AUTH_PASSWORD_NOT_CONFIGURED",
    "AUTH_SCOPE_MISMATCH",
    "AUTH_VERIFIED_USER_REQUIRED",
    "CONTROL_UI_DEVICE_IDENTITY_REQUIRED",
    "DEVICE_IDENTITY_REQUIRED",
]


@pytest.mark.parametrize("code", [NEUTRAL, "INVALID_REQUEST", "NOT_PAIRED"])
@pytest.mark.parametrize("detail", PAUSING_DETAIL_CODES)
def test_listed_detail_codes_pause(detail: str, code: str) -> None:
    """Each detail code listed in the table pauses, whatever the top-level code."""
    assert decide(gw(code, {"code": detail})) == FailureDecision(ErrorCategory.AUTH, pause=True)


@pytest.mark.parametrize("code", [NEUTRAL, "INVALID_REQUEST"])
def test_protocol_mismatch_pauses(code: str) -> None:
    """PROTOCOL_MISMATCH pauses; no retry can fix the version range."""
    error = gw(code, {"code": "PROTOCOL_MISMATCH", "expectedProtocol": 4})
    assert decide(error) == FailureDecision(ErrorCategory.PROTOCOL_MISMATCH, pause=True)


@pytest.mark.parametrize(
    "detail",
    [
        "DEVICE_AUTH_SIGNATURE_INVALID",
        "DEVICE_AUTH_DEVICE_ID_MISMATCH",
        "DEVICE_AUTH_SIGNATURE_EXPIRED",
        "DEVICE_AUTH_NONCE_MISMATCH",
        "DEVICE_AUTH_NONCE_REQUIRED",
        "DEVICE_AUTH_PUBLIC_KEY_INVALID",
        "DEVICE_AUTH_INVALID",
    ],
)
def test_device_auth_failures_pause(detail: str) -> None:
    """A bad device proof will not fix itself by retrying."""
    assert decide(gw(NEUTRAL, {"code": detail})) == FailureDecision(ErrorCategory.AUTH, pause=True)


@pytest.mark.parametrize("code", ["INVALID_REQUEST", "FORBIDDEN", "NOT_PAIRED"])
def test_plain_refusals_without_details_pause(code: str) -> None:
    """INVALID_REQUEST/FORBIDDEN without details (bad role, bad params) pause."""
    assert decide(gw(code)).pause is True


def test_unknown_codes_back_off_without_pausing() -> None:
    """An error no rule knows is treated as a transient outage."""
    decision = decide(gw(NEUTRAL, {"code": "X_NEW"}, retry_after_ms=700))
    assert decision == FailureDecision(ErrorCategory.UNAVAILABLE, pause=False, retry_after_ms=700)


# ---------------------------------------------------------------- token mismatches


def test_token_mismatch_with_device_retry_available_retries_now() -> None:
    """AUTH_TOKEN_MISMATCH on a shared token, stored token and trusted endpoint: retry once."""
    row = next(
        r for r in load_fixture("connect_rejections.json") if r["case"] == "wrong shared token"
    )
    error = gateway_error_from_shape(row["frame"]["error"])
    decision = decide(error, "shared-token", device_token_retry_available=True)
    assert decision == FailureDecision(
        ErrorCategory.AUTH, pause=False, retry_with_device_token=True, retry_now=True
    )


@pytest.mark.parametrize(
    ("source", "available"),
    [
        ("shared-token", False),
        ("device-token-retry", False),
        ("device-token-retry", True),
        ("device-token", True),
        ("password", True),
    ],
)
def test_token_mismatch_without_a_pending_retry_pauses(source: AuthSource, available: bool) -> None:
    """AUTH_TOKEN_MISMATCH pauses unless the one device-token retry is about to happen."""
    error = gw(details={"code": "AUTH_TOKEN_MISMATCH", "canRetryWithDeviceToken": True})
    decision = decide(error, source, device_token_retry_available=available)
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=True)


def test_dead_device_token_with_fallback_is_cleared_and_retried_now() -> None:
    """AUTH_DEVICE_TOKEN_MISMATCH on a stored token: drop it, retry at once with the fallback."""
    error = gw(details={"code": "AUTH_DEVICE_TOKEN_MISMATCH"})
    decision = decide(error, "device-token", has_fallback_credential=True)
    assert decision == FailureDecision(
        ErrorCategory.AUTH, pause=False, clear_device_token=True, retry_now=True
    )


def test_dead_device_token_without_fallback_is_cleared_and_paused() -> None:
    """With nothing else to try, the dead token is cleared and reconnecting pauses."""
    error = gw(details={"code": "AUTH_DEVICE_TOKEN_MISMATCH"})
    decision = decide(error, "device-token", has_fallback_credential=False)
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=True, clear_device_token=True)


def test_failed_device_token_retry_clears_and_pauses() -> None:
    """If the one retry fails with AUTH_DEVICE_TOKEN_MISMATCH: delete the token, stop."""
    error = gw(details={"code": "AUTH_DEVICE_TOKEN_MISMATCH"})
    decision = decide(error, "device-token-retry", has_fallback_credential=True)
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=True, clear_device_token=True)


def test_device_token_mismatch_without_a_device_token_does_not_clear() -> None:
    """Nothing is cleared when the attempt did not use the stored token."""
    decision = decide(gw(details={"code": "AUTH_DEVICE_TOKEN_MISMATCH"}), "shared-token")
    assert decision == FailureDecision(ErrorCategory.AUTH, pause=True)


# ---------------------------------------------------------------- transient failures


@pytest.mark.parametrize("retry_after", [None, 0, 2500])
def test_unavailable_is_not_paused(retry_after: int | None) -> None:
    """UNAVAILABLE (e.g. startup-sidecars) backs off, carrying retryAfterMs."""
    error = gw(
        "UNAVAILABLE",
        {"reason": "startup-sidecars"},
        retry_after_ms=retry_after,
        retryable=True,
    )
    assert decide(error) == FailureDecision(
        ErrorCategory.UNAVAILABLE, pause=False, retry_after_ms=retry_after
    )


def test_unavailable_with_unknown_detail_code_is_not_paused() -> None:
    """UNAVAILABLE with a details code no rule knows (PAIRING_CHANGED) still backs off."""
    error = gw("UNAVAILABLE", {"code": "PAIRING_CHANGED"}, retryable=True)
    assert decide(error).pause is False


@pytest.mark.parametrize("code", [1012, 1013])
def test_service_restart_close_codes(code: int) -> None:
    """Close codes 1012/1013 mean 'restarting / try again later': not paused."""
    assert decide(ConnectionClosed(code, "restart")) == FailureDecision(
        ErrorCategory.SERVER_RESTART, pause=False
    )


@pytest.mark.parametrize("code", [None, 1000, 1001, 1006, 1008, 1011, 4000])
def test_other_closes_are_network_failures(code: int | None) -> None:
    """Any other close is a network failure that backs off without pausing."""
    assert decide(ConnectionClosed(code, "")) == FailureDecision(ErrorCategory.NETWORK, pause=False)


@pytest.mark.parametrize("kind", ["mismatch", "declined", "untrusted", "unavailable"])
def test_trust_errors_pause(kind: str) -> None:
    """TLS trust refusals pause until the user decides."""
    error = TrustError(kind, "gw.example:18789", expected="aa", actual="bb")
    assert decide(error) == FailureDecision(ErrorCategory.TRUST, pause=True)


@pytest.mark.parametrize("error", [ProtocolError("bad challenge"), RequestTimeout("connect", 15.0)])
def test_protocol_errors_and_timeouts_back_off(error: OpenClawError) -> None:
    """A garbled handshake or a silent gateway is retried with backoff."""
    assert decide(error) == FailureDecision(ErrorCategory.PROTOCOL, pause=False)


def test_oversized_connect_frame_pauses() -> None:
    """A connect frame over the pre-auth cap fails the same way every time: pause."""
    assert decide(PayloadTooLarge(70_000, 65_536)) == FailureDecision(
        ErrorCategory.PROTOCOL, pause=True
    )


def test_unclassified_errors_are_network_failures() -> None:
    """Any other OpenClawError backs off as a network failure."""
    assert decide(OpenClawError("?")) == FailureDecision(ErrorCategory.NETWORK, pause=False)


# ---------------------------------------------------------------- the real rejection table


@pytest.mark.parametrize(
    "row", load_fixture("connect_rejections.json"), ids=lambda row: row["case"]
)
def test_every_real_rejection_pauses_without_a_retry(row: dict[str, Any]) -> None:
    """Each handshake rejection observed on the real gateway pauses (no retry loop)."""
    error = gateway_error_from_shape(row["frame"]["error"])
    decision = decide(error, "shared-token", device_token_retry_available=False)
    assert decision.pause is True
    assert decision.retry_now is False


def test_failure_decision_defaults() -> None:
    """A FailureDecision only sets what it is given."""
    decision = FailureDecision(ErrorCategory.NETWORK, pause=False)
    assert decision.retry_with_device_token is False
    assert decision.clear_device_token is False
    assert decision.retry_now is False
    assert decision.retry_after_ms is None
