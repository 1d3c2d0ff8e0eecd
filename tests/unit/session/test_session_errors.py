"""Unit tests for the typed errors the session produces from wire ErrorShapes."""

from __future__ import annotations

import dataclasses

import pytest

import openclaw_desktop.session as session
from openclaw_desktop.errors import (
    AuthError,
    ConnectionClosed,
    GatewayError,
    InvalidState,
    MissingScope,
    OpenClawError,
    PairingRejected,
    PairingRequired,
    PayloadTooLarge,
    ProtocolError,
    ProtocolMismatch,
    ReconnectPaused,
    RequestOutcomeUnknown,
    RequestTimeout,
    gateway_error_from_shape,
)
from openclaw_desktop.session import events, failures, plan, protocol


@pytest.mark.parametrize(
    ("code", "detail", "cls"),
    [
        ("NOT_PAIRED", None, PairingRequired),
        ("NOT_PAIRED", "PAIRING_REQUIRED", PairingRequired),
        ("INVALID_REQUEST", "PAIRING_REQUIRED", PairingRequired),
        ("INVALID_REQUEST", "PAIRING_REJECTED", PairingRejected),
        ("INVALID_REQUEST", "PROTOCOL_MISMATCH", ProtocolMismatch),
        ("FORBIDDEN", "MISSING_SCOPE", MissingScope),
        ("INVALID_REQUEST", "AUTH_TOKEN_MISMATCH", AuthError),
        ("INVALID_REQUEST", "DEVICE_AUTH_INVALID", AuthError),
        ("NOT_PAIRED", "DEVICE_IDENTITY_REQUIRED", AuthError),
        ("INVALID_REQUEST", "CONTROL_UI_DEVICE_IDENTITY_REQUIRED", AuthError),
        ("INVALID_REQUEST", None, GatewayError),
        ("UNAVAILABLE", "PAIRING_CHANGED", GatewayError),
    ],
)
def test_error_type_from_shape(code: str, detail: str | None, cls: type[GatewayError]) -> None:
    """Each ErrorShape maps to the most specific GatewayError subclass."""
    shape: dict[str, object] = {"code": code, "message": "m"}
    if detail is not None:
        shape["details"] = {"code": detail}
    assert type(gateway_error_from_shape(shape)) is cls


def test_text_details_are_kept_but_have_no_code() -> None:
    """Non-object details survive as they are; there is no detail code to read."""
    error = gateway_error_from_shape({"code": "UNAVAILABLE", "message": "m", "details": "text"})
    assert type(error) is GatewayError
    assert error.details == "text"
    assert error.detail_code is None


def test_error_fields_and_str() -> None:
    """The typed error keeps every ErrorShape field and prints code, detail code and message."""
    error = gateway_error_from_shape(
        {
            "code": "INVALID_REQUEST",
            "message": "device signature invalid",
            "details": {"code": "DEVICE_AUTH_SIGNATURE_INVALID", "reason": "device-signature"},
            "retryable": False,
            "retryAfterMs": 10,
        },
        method="connect",
    )
    assert error.retryable is False
    assert error.retry_after_ms == 10
    assert error.detail("reason") == "device-signature"
    assert error.detail("missing") is None
    assert str(error) == (
        "connect: INVALID_REQUEST [DEVICE_AUTH_SIGNATURE_INVALID]: device signature invalid"
    )


def test_malformed_shape_fields_are_ignored() -> None:
    """Wrong-typed retryable, retryAfterMs and details do not leak into the error."""
    error = gateway_error_from_shape(
        {"code": 5, "message": None, "retryable": "yes", "retryAfterMs": "10", "details": [1]}
    )
    assert error.code == "5"
    assert error.message == ""
    assert error.retryable is None
    assert error.retry_after_ms is None
    assert error.detail_code is None
    assert error.detail("code") is None


def test_empty_shape_is_unknown() -> None:
    """An empty error object still gives a usable GatewayError."""
    error = gateway_error_from_shape({})
    assert error.code == "UNKNOWN"
    assert str(error) == "UNKNOWN: "


def test_boolean_retry_after_is_ignored() -> None:
    """retryAfterMs:true is not a number of milliseconds."""
    error = gateway_error_from_shape({"code": "UNAVAILABLE", "message": "m", "retryAfterMs": True})
    assert error.retry_after_ms is None


def test_pairing_required_without_request_id() -> None:
    """Without a requestId there is no approve command to show."""
    error = gateway_error_from_shape({"code": "NOT_PAIRED", "message": "m"})
    assert isinstance(error, PairingRequired)
    assert error.request_id is None
    assert error.approve_command is None


def test_session_error_strings() -> None:
    """The session's own errors compute readable messages from their fields."""
    assert str(ProtocolError("bad")) == "bad"
    assert str(ConnectionClosed(1008, "policy")) == "connection closed (1008: policy)"
    assert str(ConnectionClosed(1000)) == "connection closed (1000)"
    assert str(RequestTimeout("status", 2.5)) == "status: no response within 2.5s"
    assert str(RequestOutcomeUnknown("chat.send", "connection lost")) == (
        "chat.send: outcome unknown (connection lost)"
    )
    assert str(PayloadTooLarge(10, 5)) == ("frame of 10 bytes exceeds the gateway limit of 5 bytes")
    paused = ReconnectPaused(ProtocolError("x"))
    assert str(paused) == "reconnect paused until you act: x"
    assert isinstance(InvalidState("x"), AssertionError)
    assert all(
        issubclass(cls, OpenClawError)
        for cls in (ProtocolError, ConnectionClosed, RequestTimeout, PayloadTooLarge, GatewayError)
    )


def test_session_events_are_frozen_dataclasses() -> None:
    """Events handed to adapters cannot be mutated."""
    gap = events.SequenceGap(1, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        gap.expected = 2  # type: ignore[misc]


def test_session_package_reexports_its_submodules() -> None:
    """openclaw_desktop.session exports the public names of its modules."""
    public = set(events.__all__) | set(failures.__all__) | set(plan.__all__)
    public |= {"GatewayClientProtocol", "SessionState"}
    public -= {"AuthSource"}
    assert set(session.__all__) == public
    for name in session.__all__:
        assert hasattr(session, name)
    assert protocol.GatewayClientProtocol is session.GatewayClientProtocol
