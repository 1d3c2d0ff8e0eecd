"""Sans-I/O gateway client session: handshake, correlation, events, failure policy."""

from openclaw_desktop.session.events import (
    CloseRequested,
    EventReceived,
    HandshakeComplete,
    HandshakeFailed,
    LateResponse,
    ProtocolViolation,
    RequestFailed,
    ResponseReceived,
    SequenceGap,
    SessionEvent,
)
from openclaw_desktop.session.failures import ErrorCategory, FailureDecision, decide_after_failure
from openclaw_desktop.session.plan import (
    AuthSelection,
    ConnectPlan,
    Credentials,
    Signer,
    build_connect_params,
    select_auth,
)
from openclaw_desktop.session.protocol import GatewayClientProtocol, SessionState

__all__ = [
    "AuthSelection",
    "CloseRequested",
    "ConnectPlan",
    "Credentials",
    "ErrorCategory",
    "EventReceived",
    "FailureDecision",
    "GatewayClientProtocol",
    "HandshakeComplete",
    "HandshakeFailed",
    "LateResponse",
    "ProtocolViolation",
    "RequestFailed",
    "ResponseReceived",
    "SequenceGap",
    "SessionEvent",
    "SessionState",
    "Signer",
    "build_connect_params",
    "decide_after_failure",
    "select_auth",
]
