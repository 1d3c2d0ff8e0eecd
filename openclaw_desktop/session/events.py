"""What the sans-I/O session core reports to its adapter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from openclaw_desktop.errors import GatewayError, OpenClawError
from openclaw_desktop.protocol import HelloOk

__all__ = [
    "CloseRequested",
    "EventReceived",
    "HandshakeComplete",
    "HandshakeFailed",
    "LateResponse",
    "ProtocolViolation",
    "RequestFailed",
    "ResponseReceived",
    "SequenceGap",
    "SessionEvent",
]


@dataclass(frozen=True, slots=True)
class HandshakeComplete:
    """``hello-ok`` arrived; the session is ready."""

    hello: HelloOk


@dataclass(frozen=True, slots=True)
class HandshakeFailed:
    """The handshake failed: gateway rejection, timeout, bad challenge or closed socket."""

    error: OpenClawError


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """The response to one of our requests."""

    request_id: str
    method: str
    ok: bool
    payload: Any
    error: GatewayError | None


@dataclass(frozen=True, slots=True)
class RequestFailed:
    """A request ended without a response (timeout, or the connection dropped)."""

    request_id: str
    method: str
    error: OpenClawError


@dataclass(frozen=True, slots=True)
class LateResponse:
    """A response for a request we already gave up on (timed out or abandoned); dropped.

    Expected traffic, not a fault: the gateway may still answer the original request, and
    gateways without the ``cancel`` frame type (the real 2026.9.6 one) answer the ``cancel``
    itself with ``INVALID_REQUEST`` under the same id.
    """

    request_id: str
    method: str
    ok: bool
    error_code: str | None


@dataclass(frozen=True, slots=True)
class EventReceived:
    """A gateway event (after the handshake)."""

    event: str
    payload: Any
    seq: int | None
    state_version: Any


@dataclass(frozen=True, slots=True)
class SequenceGap:
    """Event ``seq`` jumped: events were missed, so state should be re-read."""

    expected: int
    received: int


@dataclass(frozen=True, slots=True)
class CloseRequested:
    """The core wants the socket closed with this code (tick timeout, handshake failure)."""

    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """The peer sent something invalid; it was dropped. Reported once per kind."""

    kind: str
    detail: str


SessionEvent = (
    HandshakeComplete
    | HandshakeFailed
    | ResponseReceived
    | RequestFailed
    | EventReceived
    | SequenceGap
    | CloseRequested
    | ProtocolViolation
    | LateResponse
)
