"""Every handshake rejection row: error, details, close code and close reason."""

from __future__ import annotations

from typing import Any

import pytest

from gateway import handshake as hs
from gateway.handshake import ConnectRejection, truncate_close_reason

CLI_HINT = "use this gateway's gateway.auth.token or pair the device"


def _auth(reason: str | None, **kw: Any) -> ConnectRejection:
    args: dict[str, Any] = {
        "client_id": "cli",
        "client_mode": "cli",
        "auth": {"token": "x"},
        "has_device_identity": True,
    }
    args.update(kw)
    return ConnectRejection.auth_failed(reason, **args)


def test_token_mismatch_with_device_offers_device_token_retry() -> None:
    """A wrong shared token with a device identity recommends the device-token retry."""
    rejection = _auth("token_mismatch")

    assert rejection.error == {
        "code": "INVALID_REQUEST",
        "message": f"unauthorized: gateway token mismatch ({CLI_HINT})",
        "details": {
            "code": "AUTH_TOKEN_MISMATCH",
            "authReason": "token_mismatch",
            "canRetryWithDeviceToken": True,
            "recommendedNextStep": "retry_with_device_token",
        },
    }
    assert (rejection.close_code, rejection.close_reason) == (1008, rejection.message)


def test_token_mismatch_without_device_asks_for_new_credentials() -> None:
    """Without a device identity the mismatch cannot be retried with a device token."""
    details = _auth("token_mismatch", has_device_identity=False).details

    assert details is not None
    assert details["canRetryWithDeviceToken"] is False
    assert details["recommendedNextStep"] == "update_auth_credentials"


def test_token_mismatch_with_explicit_device_token_is_not_retryable() -> None:
    """A connect that already sent a device token gets no retry hint."""
    details = _auth("token_mismatch", auth={"token": "x", "deviceToken": "d"}).details

    assert details is not None
    assert details["canRetryWithDeviceToken"] is False


def test_token_missing() -> None:
    """No token: AUTH_TOKEN_MISSING and update_auth_configuration."""
    rejection = _auth("token_missing", auth=None)

    assert rejection.message == f"unauthorized: gateway token missing ({CLI_HINT})"
    assert rejection.details == {
        "code": "AUTH_TOKEN_MISSING",
        "authReason": "token_missing",
        "canRetryWithDeviceToken": False,
        "recommendedNextStep": "update_auth_configuration",
    }


@pytest.mark.parametrize(
    ("client_id", "mode", "local", "hint"),
    [
        ("cli", "cli", False, "set gateway.remote.token to match gateway.auth.token"),
        ("node-host", "node", True, "provide gateway auth token"),
        ("gateway-client", "backend", True, "provide gateway auth token"),
        (
            "openclaw-control-ui",
            "ui",
            True,
            "open the dashboard URL and paste the token in Control UI settings",
        ),
        (
            "webchat",
            "webchat",
            True,
            "open the dashboard URL and paste the token in Control UI settings",
        ),
    ],
)
def test_token_mismatch_hint_depends_on_client_kind(
    client_id: str, mode: str, local: bool, hint: str
) -> None:
    """The hint in the message follows the client kind and locality."""
    rejection = _auth(
        "token_mismatch", client_id=client_id, client_mode=mode, is_local_client=local
    )

    assert rejection.message == f"unauthorized: gateway token mismatch ({hint})"


def test_token_missing_for_control_ui_uses_its_own_hint() -> None:
    """A Control UI without a token is told where to paste it."""
    rejection = _auth("token_missing", client_id="openclaw-control-ui", client_mode="ui")

    assert rejection.message == (
        "unauthorized: gateway token missing (paste in Control UI settings or openclaw doctor "
        "--generate-gateway-token; restart)"
    )


