"""The status the window and the tray show: a pure function of the two sessions' transport
states (:class:`~openclaw_desktop.transport.ConnectionStatus`) and the clock, nothing else.

``connecting`` / ``connected to host:port`` / ``reconnecting in N s`` / ``waiting for
approval`` / ``paused: needs action — why`` / ``stopped``. No Qt here: the app renders
:class:`StatusLine` texts in the status bar and the tray, and refreshes them each second
while a countdown runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from openclaw_desktop.errors import (
    ConnectionClosed,
    GatewayError,
    OpenClawError,
    PairingRejected,
    ProtocolMismatch,
    ReconnectPaused,
    TrustError,
)
from openclaw_desktop.protocol import GOING_AWAY_CLOSE_CODES, ConnectErrorCode
from openclaw_desktop.transport import ConnectionState, ConnectionStatus

__all__ = ["StatusLine", "plain_reason", "session_line", "status_lines"]

_AUTH_WORDS = {
    ConnectErrorCode.AUTH_TOKEN_MISMATCH: "the gateway refused this token",
    ConnectErrorCode.AUTH_DEVICE_TOKEN_MISMATCH: "the gateway no longer accepts this device",
    ConnectErrorCode.AUTH_TOKEN_MISSING: "the gateway needs a token",
    ConnectErrorCode.AUTH_TOKEN_NOT_CONFIGURED: "the gateway has no token set up",
    ConnectErrorCode.AUTH_PASSWORD_MISMATCH: "the gateway refused this password",
    ConnectErrorCode.AUTH_PASSWORD_MISSING: "the gateway needs a password",
    ConnectErrorCode.AUTH_PASSWORD_NOT_CONFIGURED: "the gateway has no password set up",
    ConnectErrorCode.AUTH_BOOTSTRAP_TOKEN_INVALID: "the setup code was already used or expired",
    ConnectErrorCode.AUTH_SCOPE_MISMATCH: "the gateway does not grant the access this app asks for",
    ConnectErrorCode.AUTH_RATE_LIMITED: "too many attempts: the gateway asks to wait",
    ConnectErrorCode.AUTH_UNAUTHORIZED: "the gateway refused this device",
    ConnectErrorCode.PAIRING_REJECTED: "pairing this device was rejected on the gateway",
    ConnectErrorCode.PAIRING_EXPIRED: "the pairing request expired",
    ConnectErrorCode.PROTOCOL_MISMATCH: "this gateway speaks another protocol version",
    ConnectErrorCode.DEVICE_IDENTITY_REQUIRED: "the gateway needs a paired device identity",
}


@dataclass(frozen=True, slots=True)
class StatusLine:
    """What one session shows.

    Attributes:
        role: ``chat`` or ``node`` (the label shown before the text).
        state: the transport state the text was derived from.
        text: the words after the label.
        needs_action: the session waits for the user (paused).
        waiting: a wait is shown: *Reconnect now* applies.
        reason: the plain-words reason, when paused or reconnecting.
    """

    role: str
    state: ConnectionState
    text: str
    needs_action: bool = False
    waiting: bool = False
    reason: str | None = None

    @property
    def label(self) -> str:
        """``chat: connected to 127.0.0.1:18789``: the status bar's and the tray's text."""
        return f"{self.role}: {self.text}"


def plain_reason(error: OpenClawError | BaseException | None) -> str:
    """A failure in words a person can act on (never a raw frame)."""
    if isinstance(error, ReconnectPaused):
        error = error.cause
    if isinstance(error, TrustError):
        if error.kind == "mismatch":
            return "the gateway's certificate changed"
        if error.kind == "declined":
            return "you did not trust the gateway's certificate"
        if error.kind == "unavailable":
            return "the gateway's TLS could not be read"
        return "the gateway's certificate is not trusted"
    if isinstance(error, GatewayError):
        detail = error.detail_code
        if detail in _AUTH_WORDS:
            return _AUTH_WORDS[ConnectErrorCode(detail)]
        if isinstance(error, PairingRejected):
            return "pairing this device was rejected on the gateway"
        if isinstance(error, ProtocolMismatch):
            return "this gateway speaks another protocol version"
        return "the gateway refused the connection"
    if isinstance(error, ConnectionClosed):
        if error.code is None:
            return "the gateway cannot be reached"
        if error.code in GOING_AWAY_CLOSE_CODES:
            return "the gateway is restarting"
        return "the connection was lost"
    if isinstance(error, OSError | TimeoutError):
        return "the gateway cannot be reached"
    return "the connection failed"


def session_line(
    role: str, status: ConnectionStatus | None, now: float, where: str = ""
) -> StatusLine:
    """The status of one session.

    Args:
        role: the label (``chat`` / ``node``).
        status: the session's transport status (None: the session does not exist).
        now: :func:`time.monotonic` now (for the countdown to ``status.retry_at``).
        where: the connection's endpoint (``host:port``).
    """
    if status is None:
        return StatusLine(role, ConnectionState.CLOSED, "off")
    state = status.state
    if state in (ConnectionState.IDLE, ConnectionState.CONNECTING):
        return StatusLine(role, state, "connecting…")
    if state is ConnectionState.CONNECTED:
        return StatusLine(role, state, f"connected to {where}" if where else "connected")
    if state is ConnectionState.RECONNECTING:
        reason = plain_reason(status.error)
        return StatusLine(
            role,
            state,
            f"{_countdown('reconnecting', status, now)} ({reason})",
            False,
            True,
            reason,
        )
    if state is ConnectionState.AWAITING_APPROVAL:
        pairing = status.pairing
        rid = f" (request {pairing.request_id})" if pairing and pairing.request_id else ""
        return StatusLine(role, state, f"waiting for approval{rid}", False, True)
    if state is ConnectionState.PAUSED:
        reason = plain_reason(status.error)
        return StatusLine(role, state, f"paused: needs action — {reason}", True, False, reason)
    return StatusLine(role, state, "stopped")


def status_lines(
    operator: ConnectionStatus | None,
    node: ConnectionStatus | None,
    now: float,
    where: str = "",
) -> tuple[StatusLine, StatusLine]:
    """Both sessions' lines (``chat`` first, then ``node``), to the gateway at ``where``.

    When both wait for the same reason, the reason is said once, on the chat's line: the
    status bar then leaves room for the messages beside it."""
    chat = session_line("chat", operator, now, where)
    node_line = session_line("node", node, now, where)
    if (
        node_line.waiting
        and chat.waiting
        and node_line.reason is not None
        and node_line.reason == chat.reason
    ):
        text = node_line.text.removesuffix(f" ({node_line.reason})")
        node_line = replace(node_line, text=text)
    return chat, node_line


def _countdown(word: str, status: ConnectionStatus, now: float) -> str:
    if status.retry_at is None:
        return f"{word}…"
    left = max(0, math.ceil(status.retry_at - now))
    return f"{word} in {left} s" if left else f"{word} now…"
