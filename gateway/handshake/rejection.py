"""Handshake rejections: the error, close code and close reason the real gateway sends.

Every constructor reproduces one rejection of the real OpenClaw gateway 2026.9.6 exactly:
``error.code``, ``error.message``, ``error.details`` (and top-level ``retryable`` /
``retryAfterMs`` where it sends them), the WebSocket close code and the close reason.

Provenance (see ``tests/interop/test_gw_handshake_probe.py`` for the live checks):

* observed live: first request not connect, invalid request frame, not JSON, worker claim,
  invalid connect params (AJV/TypeBox-style text), protocol mismatch, invalid role,
  browser copilot mode/caps and origin, control UI device identity required, device identity
  required, every device-auth failure except ``device public key invalid``, token missing,
  token mismatch (with and without a device), pairing required (operator and node).
* also observed: preauth payload too large (close 1009, empty reason), origin not allowed
  (a webchat client without Origin), device token mismatch.
* read from the source only: the auth failures that need another gateway configuration
  or state (password, scope, bootstrap token, rate limit - loopback is exempt from the
  limiter -, token/password not configured).

Rejections the reference sends that this gateway never can have no constructor: device
public key invalid (unreachable in 2026.9.6 too: an undecodable key fails the device id
check first), gateway starting (no startup sidecars here) and client version mismatch
(no local node host of the gateway's own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gateway.errors import BundledGatewayError
from openclaw_desktop.protocol import CloseCode, ConnectErrorCode, ErrorCode, error_shape

from .texts import (
    CLOSE_REASON_MAX_BYTES,
    DEVICE_AUTH_FAILURES,
    PAIRING_REASONS,
    auth_detail_code,
    auth_failure_message,
    auth_next_step,
    auth_provided,
    can_retry_with_device_token,
    pairing_failure,
    truncate_close_reason,
)

__all__ = [
    "CLOSE_REASON_MAX_BYTES",
    "PAIRING_REASONS",
    "ConnectRejection",
    "truncate_close_reason",
]


class ConnectRejection(BundledGatewayError):
    """A failed handshake: what to answer (if anything) and how to close the socket.

    Attributes:
        error: The ErrorShape dict of the ``res`` frame.
        close_code: The WebSocket close code.
        close_reason: The WebSocket close reason (already truncated).
        respond: Whether a ``res`` frame is sent before closing (False for frames that are
            not requests at all).
        request_id: The id of the request being answered, when the rejection knows it.
    """

    def __init__(
        self,
        error: dict[str, Any],
        close_code: int,
        close_reason: str,
        *,
        respond: bool = True,
        request_id: str | None = None,
    ) -> None:
        super().__init__(error.get("message", close_reason))
        # Plain strings, not enum members, so the frame compares and serializes as the wire.
        self.error = {**error, "code": str(error["code"])}
        self.close_code = close_code
        self.close_reason = close_reason
        self.respond = respond
        self.request_id = request_id

    @property
    def code(self) -> str:
        """``error.code``."""
        return str(self.error["code"])

    @property
    def message(self) -> str:
        """``error.message``."""
        return str(self.error["message"])

    @property
    def details(self) -> dict[str, Any] | None:
        """``error.details`` or None."""
        details = self.error.get("details")
        return details if isinstance(details, dict) else None

    def response_frame(self, request_id: str | None = None) -> dict[str, Any] | None:
        """The ``res`` frame to send before closing, or None when none is sent."""
        frame_id = request_id if request_id is not None else self.request_id
        if not self.respond or frame_id is None:
            return None
        return {"type": "res", "id": frame_id, "ok": False, "error": self.error}

    def __repr__(self) -> str:
        return (
            f"ConnectRejection(code={self.error.get('code')!r}, message={self.message!r}, "
            f"close={self.close_code} {self.close_reason!r})"
        )

    # ------------------------------------------------------------------ first frame
    @classmethod
    def not_json(cls) -> ConnectRejection:
        """The first frame is not JSON: plain close 1000 with no reason and no ``res``."""
        return cls(
            error_shape(ErrorCode.INVALID_REQUEST, "invalid json"),
            CloseCode.NORMAL,
            "",
            respond=False,
        )

    @classmethod
    def invalid_request_frame(cls) -> ConnectRejection:
        """The first frame is JSON but not a request frame: close 1008, no ``res``."""
        message = "invalid request frame"
        return cls(
            error_shape(ErrorCode.INVALID_REQUEST, message),
            CloseCode.POLICY_VIOLATION,
            message,
            respond=False,
        )

    @classmethod
    def worker_handshake(cls) -> ConnectRejection:
        """Params claim the worker identity on the normal endpoint: close 1008, no ``res``."""
        error = error_shape(ErrorCode.INVALID_REQUEST, "invalid worker handshake")
        return cls(error, CloseCode.POLICY_VIOLATION, "invalid-handshake", respond=False)

    @classmethod
    def preauth_payload_too_large(cls) -> ConnectRejection:
        """A frame over 64 KiB before ``hello-ok``: close 1009 with no reason, no ``res``.

        Observed: the WebSocket layer (``maxPayload`` 65536) closes before the gateway's own
        ``preauth payload too large`` check can run, so the reason is empty.
        """
        error = error_shape(ErrorCode.INVALID_REQUEST, "preauth payload too large")
        return cls(error, CloseCode.MESSAGE_TOO_BIG, "", respond=False)

    @classmethod
    def first_request_not_connect(cls, request_id: str | None = None) -> ConnectRejection:
        """The first request is not ``connect``."""
        return cls._invalid(
            "invalid handshake: first request must be connect", request_id=request_id
        )

    @classmethod
    def invalid_connect_params(cls, detail: str) -> ConnectRejection:
        """``connect`` params fail the schema; ``detail`` is the formatted validator text."""
        return cls._invalid(f"invalid connect params: {detail}")

    # ------------------------------------------------------------------ admission
    @classmethod
    def protocol_mismatch(cls, min_protocol: int, max_protocol: int) -> ConnectRejection:
        """No protocol version in common; close code 1002."""
        details = {
            "code": ConnectErrorCode.PROTOCOL_MISMATCH.value,
            "clientMinProtocol": min_protocol,
            "clientMaxProtocol": max_protocol,
            "expectedProtocol": 4,
            "minimumProbeProtocol": 3,
        }
        message = "protocol mismatch"
        return cls(
            error_shape(ErrorCode.INVALID_REQUEST, message, details),
            CloseCode.PROTOCOL_ERROR,
            message,
        )

    @classmethod
    def invalid_role(cls) -> ConnectRejection:
        """A role other than ``operator`` or ``node``."""
        return cls._invalid("invalid role")

    @classmethod
    def browser_copilot_requires_ui_caps(cls) -> ConnectRejection:
        """The browser copilot without mode ``ui`` and its two required caps."""
        return cls._invalid(
            "browser copilot requires ui mode with run-tool-bindings and "
            "session-scoped-events capabilities"
        )

    @classmethod
    def browser_copilot_origin(cls) -> ConnectRejection:
        """The browser copilot without a canonical ``chrome-extension://`` Origin."""
        return cls._invalid(
            "browser copilot requires a canonical Chrome extension origin",
            {
                "code": ConnectErrorCode.CONTROL_UI_ORIGIN_NOT_ALLOWED.value,
                "reason": "invalid browser copilot origin",
            },
        )

    @classmethod
    def origin_not_allowed(cls, reason: str) -> ConnectRejection:
        """A browser Origin the gateway does not allow (read, not probed)."""
        return cls._invalid(
            "origin not allowed (open the Control UI from the gateway host or allow it in "
            "gateway.controlUi.allowedOrigins)",
            {"code": ConnectErrorCode.CONTROL_UI_ORIGIN_NOT_ALLOWED.value, "reason": reason},
        )

    # ------------------------------------------------------------------ device identity
    @classmethod
    def control_ui_device_identity_required(cls) -> ConnectRejection:
        """A Control UI / TUI client without ``device``."""
        return cls._invalid(
            "control ui requires device identity (use HTTPS or localhost secure context)",
            {"code": ConnectErrorCode.CONTROL_UI_DEVICE_IDENTITY_REQUIRED.value},
        )

    @classmethod
    def device_identity_required(cls) -> ConnectRejection:
        """No ``device`` and no path that may skip it: top-level ``NOT_PAIRED``."""
        message = "device identity required"
        details = {"code": ConnectErrorCode.DEVICE_IDENTITY_REQUIRED.value}
        return cls(
            error_shape(ErrorCode.NOT_PAIRED, message, details), CloseCode.POLICY_VIOLATION, message
        )

    @classmethod
    def device_auth(cls, reason: str) -> ConnectRejection:
        """A device-proof failure by its verifier ``reason`` (e.g. ``device-signature``)."""
        code, message = DEVICE_AUTH_FAILURES.get(
            reason, (ConnectErrorCode.DEVICE_AUTH_INVALID, reason)
        )
        return cls._invalid(message, {"code": code.value, "reason": reason}, truncate=False)

    @classmethod
    def device_id_mismatch(cls) -> ConnectRejection:
        """``device.id`` is not the SHA-256 of the (decodable) public key."""
        return cls.device_auth("device-id-mismatch")

    @classmethod
    def device_signature_expired(cls) -> ConnectRejection:
        """``device.signedAt`` more than 120 000 ms away from the gateway clock."""
        return cls.device_auth("device-signature-stale")

    @classmethod
    def device_nonce_required(cls) -> ConnectRejection:
        """``device.nonce`` is blank after trimming."""
        return cls.device_auth("device-nonce-missing")

    @classmethod
    def device_nonce_mismatch(cls) -> ConnectRejection:
        """``device.nonce`` is not the challenge nonce."""
        return cls.device_auth("device-nonce-mismatch")

    @classmethod
    def device_signature_invalid(cls) -> ConnectRejection:
        """The signature verifies neither as payload v3 nor as v2."""
        return cls.device_auth("device-signature")

    # ------------------------------------------------------------------ credentials
    @classmethod
    def auth_failed(
        cls,
        reason: str | None,
        *,
        client_id: str,
        client_mode: str,
        auth: Mapping[str, Any] | None,
        has_device_identity: bool,
        is_local_client: bool = True,
        auth_mode: str = "token",
        retry_after_ms: int | None = None,
    ) -> ConnectRejection:
        """A failed credential check by its auth ``reason`` (``token_mismatch``, ...).

        Args:
            reason: The gateway's internal reason, e.g. ``token_missing``, ``rate_limited``.
            client_id: ``client.id`` (the hint in the message depends on the client).
            client_mode: ``client.mode``.
            auth: The ``auth`` object of the connect params, or None.
            has_device_identity: Whether the connect carried ``device``.
            is_local_client: Whether the socket is a direct local one (loopback, no proxy).
            auth_mode: ``gateway.auth.mode`` (``token``, ``password``, ...).
            retry_after_ms: For ``rate_limited``: the lockout left, sent as ``retryAfterMs``.
        """
        message = auth_failure_message(
            reason,
            client_id=client_id,
            client_mode=client_mode,
            auth_mode=auth_mode,
            auth_provided=auth_provided(auth),
            is_local_client=is_local_client,
        )
        can_retry = can_retry_with_device_token(
            reason, auth, has_device_identity=has_device_identity
        )
        next_step = auth_next_step(reason, can_retry=can_retry)
        code = auth_detail_code(reason)
        details: dict[str, Any] = {"code": code.value}
        if reason is not None:
            details["authReason"] = reason
        details["canRetryWithDeviceToken"] = can_retry
        details["recommendedNextStep"] = next_step.value
        limited = reason == "rate_limited"
        error = error_shape(
            ErrorCode.INVALID_REQUEST,
            message,
            details,
            retryable=True if limited else None,
            retry_after_ms=retry_after_ms if limited else None,
        )
        return cls(error, CloseCode.POLICY_VIOLATION, truncate_close_reason(message))

    # ------------------------------------------------------------------ pairing
    @classmethod
    def pairing_required(
        cls,
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
        """The device (or its requested role/scopes/metadata) awaits approval: ``NOT_PAIRED``.

        Args:
            request_id: The pending pairing request id (dropped when not a valid id).
            device_id: ``device.id``.
            role: The requested role.
            scopes: The requested scopes (sent only when some are non-blank).
            reason: ``not-paired``, ``role-upgrade``, ``scope-upgrade`` or ``metadata-upgrade``.
            approved_roles: Already approved roles (sent when non-empty).
            approved_scopes: Already approved scopes (sent when non-empty).
            wait_then_retry: Approval is in progress (bootstrap node, SSH verify, Control UI):
                adds ``recommendedNextStep:"wait_then_retry"``, ``retryable`` and
                ``pauseReconnect:false``.
        """
        details, message, close = pairing_failure(
            reason=reason,
            request_id=request_id,
            device_id=device_id,
            role=role,
            scopes=scopes,
            approved_roles=approved_roles,
            approved_scopes=approved_scopes,
            wait_then_retry=wait_then_retry,
        )
        error = error_shape(ErrorCode.NOT_PAIRED, message, details)
        return cls(error, CloseCode.POLICY_VIOLATION, close)

    # ------------------------------------------------------------------ helpers
    @classmethod
    def _invalid(
        cls,
        message: str,
        details: dict[str, Any] | None = None,
        *,
        request_id: str | None = None,
        truncate: bool = True,
    ) -> ConnectRejection:
        close = truncate_close_reason(message) if truncate else message
        error = error_shape(ErrorCode.INVALID_REQUEST, message, details)
        return cls(error, CloseCode.POLICY_VIOLATION, close, request_id=request_id)