@pytest.mark.parametrize(
    ("reason", "code", "step", "message"),
    [
        (
            "password_missing",
            "AUTH_PASSWORD_MISSING",
            "update_auth_configuration",
            "unauthorized: gateway password missing (use this gateway's gateway.auth.password)",
        ),
        (
            "password_mismatch",
            "AUTH_PASSWORD_MISMATCH",
            "update_auth_credentials",
            "unauthorized: gateway password mismatch (use this gateway's gateway.auth.password)",
        ),
        (
            "device_token_mismatch",
            "AUTH_DEVICE_TOKEN_MISMATCH",
            "update_auth_credentials",
            "unauthorized: device token mismatch (rotate/reissue device token)",
        ),
        (
            "scope_mismatch",
            "AUTH_SCOPE_MISMATCH",
            "review_auth_configuration",
            "unauthorized: device token scope mismatch (re-pair or approve scope upgrade)",
        ),
        (
            "bootstrap_token_invalid",
            "AUTH_BOOTSTRAP_TOKEN_INVALID",
            "review_auth_configuration",
            "unauthorized: setup code invalid, expired, revoked, or already used "
            "(create a new code; review `openclaw devices list`)",
        ),
        (
            "token_missing_config",
            "AUTH_TOKEN_NOT_CONFIGURED",
            "update_auth_configuration",
            "unauthorized: gateway token not configured on gateway (set gateway.auth.token)",
        ),
        ("whatever", "AUTH_UNAUTHORIZED", "review_auth_configuration", "unauthorized"),
        (
            "trusted_proxy_missing_header_x",
            "AUTH_IDENTITY_HEADER_REQUIRED",
            "review_auth_configuration",
            "unauthorized",
        ),
    ],
)
def test_auth_failure_rows(reason: str, code: str, step: str, message: str) -> None:
    """Each auth reason maps to its detail code, next step and message."""
    rejection = _auth(reason)

    assert rejection.code == "INVALID_REQUEST"
    assert rejection.message == message
    assert rejection.details == {
        "code": code,
        "authReason": reason,
        "canRetryWithDeviceToken": False,
        "recommendedNextStep": step,
    }


def test_rate_limited_is_retryable_after_a_delay() -> None:
    """A lockout is retryable with a top-level retryAfterMs."""
    rejection = _auth("rate_limited", retry_after_ms=42_000)

    assert rejection.error["retryable"] is True
    assert rejection.error["retryAfterMs"] == 42_000
    assert rejection.details == {
        "code": "AUTH_RATE_LIMITED",
        "authReason": "rate_limited",
        "canRetryWithDeviceToken": False,
        "recommendedNextStep": "wait_then_retry",
    }
    assert (
        rejection.message == "unauthorized: too many failed authentication attempts (retry later)"
    )


def test_missing_reason_is_auth_required_without_auth_reason() -> None:
    """No reason at all: AUTH_REQUIRED and no authReason key."""
    rejection = _auth(None, auth=None)

    assert rejection.details == {
        "code": "AUTH_REQUIRED",
        "canRetryWithDeviceToken": False,
        "recommendedNextStep": "review_auth_configuration",
    }
    assert rejection.message == f"unauthorized: gateway token missing ({CLI_HINT})"


def test_protocol_mismatch_closes_with_1002() -> None:
    """Protocol mismatch carries the ranges and closes with 1002."""
    rejection = ConnectRejection.protocol_mismatch(5, 6)

    assert rejection.error == {
        "code": "INVALID_REQUEST",
        "message": "protocol mismatch",
        "details": {
            "code": "PROTOCOL_MISMATCH",
            "clientMinProtocol": 5,
            "clientMaxProtocol": 6,
            "expectedProtocol": 4,
            "minimumProbeProtocol": 3,
        },
    }
    assert (rejection.close_code, rejection.close_reason) == (1002, "protocol mismatch")


