"""Exceptions raised by the OpenClaw Desktop core.

The tree::

    OpenClawError
     ├── ProtocolError              a frame broke the wire protocol (raised by ``session``)
     ├── InvalidState               API misuse (also an AssertionError)
     ├── ConnectionClosed           the socket closed; ``code`` and ``reason`` say how
     ├── RequestTimeout             no ``res`` before the deadline (a ``cancel`` was sent)
     ├── RequestOutcomeUnknown      sent, but the connection dropped before the reply
     ├── PayloadTooLarge            a frame would exceed ``policy.maxPayload``
     ├── GatewayError               the gateway answered ``ok: false`` (ErrorShape fields)
     │    ├── AuthError             handshake refused for credentials / device proof
     │    ├── PairingRequired       device or surface awaits approval; carries ``request_id``
     │    ├── PairingRejected
     │    ├── ProtocolMismatch
     │    └── MissingScope          FORBIDDEN / MISSING_SCOPE
     ├── ReconnectPaused            the reconnect loop waits for the user (carries the cause)
     ├── TrustError                 TLS trust refused: unpinned, declined or pin mismatch
     ├── IdentityError              the device identity file is unreadable (fail closed)
     ├── SecretStoreError
     └── ConfigError
          └── LinkError            an ``openclaw://`` link that cannot be used (never echoes it)

Every exception keeps structured attributes and computes ``str()`` from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "AuthError",
    "ConfigError",
    "ConnectionClosed",
    "GatewayError",
    "IdentityError",
    "InvalidState",
    "LinkError",
    "MissingScope",
    "OpenClawError",
    "PairingRejected",
    "PairingRequired",
    "PayloadTooLarge",
    "ProtocolError",
    "ProtocolMismatch",
    "ReconnectPaused",
    "RequestOutcomeUnknown",
    "RequestTimeout",
    "SecretStoreError",
    "TrustError",
    "gateway_error_from_shape",
]


class OpenClawError(Exception):
    """Root of every error raised by the core."""


class ProtocolError(OpenClawError):
    """The peer sent something the protocol does not allow."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class InvalidState(OpenClawError, AssertionError):
    """The API was used in a state that does not allow it."""


class ConnectionClosed(OpenClawError):
    """The WebSocket closed."""

    def __init__(self, code: int | None, reason: str = "") -> None:
        super().__init__(code, reason)
        self.code = code
        self.reason = reason

    def __str__(self) -> str:
        if self.code is None:
            return f"connection lost: {self.reason}" if self.reason else "connection lost"
        return f"connection closed ({self.code}{': ' + self.reason if self.reason else ''})"


class RequestTimeout(OpenClawError):
    """No response arrived before the request's deadline; a ``cancel`` frame was sent."""

    def __init__(self, method: str, timeout_s: float) -> None:
        super().__init__(method, timeout_s)
        self.method = method
        self.timeout_s = timeout_s

    def __str__(self) -> str:
        return f"{self.method}: no response within {self.timeout_s:g}s"


class RequestOutcomeUnknown(OpenClawError):
    """The request was sent but the connection dropped before its response."""

    def __init__(self, method: str, cause: str) -> None:
        super().__init__(method, cause)
        self.method = method
        self.cause = cause

    def __str__(self) -> str:
        return f"{self.method}: outcome unknown ({self.cause})"


