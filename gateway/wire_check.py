"""Checking what the gateway sends against the protocol's models, when asked.

With ``OPENCLAW_GATEWAY_CHECK_EVENTS=1`` every event sent (:func:`check_event`: the hub's
broadcasts once each, a peer's own events, the connect challenge) and every frame's envelope
(:func:`check_frame`: the peer builds frames as plain dicts on its hot path, and this holds
them to :class:`~openclaw_desktop.protocol.frames.EventFrame` and
:class:`~openclaw_desktop.protocol.frames.ResponseFrame`) and with
``OPENCLAW_GATEWAY_CHECK_RESULTS=1`` every answer (:func:`check_result`) is checked against
:mod:`openclaw_desktop.protocol.events` / :mod:`openclaw_desktop.protocol.results`. A misfit
is logged at ERROR by ``gateway.wire`` with event, method and field names only (payloads may
hold tokens and message text), marked :data:`WIRE_MISFIT`, and still sent: the test suite
sets both variables and fails a test whose gateway sent one.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol import ErrorCode
from openclaw_desktop.protocol.events import payload_errors, payload_model
from openclaw_desktop.protocol.frames import EventFrame, ResponseFrame
from openclaw_desktop.protocol.results import result_model

__all__ = [
    "CHECK_EVENTS_ENV",
    "CHECK_RESULTS_ENV",
    "WIRE_MISFIT",
    "check_event",
    "check_frame",
    "check_result",
    "checking_events",
    "checking_results",
]

log = logging.getLogger("gateway.wire")

#: The environment variable that turns on :func:`check_event` for every event sent.
CHECK_EVENTS_ENV = "OPENCLAW_GATEWAY_CHECK_EVENTS"
#: The environment variable that turns on :func:`check_result` for every answer.
CHECK_RESULTS_ENV = "OPENCLAW_GATEWAY_CHECK_RESULTS"
#: The ``extra`` of a misfit's log record (``record.wire_misfit``), by which the test suite
#: tells a payload outside its model from any other error.
WIRE_MISFIT = {"wire_misfit": True}


def checking_events() -> bool:
    """Whether events are checked (:data:`CHECK_EVENTS_ENV` is ``1``)."""
    return os.environ.get(CHECK_EVENTS_ENV) == "1"


def checking_results() -> bool:
    """Whether answers are checked (:data:`CHECK_RESULTS_ENV` is ``1``)."""
    return os.environ.get(CHECK_RESULTS_ENV) == "1"


def check_event(event: str, payload: Any) -> bool:
    """Whether an outgoing event is in the protocol's event table and its payload fits the
    model there; each misfit is logged at ERROR with the event and field names only (the
    values may be secrets: tokens, message text)."""
    model = payload_model(event)
    if model is None:
        log.error("event %s is not in the protocol event table", event, extra=WIRE_MISFIT)
        return False
    return _fits(model, payload, f"event {event} payload")


def check_result(method: str, result: Any) -> bool:
    """Whether ``result`` fits ``method``'s result model; each misfit is logged at ERROR
    (method and field names, never values)."""
    model = result_model(method)
    if model is None:
        log.error("method %s has no result model", method, extra=WIRE_MISFIT)
        return False
    return _fits(model, result, f"method {method} answer")


#: The envelope model of each frame type the gateway sends.
_FRAME_MODELS: dict[str, type[BaseModel]] = {"event": EventFrame, "res": ResponseFrame}


def check_frame(frame: dict[str, Any]) -> bool:
    """Whether an outgoing frame's envelope fits its frame model (the payload is the event's
    or the method's business: :func:`check_event`, :func:`check_result`); each misfit is
    logged at ERROR with the frame type and field names only."""
    kind = frame.get("type")
    model = _FRAME_MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        log.error("frame type %r is not one the gateway sends", kind, extra=WIRE_MISFIT)
        return False
    if kind == "res" and not isinstance(frame.get("id"), str) and _refuses_the_frame(frame):
        # As the reference: the answer to a request frame that is not one echoes whatever
        # ``id`` it carried (a number, an object), so only there an id is not a string.
        frame = {**frame, "id": "invalid"}
    return _fits(model, frame, f"{kind} frame")


def _refuses_the_frame(frame: dict[str, Any]) -> bool:
    error = frame.get("error")
    return (
        frame.get("ok") is False
        and isinstance(error, dict)
        and error.get("code") == ErrorCode.INVALID_REQUEST
    )


def _fits(model: type[BaseModel], value: Any, what: str) -> bool:
    """Whether ``value`` fits ``model``; each misfit is logged at ERROR as ``<what> does not
    fit <Model>: <field> (<error type>)``, never with a value."""
    errors = payload_errors(model, value)
    for field, kind in errors:
        log.error(
            "%s does not fit %s: %s (%s)", what, model.__name__, field, kind, extra=WIRE_MISFIT
        )
    return not errors