@pytest.mark.parametrize(
    ("make", "code", "reason"),
    [
        (
            ConnectRejection.device_id_mismatch,
            "DEVICE_AUTH_DEVICE_ID_MISMATCH",
            "device-id-mismatch",
        ),
        (
            ConnectRejection.device_signature_expired,
            "DEVICE_AUTH_SIGNATURE_EXPIRED",
            "device-signature-stale",
        ),
        (
            ConnectRejection.device_nonce_required,
            "DEVICE_AUTH_NONCE_REQUIRED",
            "device-nonce-missing",
        ),
        (
            ConnectRejection.device_nonce_mismatch,
            "DEVICE_AUTH_NONCE_MISMATCH",
            "device-nonce-mismatch",
        ),
        (
            ConnectRejection.device_signature_invalid,
            "DEVICE_AUTH_SIGNATURE_INVALID",
            "device-signature",
        ),
    ],
)
def test_device_auth_rows(make: Any, code: str, reason: str) -> None:
    """Device-proof failures carry code and reason, and close with the message."""
    rejection = make()

    assert rejection.code == "INVALID_REQUEST"
    assert rejection.details == {"code": code, "reason": reason}
    assert (rejection.close_code, rejection.close_reason) == (1008, rejection.message)


def test_unknown_device_auth_reason_is_device_auth_invalid() -> None:
    """An unknown verifier reason maps to DEVICE_AUTH_INVALID."""
    assert ConnectRejection.device_auth("odd").details == {
        "code": "DEVICE_AUTH_INVALID",
        "reason": "odd",
    }


def test_device_identity_required_is_not_paired() -> None:
    """A missing device identity is NOT_PAIRED with DEVICE_IDENTITY_REQUIRED."""
    rejection = ConnectRejection.device_identity_required()

    assert rejection.error == {
        "code": "NOT_PAIRED",
        "message": "device identity required",
        "details": {"code": "DEVICE_IDENTITY_REQUIRED"},
    }
    assert (rejection.close_code, rejection.close_reason) == (1008, "device identity required")


def test_control_ui_device_identity_required() -> None:
    """A Control UI without device is INVALID_REQUEST with its own detail code."""
    rejection = ConnectRejection.control_ui_device_identity_required()

    assert (
        rejection.message
        == "control ui requires device identity (use HTTPS or localhost secure context)"
    )
    assert rejection.details == {"code": "CONTROL_UI_DEVICE_IDENTITY_REQUIRED"}


def test_pairing_required_for_an_operator() -> None:
    """An unpaired operator gets requestId, hint, device, role and scopes."""
    rejection = ConnectRejection.pairing_required(
        request_id="4ac5dcae-1", device_id="e594", role="operator", scopes=["operator.read"]
    )

    assert rejection.error == {
        "code": "NOT_PAIRED",
        "message": "pairing required: device is not approved yet",
        "details": {
            "code": "PAIRING_REQUIRED",
            "reason": "not-paired",
            "requestId": "4ac5dcae-1",
            "remediationHint": "Approve this device from the pending pairing requests.",
            "deviceId": "e594",
            "requestedRole": "operator",
            "requestedScopes": ["operator.read"],
        },
    }
    assert rejection.close_code == 1008
    assert rejection.close_reason == (
        "pairing required: device is not approved yet (requestId: 4ac5dcae-1)"
    )


def test_pairing_required_for_a_node_has_no_scopes() -> None:
    """A node with no scopes gets no requestedScopes key."""
    details = ConnectRejection.pairing_required(request_id="r1", device_id="d", role="node").details

    assert details is not None
    assert "requestedScopes" not in details
    assert details["requestedRole"] == "node"


def test_pairing_required_drops_an_invalid_request_id() -> None:
    """A request id outside the allowed pattern is left out of details and close reason."""
    rejection = ConnectRejection.pairing_required(request_id="bad id!", device_id="d", role="node")

    assert rejection.details is not None
    assert "requestId" not in rejection.details
    assert rejection.close_reason == "pairing required: device is not approved yet"