class PayloadTooLarge(OpenClawError):
    """A frame would be larger than the gateway's ``policy.maxPayload``."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(size, limit)
        self.size = size
        self.limit = limit

    def __str__(self) -> str:
        return f"frame of {self.size} bytes exceeds the gateway limit of {self.limit} bytes"


class GatewayError(OpenClawError):
    """The gateway answered a request with ``ok: false``."""

    def __init__(
        self,
        code: str,
        message: str,
        details: Any = None,
        *,
        retryable: bool | None = None,
        retry_after_ms: int | None = None,
        method: str | None = None,
    ) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.details = details
        self.retryable = retryable
        self.retry_after_ms = retry_after_ms
        self.method = method

    @property
    def detail_code(self) -> str | None:
        """``details.code`` when the gateway sent one."""
        if isinstance(self.details, Mapping):
            value = self.details.get("code")
            return value if isinstance(value, str) else None
        return None

    def detail(self, key: str) -> Any:
        """One field of ``details``, or None."""
        return self.details.get(key) if isinstance(self.details, Mapping) else None

    def __str__(self) -> str:
        extra = f" [{self.detail_code}]" if self.detail_code else ""
        where = f"{self.method}: " if self.method else ""
        return f"{where}{self.code}{extra}: {self.message}"


class AuthError(GatewayError):
    """The handshake was refused because of credentials or device proof."""


class PairingRequired(GatewayError):
    """The device (or its node surface) must be approved by an operator first."""

    @property
    def request_id(self) -> str | None:
        value = self.detail("requestId")
        return value if isinstance(value, str) else None

    @property
    def approve_command(self) -> str | None:
        """The exact CLI command an operator runs to approve this device."""
        rid = self.request_id
        return f"openclaw devices approve {rid}" if rid else None


class PairingRejected(GatewayError):
    """An operator rejected the pairing request."""


class ProtocolMismatch(GatewayError):
    """The gateway does not speak a protocol version in our range."""


class MissingScope(GatewayError):
    """The connection lacks an operator scope the method needs."""

    @property
    def missing_scope(self) -> str | None:
        """The scope to ask for (``details.missingScope``)."""
        value = self.detail("missingScope")
        return value if isinstance(value, str) else None

    @property
    def required_scopes(self) -> list[str]:
        """``details.requiredScopes``."""
        value = self.detail("requiredScopes")
        return [str(v) for v in value] if isinstance(value, list) else []


_AUTH_PREFIXES = ("AUTH_", "DEVICE_AUTH_", "DEVICE_IDENTITY_", "CONTROL_UI_DEVICE")


def gateway_error_from_shape(
    shape: Mapping[str, Any], *, method: str | None = None
) -> GatewayError:
    """Build the most specific :class:`GatewayError` for a wire ErrorShape."""
    code = str(shape.get("code") or "UNKNOWN")
    message = str(shape.get("message") or "")
    details = shape.get("details")
    retryable = shape.get("retryable")
    retry_after = shape.get("retryAfterMs")
    detail_code = details.get("code") if isinstance(details, Mapping) else None
    cls: type[GatewayError] = GatewayError
    if detail_code == "PAIRING_REQUIRED" or (code == "NOT_PAIRED" and detail_code is None):
        cls = PairingRequired
    elif detail_code == "PAIRING_REJECTED":
        cls = PairingRejected
    elif detail_code == "PROTOCOL_MISMATCH":
        cls = ProtocolMismatch
    elif detail_code == "MISSING_SCOPE":
        cls = MissingScope
    elif isinstance(detail_code, str) and detail_code.startswith(_AUTH_PREFIXES):
        cls = AuthError
    return cls(
        code,
        message,
        details,
        retryable=retryable if isinstance(retryable, bool) else None,
        retry_after_ms=(
            retry_after
            if isinstance(retry_after, int)
            and not isinstance(retry_after, bool)
            and retry_after >= 0
            else None
        ),
        method=method,
    )


class ReconnectPaused(OpenClawError):
    """Reconnecting stopped until the user acts (re-pair, new token, approve...)."""

    def __init__(self, cause: OpenClawError) -> None:
        super().__init__(cause)
        self.cause = cause

    def __str__(self) -> str:
        return f"reconnect paused until you act: {self.cause}"


class TrustError(OpenClawError):
    """TLS trust was refused.

    ``kind`` is ``"mismatch"`` (a pin is stored and the gateway shows another certificate),
    ``"declined"`` (the trust callback said no), ``"untrusted"`` (no pin, no callback and the
    certificate is not trusted by the system) or ``"unavailable"`` (no TLS certificate could be
    read from the endpoint).
    """

    def __init__(
        self,
        kind: str,
        endpoint: str,
        *,
        expected: str | None = None,
        actual: str | None = None,
        detail: str = "",
    ) -> None:
        super().__init__(kind, endpoint)
        self.kind = kind
        self.endpoint = endpoint
        self.expected = expected
        self.actual = actual
        self.detail = detail

    def __str__(self) -> str:
        if self.kind == "mismatch":
            return (
                f"TLS fingerprint mismatch for {self.endpoint}: expected {self.expected}, "
                f"gateway presented {self.actual}. Refusing to connect; if the gateway's "
                "certificate really changed, replace the pin (--tls-fingerprint)."
            )
        if self.kind == "declined":
            return f"TLS certificate of {self.endpoint} ({self.actual}) was not trusted"
        if self.kind == "untrusted":
            return (
                f"TLS certificate of {self.endpoint} is not trusted by the system and no pin "
                f"is stored; verify its fingerprint {self.actual} out of band and pass "
                "--tls-fingerprint"
            )
        return f"TLS unavailable at {self.endpoint}: {self.detail}"


class IdentityError(OpenClawError):
    """The device identity exists but cannot be used. Never regenerated silently."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(path, problem)
        self.path = path
        self.problem = problem

    def __str__(self) -> str:
        return (
            f"device identity at {self.path} is unusable ({self.problem}). It is not "
            "replaced automatically, since a new identity must be paired again. To start "
            "over: `openclaw-desktop identity reset`, then approve the new device on the gateway."
        )


class SecretStoreError(OpenClawError):
    """Reading or writing a secret failed."""


class ConfigError(OpenClawError):
    """A configuration value is invalid."""


class LinkError(ConfigError):
    """An ``openclaw://`` link (e.g. ``openclaw://pair?code=...``) that cannot be used.

    ``problem`` says why; it never contains the link's setup code or token.
    """

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    def __str__(self) -> str:
        return f"unusable openclaw:// link: {self.problem}"
