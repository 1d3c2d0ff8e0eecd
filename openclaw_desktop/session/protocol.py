"""The gateway client as a sans-I/O state machine.

Text goes in through :meth:`GatewayClientProtocol.receive_data`, time through
:meth:`~GatewayClientProtocol.advance` and the socket's end through
:meth:`~GatewayClientProtocol.connection_lost`. Frames to write come out of
:meth:`~GatewayClientProtocol.data_to_send` and what happened out of
:meth:`~GatewayClientProtocol.events_received`. No asyncio, no sockets, no clock of its own:
the adapter passes monotonic seconds in, so tests drive time by hand.

Bad input (malformed JSON, unknown frame types, non-UTF-8, a ``res`` for an unknown id) is
dropped and reported once per kind as :class:`ProtocolViolation`; it never raises. A frame over
the inbound size limit is reported the same way and closes the connection with 1009.

Answers for requests we gave up on (timed out or abandoned, so a ``cancel`` went out) are
expected traffic, not violations: the core remembers the last :data:`CANCELLED_IDS_KEPT` such
ids and reports their late answers as :class:`LateResponse`. The real gateway 2026.9.6 has no
``cancel`` frame type: it answers our ``cancel`` with ``ok:false`` ``INVALID_REQUEST``
("invalid request frame") under the cancelled request's id and still answers the original
request later, so a timed-out request can draw two such answers.
"""

from __future__ import annotations

import itertools
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from pydantic import ValidationError

from openclaw_desktop.errors import (
    ConnectionClosed,
    InvalidState,
    PayloadTooLarge,
    ProtocolError,
    RequestOutcomeUnknown,
    RequestTimeout,
    gateway_error_from_shape,
)
from openclaw_desktop.protocol import (
    DEFAULT_TICK_INTERVAL_MS,
    MAX_PREAUTH_PAYLOAD_BYTES,
    CloseCode,
    ConnectChallenge,
    EventName,
    FrameDecodeError,
    HelloOk,
    Method,
    decode_frame,
    encode_frame,
)
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
from openclaw_desktop.session.plan import ConnectPlan, build_connect_params

__all__ = [
    "AUTHENTICATING",
    "AWAITING_CHALLENGE",
    "CANCELLED_IDS_KEPT",
    "CLOSED",
    "CLOSING",
    "DEFAULT_MAX_INBOUND_BYTES",
    "MESSAGE_TOO_BIG_CLOSE_CODE",
    "READY",
    "GatewayClientProtocol",
    "SessionState",
]

#: Close code the client uses when the gateway went silent (tick watchdog).
TICK_TIMEOUT_CLOSE_CODE = 4000

#: Close code for an inbound frame over the size limit (RFC 6455 "message too big").
MESSAGE_TOO_BIG_CLOSE_CODE = CloseCode.MESSAGE_TOO_BIG

#: Default inbound frame limit (bytes); the adapter passes its own.
DEFAULT_MAX_INBOUND_BYTES = 64 * 1024 * 1024

#: How many given-up request ids are remembered, so their late answers are dropped quietly.
CANCELLED_IDS_KEPT = 256


class SessionState(IntEnum):
    """Where the session is."""

    AWAITING_CHALLENGE = 0
    AUTHENTICATING = 1
    READY = 2
    CLOSING = 3
    CLOSED = 4


AWAITING_CHALLENGE = SessionState.AWAITING_CHALLENGE
AUTHENTICATING = SessionState.AUTHENTICATING
READY = SessionState.READY
CLOSING = SessionState.CLOSING
CLOSED = SessionState.CLOSED


def _request_ids() -> Callable[[], str]:
    prefix = uuid.uuid4().hex[:8]
    counter = itertools.count(1)

    def next_id() -> str:
        return f"{prefix}-{next(counter)}"

    return next_id


@dataclass(slots=True)
class _Pending:
    method: str
    deadline: float | None
    timeout_s: float | None