def test_pairing_upgrade_waiting_for_approval() -> None:
    """An upgrade in progress says wait_then_retry and lists the approved access."""
    rejection = ConnectRejection.pairing_required(
        request_id="r1",
        device_id="d",
        role="operator",
        scopes=["operator.admin", " "],
        reason="scope-upgrade",
        approved_roles=["operator"],
        approved_scopes=["operator.read"],
        wait_then_retry=True,
    )

    assert (
        rejection.message
        == "pairing required: device is asking for more scopes than currently approved"
    )
    assert rejection.details == {
        "code": "PAIRING_REQUIRED",
        "reason": "scope-upgrade",
        "requestId": "r1",
        "remediationHint": "Review the requested scopes, then approve the pending upgrade.",
        "recommendedNextStep": "wait_then_retry",
        "retryable": True,
        "pauseReconnect": False,
        "deviceId": "d",
        "requestedRole": "operator",
        "requestedScopes": ["operator.admin"],
        "approvedRoles": ["operator"],
        "approvedScopes": ["operator.read"],
    }


@pytest.mark.parametrize(
    ("make", "code", "reason", "respond"),
    [
        (ConnectRejection.not_json, 1000, "", False),
        (ConnectRejection.invalid_request_frame, 1008, "invalid request frame", False),
        (ConnectRejection.worker_handshake, 1008, "invalid-handshake", False),
        (ConnectRejection.preauth_payload_too_large, 1009, "", False),
        (ConnectRejection.invalid_role, 1008, "invalid role", True),
    ],
)
def test_close_rows(make: Any, code: int, reason: str, respond: bool) -> None:
    """Frame-level rows close with their code and reason, some without a res."""
    rejection = make()

    assert (rejection.close_code, rejection.close_reason, rejection.respond) == (
        code,
        reason,
        respond,
    )


def test_first_request_not_connect_answers_the_request() -> None:
    """The not-connect rejection answers the request id it carries."""
    rejection = ConnectRejection.first_request_not_connect("h1")

    assert rejection.response_frame() == {
        "type": "res",
        "id": "h1",
        "ok": False,
        "error": {
            "code": "INVALID_REQUEST",
            "message": "invalid handshake: first request must be connect",
        },
    }
    assert rejection.close_reason == "invalid handshake: first request must be connect"


def test_frames_that_are_not_requests_get_no_response() -> None:
    """No res for a frame that is not a request, whatever id is offered."""
    assert ConnectRejection.invalid_request_frame().response_frame("x") is None


def test_invalid_connect_params_close_reason_is_cut_to_120_bytes() -> None:
    """The message stays whole while the close reason is cut."""
    rejection = ConnectRejection.invalid_connect_params("x" * 200)

    assert rejection.message == "invalid connect params: " + "x" * 200
    assert rejection.close_reason == rejection.message[:120]


def test_browser_rows() -> None:
    """Copilot and origin rows carry their texts and details."""
    copilot = ConnectRejection.browser_copilot_origin()
    origin = ConnectRejection.origin_not_allowed("origin missing or invalid")

    assert ConnectRejection.browser_copilot_requires_ui_caps().details is None
    assert copilot.details == {
        "code": "CONTROL_UI_ORIGIN_NOT_ALLOWED",
        "reason": "invalid browser copilot origin",
    }
    assert origin.details == {
        "code": "CONTROL_UI_ORIGIN_NOT_ALLOWED",
        "reason": "origin missing or invalid",
    }
    assert origin.close_reason.startswith("origin not allowed (open the Control UI")


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("", "invalid handshake"),
        ("short", "short"),
        ("a" * 121, "a" * 120),
        ("a" * 119 + "é", "a" * 119),
        ("é" * 61, "é" * 60),
        ("a" * 118 + "\U0001f600", "a" * 118),
    ],
)
def test_truncate_close_reason(reason: str, expected: str) -> None:
    """Close reasons keep the longest UTF-8 prefix of at most 120 bytes."""
    assert truncate_close_reason(reason) == expected


def test_shortcuts_use_the_params_client() -> None:
    """Module shortcuts word the message for the connecting client."""
    assert hs.token_mismatch().details == _auth("token_mismatch").details
    assert hs.rate_limited(5).error["retryAfterMs"] == 5
    assert hs.bootstrap_token_invalid().details is not None
    assert hs.password_missing().message.startswith("unauthorized: gateway password missing")
    assert hs.pairing_required(request_id="r", device_id="d", role="node").code == "NOT_PAIRED"
