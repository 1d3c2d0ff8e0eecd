"""The root of the bundled gateway's own exceptions, and the errors raised inside method
handlers (carrying the ErrorShape to answer with).

Every exception the gateway raises on purpose derives from :class:`BundledGatewayError`
(a test checks each class in the package): ``except BundledGatewayError`` catches the
gateway's refusals and failures and nothing else. Those that used to be a ``ValueError``
or ``RuntimeError`` still are, for callers that caught them as such.
"""

from __future__ import annotations

from typing import Any

from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = [
    "BundledGatewayError",
    "MethodError",
    "invalid_params",
    "invalid_request",
    "pairing_changed",
]


class BundledGatewayError(Exception):
    """Root of every exception the bundled gateway raises on purpose."""


class MethodError(BundledGatewayError):
    """A handler refuses the request; ``shape`` is the wire ErrorShape."""

    def __init__(self, shape: dict[str, Any]) -> None:
        super().__init__(shape.get("message"))
        self.shape = shape


def invalid_request(message: str, details: Any = None) -> MethodError:
    """``INVALID_REQUEST`` with a message."""
    return MethodError(error_shape(ErrorCode.INVALID_REQUEST, message, details))


def invalid_params(method: str, problem: str) -> MethodError:
    """``INVALID_REQUEST invalid <method> params: <problem>`` (the reference's wording)."""
    return invalid_request(f"invalid {method} params: {problem}")


def pairing_changed(work: str = "invocation") -> MethodError:
    """``UNAVAILABLE`` ``node pairing changed while <work> was active`` with details
    ``{code: PAIRING_CHANGED}``, retryable: the node's pairing (its surface) changed under
    the request, as the reference words it."""
    return MethodError(
        error_shape(
            ErrorCode.UNAVAILABLE,
            f"node pairing changed while {work} was active",
            {"code": "PAIRING_CHANGED"},
            retryable=True,
        )
    )