class GatewayClientProtocol:
    """One connection attempt of a gateway client (operator or node).

    Args:
        plan: what to declare in ``connect``.
        now: monotonic seconds at which the socket opened.
        challenge_timeout_s: how long to wait for ``connect.challenge``.
        connect_timeout_s: how long to wait for the ``connect`` response.
        default_timeout_s: per-request timeout when a request names none.
        max_inbound_bytes: inbound frames bigger than this are dropped and the connection
            is closed with 1009.
        id_factory: request id generator (tests pass a deterministic one).
    """

    def __init__(
        self,
        plan: ConnectPlan,
        *,
        now: float,
        challenge_timeout_s: float = 15.0,
        connect_timeout_s: float = 15.0,
        default_timeout_s: float = 30.0,
        max_inbound_bytes: int = DEFAULT_MAX_INBOUND_BYTES,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.plan = plan
        self.state = AWAITING_CHALLENGE
        self.hello: HelloOk | None = None
        self.challenge: ConnectChallenge | None = None
        self.max_payload = MAX_PREAUTH_PAYLOAD_BYTES
        self.max_inbound_bytes = max_inbound_bytes
        self.tick_interval_s = DEFAULT_TICK_INTERVAL_MS / 1000
        self.violations: dict[str, int] = {}
        self._opened_at = now
        self._now = now
        self._last_inbound = now
        self._challenge_timeout_s = challenge_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._default_timeout_s = default_timeout_s
        self._connect_id: str | None = None
        self._connect_deadline: float | None = None
        self._pending: dict[str, _Pending] = {}
        self._cancelled: OrderedDict[str, str] = OrderedDict()
        self._last_seq: int | None = None
        self._out: list[bytes] = []
        self._events: list[SessionEvent] = []
        self._new_id: Callable[[], str] = id_factory or _request_ids()

    # ------------------------------------------------------------------ outputs
    def data_to_send(self) -> list[bytes]:
        """Frames to write, in order. Empties the buffer."""
        out, self._out = self._out, []
        return out

    def events_received(self) -> list[SessionEvent]:
        """What happened since the last call. Empties the buffer."""
        events, self._events = self._events, []
        return events

    @property
    def pending_count(self) -> int:
        """Requests sent and not yet answered."""
        return len(self._pending)

    def next_deadline(self) -> float | None:
        """The monotonic time at which :meth:`advance` must next be called, if any."""
        candidates: list[float] = []
        if self.state is AWAITING_CHALLENGE:
            candidates.append(self._opened_at + self._challenge_timeout_s)
        elif self.state is AUTHENTICATING and self._connect_deadline is not None:
            candidates.append(self._connect_deadline)
        elif self.state is READY:
            candidates.append(self._last_inbound + 2 * self.tick_interval_s)
        candidates.extend(p.deadline for p in self._pending.values() if p.deadline is not None)
        return min(candidates) if candidates else None

    # ------------------------------------------------------------------ inputs
    def receive_data(self, data: str | bytes, now: float) -> None:
        """Feed one WebSocket message."""
        if self.state >= CLOSING:
            return
        self._now = now
        self._last_inbound = now
        size = _frame_size(data, self.max_inbound_bytes)
        if size > self.max_inbound_bytes:
            self._on_oversized(size)
            return
        try:
            frame = decode_frame(data)
        except FrameDecodeError as exc:
            self._violation(exc.kind, exc.detail)
            return
        kind = frame["type"]
        if kind == "event":
            self._on_event(frame)
        elif kind == "res":
            self._on_response(frame)
        else:
            self._violation("unexpected-frame", f"client received a {kind!r} frame")

    def advance(self, now: float) -> None:
        """Let time pass: fire handshake, request and tick-watchdog deadlines."""
        if self.state >= CLOSING:
            return
        self._now = now
        if self.state is AWAITING_CHALLENGE and now >= self._opened_at + self._challenge_timeout_s:
            self._fail_handshake(
                ProtocolError(f"no connect.challenge within {self._challenge_timeout_s:g}s"),
                close_code=1000,
            )
            return
        if (
            self.state is AUTHENTICATING
            and self._connect_deadline is not None
            and now >= self._connect_deadline
        ):
            self._fail_handshake(
                RequestTimeout(Method.CONNECT.value, self._connect_timeout_s), close_code=1000
            )
            return
        for request_id, pending in list(self._pending.items()):
            if pending.deadline is not None and now >= pending.deadline:
                del self._pending[request_id]
                self._cancel(request_id, pending.method)
                timeout = pending.timeout_s or 0.0
                self._events.append(
                    RequestFailed(
                        request_id, pending.method, RequestTimeout(pending.method, timeout)
                    )
                )
        if self.state is READY and now >= self._last_inbound + 2 * self.tick_interval_s:
            self._request_close(TICK_TIMEOUT_CLOSE_CODE, "tick timeout")

    def connection_lost(self, code: int | None, reason: str) -> None:
        """The socket is gone. Fails the handshake or every pending request."""
        previous = self.state
        self.state = CLOSED
        closed = ConnectionClosed(code, reason)
        if previous in (AWAITING_CHALLENGE, AUTHENTICATING):
            self._events.append(HandshakeFailed(closed))
        for request_id, pending in self._pending.items():
            self._events.append(
                RequestFailed(
                    request_id, pending.method, RequestOutcomeUnknown(pending.method, str(closed))
                )
            )
        self._pending.clear()

    # ------------------------------------------------------------------ commands
    def send_request(
        self,
        method: str,
        params: Any = None,
        *,
        timeout_s: float | None = None,
        now: float | None = None,
    ) -> str:
        """Queue a request; returns its id.

        Args:
            timeout_s: seconds until a ``cancel`` is sent and the request fails; ``None`` uses
                the default, ``0`` or less waits for ever.
            now: monotonic seconds of the send. The deadline counts from here; without it,
                it counts from the last time passed to :meth:`receive_data` or
                :meth:`advance`, which may be up to a tick interval in the past.

        Raises:
            InvalidState: the session is not ready.
            PayloadTooLarge: the frame exceeds ``policy.maxPayload``.
        """
        if self.state is not READY:
            raise InvalidState(f"cannot send {str(method)!r}: session is {self.state.name}")
        if now is not None:
            self._now = now
        request_id = self._new_id()
        frame: dict[str, Any] = {"type": "req", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        data = encode_frame(frame)
        if len(data) > self.max_payload:
            raise PayloadTooLarge(len(data), self.max_payload)
        timeout = self._default_timeout_s if timeout_s is None else timeout_s
        deadline = self._now + timeout if timeout > 0 else None
        self._pending[request_id] = _Pending(method, deadline, timeout if timeout > 0 else None)
        self._out.append(data)
        return request_id

    def abandon_request(self, request_id: str) -> None:
        """Forget a pending request and tell the gateway with a ``cancel`` frame."""
        pending = self._pending.pop(request_id, None)
        if pending is not None and self.state is READY:
            self._cancel(request_id, pending.method)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Ask the adapter to close the socket."""
        if self.state < CLOSING:
            self._request_close(code, reason)

    # ------------------------------------------------------------------ internals
    def _on_event(self, frame: dict[str, Any]) -> None:
        name: str = frame["event"]
        if self.state is AWAITING_CHALLENGE:
            if name == EventName.CONNECT_CHALLENGE:
                self._on_challenge(frame.get("payload"))
            else:
                self._violation("event-before-challenge", f"{name!r} before connect.challenge")
            return
        if name == EventName.CONNECT_CHALLENGE:
            self._violation("duplicate-challenge", "connect.challenge after the handshake began")
            return
        seq = frame.get("seq")
        if seq is not None and self.state is READY:
            if self._last_seq is not None and seq > self._last_seq + 1:
                self._events.append(SequenceGap(self._last_seq + 1, seq))
            if self._last_seq is None or seq > self._last_seq:
                self._last_seq = seq
        self._events.append(
            EventReceived(name, frame.get("payload"), seq, frame.get("stateVersion"))
        )

    def _on_challenge(self, payload: Any) -> None:
        try:
            challenge = ConnectChallenge.model_validate(payload)
        except ValidationError as exc:
            problem = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'payload'}: {e['msg']}"
                for e in exc.errors()
            )
            self._fail_handshake(
                ProtocolError(f"invalid connect.challenge ({problem})"), close_code=1002
            )
            return
        self.challenge = challenge
        params = build_connect_params(self.plan, challenge)
        self._connect_id = self._new_id()
        data = encode_frame(
            {
                "type": "req",
                "id": self._connect_id,
                "method": Method.CONNECT.value,
                "params": params,
            }
        )
        if len(data) > self.max_payload:
            # The gateway caps frames before hello-ok (MAX_PREAUTH_PAYLOAD_BYTES) and would
            # drop the socket; the plan is too big (commands, pathEnv), so fail here.
            self._fail_handshake(PayloadTooLarge(len(data), self.max_payload), close_code=1000)
            return
        self._out.append(data)
        self.state = AUTHENTICATING
        self._connect_deadline = self._now + self._connect_timeout_s

    def _on_response(self, frame: dict[str, Any]) -> None:
        request_id: str = frame["id"]
        if self.state is AUTHENTICATING and request_id == self._connect_id:
            self._on_connect_response(frame)
            return
        pending = self._pending.pop(request_id, None)
        if pending is None:
            method = self._cancelled.get(request_id)
            if method is not None:
                error = frame.get("error")
                code = error.get("code") if isinstance(error, dict) else None
                self._events.append(
                    LateResponse(
                        request_id, method, frame["ok"], code if isinstance(code, str) else None
                    )
                )
                return
            self._violation("unknown-response", f"response for unknown request id {request_id!r}")
            return
        ok: bool = frame["ok"]
        error = None
        if not ok:
            error = gateway_error_from_shape(frame.get("error") or {}, method=pending.method)
        self._events.append(
            ResponseReceived(request_id, pending.method, ok, frame.get("payload"), error)
        )

    def _on_connect_response(self, frame: dict[str, Any]) -> None:
        if not frame["ok"]:
            error = gateway_error_from_shape(frame.get("error") or {}, method=Method.CONNECT.value)
            self.state = CLOSING
            self._events.append(HandshakeFailed(error))
            return
        try:
            hello = HelloOk.model_validate(frame.get("payload"))
        except ValidationError as exc:
            self._fail_handshake(
                ProtocolError(f"invalid hello-ok: {exc.error_count()} errors"), close_code=1002
            )
            return
        self.hello = hello
        self.state = READY
        self.max_payload = hello.policy.max_payload
        self.tick_interval_s = hello.policy.tick_interval_ms / 1000
        self._connect_deadline = None
        self._events.append(HandshakeComplete(hello))

    def _fail_handshake(
        self, error: ProtocolError | RequestTimeout | PayloadTooLarge, *, close_code: int
    ) -> None:
        self._events.append(HandshakeFailed(error))
        self._request_close(close_code, str(error)[:120])

    def _cancel(self, request_id: str, method: str) -> None:
        """Send ``cancel`` and remember the id, so late answers to it are expected."""
        self._out.append(encode_frame({"type": "cancel", "id": request_id}))
        self._cancelled[request_id] = method
        while len(self._cancelled) > CANCELLED_IDS_KEPT:
            self._cancelled.popitem(last=False)

    def _on_oversized(self, size: int) -> None:
        detail = f"frame of {size} bytes exceeds the inbound limit of {self.max_inbound_bytes}"
        self._violation("oversized-frame", detail)
        if self.state in (AWAITING_CHALLENGE, AUTHENTICATING):
            self._fail_handshake(ProtocolError(detail), close_code=MESSAGE_TOO_BIG_CLOSE_CODE)
        else:
            self._request_close(MESSAGE_TOO_BIG_CLOSE_CODE, "frame too large")

    def _request_close(self, code: int, reason: str) -> None:
        self.state = CLOSING
        self._events.append(CloseRequested(code, reason))

    def _violation(self, kind: str, detail: str) -> None:
        count = self.violations.get(kind, 0) + 1
        self.violations[kind] = count
        if count == 1:
            self._events.append(ProtocolViolation(kind, detail))


def _frame_size(data: str | bytes, limit: int) -> int:
    """The frame's size in bytes (text is measured as UTF-8 only when it could matter)."""
    if isinstance(data, bytes | bytearray | memoryview):
        return len(data)
    if len(data) * 4 <= limit:  # at most 4 UTF-8 bytes per code point: cannot be over
        return len(data)
    return len(data.encode("utf-8", "surrogatepass"))
