"""The event table of :mod:`openclaw_desktop.protocol.events`: every event the real gateway
sent in our recordings fits its payload model, the table is what the bundled gateway
advertises, and a payload without a required field is refused (and reported by
``gateway.wire_check.check_event`` with field names only).

Recordings of the real gateway 2026.9.6: the golden chat traces
(``tests/fixtures/chat-traces/real-*.json``), the chat trace of
``tests/fixtures/gateway/real-chat-trace.json`` and every ``"type": "event"`` frame under
``tests/fixtures`` (the captured and transcribed golden frames of ``tests/fixtures/protocol``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import EVENTS as GATEWAY_EVENTS
from gateway.hub import Hub
from gateway.wire_check import CHECK_EVENTS_ENV, check_event
from openclaw_desktop.protocol.events import (
    EVENTS,
    UNADVERTISED_EVENTS,
    PresenceEvent,
    event_names,
    payload_errors,
    payload_model,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

#: Events of the recordings that this gateway does not send (so they have no model here).
NOT_SENT = frozenset(
    {"chat.metadata.changed", "cron", "update.available", "voicewake.changed",
     "voicewake.routing.changed"}
)  # fmt: skip

#: The smallest payload of each event that fits its model: every required field, no other.
MINIMAL: dict[str, dict[str, Any]] = {
    "connect.challenge": {"nonce": "n", "ts": 1},
    "tick": {"ts": 1},
    "presence": {"presence": [{"ts": 1}]},
    "health": {},
    "shutdown": {"reason": "gateway stopping"},
    "node.invoke.request": {"id": "i", "nodeId": "n", "command": "system.run"},
    "node.invoke.cancel": {},
    "node.pair.requested": {"requestId": "r", "nodeId": "n", "ts": 1},
    "node.pair.resolved": {"requestId": "", "nodeId": "n", "decision": "removed", "ts": 1},
    "node.hostStats": {
        "nodeId": "n",
        "hostStats": {"cpuCount": 4, "memoryTotalBytes": 8, "memoryFreeBytes": 2},
    },
    "device.pair.requested": {"requestId": "r", "deviceId": "d", "publicKey": "k", "ts": 1},
    "device.pair.resolved": {"requestId": "r", "deviceId": "d", "decision": "approved", "ts": 1},
    "chat": {"runId": "r", "sessionKey": "agent:main:main", "state": "final"},
    "agent": {"runId": "r", "stream": "lifecycle"},
    "sessions.changed": {"ts": 1},
    "session.message": {"sessionKey": "agent:main:main", "message": {"role": "user"}},
    "session.compacted": {"sessionKey": "agent:main:main", "runId": "r", "ts": 1},
    "talk.mode": {"enabled": True, "phase": None, "ts": 1},
    "talk.event": {
        "id": "e",
        "type": "session.started",
        "sessionId": "s",
        "seq": 1,
        "timestamp": "2026-12-02T12:00:00.000Z",
        "mode": "transcription",
        "transport": "gateway-relay",
        "brain": "none",
    },
    "chat.send_timing": {
        "phase": "dispatch-started",
        "runId": "r",
        "sessionKey": "agent:main:main",
        "ackToPhaseMs": 0.5,
        "receivedToPhaseMs": 1.25,
    },
}


def _event_frames(value: Any) -> Iterator[dict[str, Any]]:
    """Every ``{"type": "event", ...}`` frame inside a JSON value."""
    if isinstance(value, dict):
        if value.get("type") == "event" and isinstance(value.get("event"), str):
            yield value
            return
        for item in value.values():
            yield from _event_frames(item)
    elif isinstance(value, list):
        for item in value:
            yield from _event_frames(item)


def _trace_events(value: Any) -> list[dict[str, Any]]:
    """The ``{"event", "payload"}`` entries of a recorded trace (a list, or ``events``)."""
    entries = value.get("events", []) if isinstance(value, dict) else value
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("event"), str)]


def real_events() -> list[tuple[str, str, Any]]:
    """``(where, event, payload)`` of every event the real gateway sent in our recordings."""
    found: list[tuple[str, str, Any]] = []
    traces = [*sorted((FIXTURES / "chat-traces").glob("real-*.json"))]
    traces.append(FIXTURES / "gateway" / "real-chat-trace.json")
    for path in traces:
        for n, entry in enumerate(_trace_events(json.loads(path.read_text()))):
            found.append((f"{path.name}[{n}]", entry["event"], entry["payload"]))
    for path in sorted(FIXTURES.rglob("*.json")):
        if path.parent.name == "chat-traces" and not path.name.startswith("real-"):
            continue  # the bundled gateway's traces
        for n, frame in enumerate(_event_frames(json.loads(path.read_text()))):
            found.append((f"{path.name}#{n}", frame["event"], frame.get("payload")))
    return found


REAL = real_events()


def test_the_recordings_hold_the_real_gateways_events() -> None:
    """The recordings are found: chat, agent, pairing, presence, tick, challenge, invoke."""
    names = {event for _, event, _ in REAL}
    assert len(REAL) > 200
    assert {
        "chat",
        "agent",
        "sessions.changed",
        "health",
        "presence",
        "tick",
        "connect.challenge",
        "node.invoke.request",
        "node.pair.requested",
        "node.pair.resolved",
        "device.pair.requested",
        "device.pair.resolved",
    } <= names


@pytest.mark.parametrize(("where", "event", "payload"), REAL, ids=[w for w, _, _ in REAL])
def test_every_recorded_real_event_fits_its_model(where: str, event: str, payload: Any) -> None:
    """Each event the real gateway sent fits our model of it (or is one we never send)."""
    model = payload_model(event)
    if model is None:
        assert event in NOT_SENT, f"{where}: {event} has no payload model"
        return
    assert payload_errors(model, payload) == [], where


@pytest.mark.parametrize(
    "path", sorted((FIXTURES / "chat-traces").glob("bundled-*.json")), ids=lambda p: p.name
)
def test_the_bundled_gateways_recorded_events_fit_too(path: Path) -> None:
    """Our gateway's golden traces fit the same models."""
    for entry in _trace_events(json.loads(path.read_text())):
        model = payload_model(entry["event"])
        assert model is not None, entry["event"]
        assert payload_errors(model, entry["payload"]) == [], entry["event"]


def test_the_table_is_what_the_gateway_advertises() -> None:
    """``hello-ok.features.events`` of the bundled gateway is the table, in its order."""
    assert event_names() == list(EVENTS) == GATEWAY_EVENTS
    assert len(EVENTS) == 19
    assert not set(UNADVERTISED_EVENTS) & set(EVENTS)


def test_every_event_has_a_minimal_sample() -> None:
    """The samples below cover the whole table, advertised or not."""
    assert set(MINIMAL) == {*EVENTS, *UNADVERTISED_EVENTS}


@pytest.mark.parametrize("event", sorted(MINIMAL))
def test_minimal_payload_fits(event: str) -> None:
    """The required fields alone make a payload that fits."""
    model = payload_model(event)
    assert model is not None
    assert payload_errors(model, MINIMAL[event]) == []


REQUIRED = [(event, field) for event, sample in sorted(MINIMAL.items()) for field in sample]


@pytest.mark.parametrize(("event", "field"), REQUIRED, ids=[f"{e}-{f}" for e, f in REQUIRED])
def test_a_payload_missing_a_required_field_is_refused(event: str, field: str) -> None:
    """Drop any one required field and the payload is refused, naming that field."""
    model = payload_model(event)
    assert model is not None
    payload = {k: v for k, v in MINIMAL[event].items() if k != field}
    assert (field, "missing") in payload_errors(model, payload)


def test_nested_and_typed_fields_are_checked() -> None:
    """A presence entry without ``ts``, a string timestamp and a non-object are refused."""
    assert payload_errors(PresenceEvent, {"presence": [{"host": "h"}]}) == [
        ("presence.0.ts", "missing")
    ]
    tick = payload_model("tick")
    talk_mode = payload_model("talk.mode")
    assert tick is not None
    assert talk_mode is not None
    assert payload_errors(talk_mode, {"enabled": True, "phase": None, "ts": "1"}) == [
        ("ts", "int_type")
    ]
    assert payload_errors(tick, None) == [("(payload)", "model_type")]


def test_unknown_events_have_no_model() -> None:
    """Only the table's events (and chat.send_timing) have a model."""
    assert payload_model("cron") is None
    assert payload_model("chat.send_timing") is UNADVERTISED_EVENTS["chat.send_timing"]


# ---------------------------------------------------------------- the gateway's check


def test_check_event_logs_field_names_never_values(
    caplog: pytest.LogCaptureFixture, wire_misfits: list[str]
) -> None:
    """A misfit is logged at ERROR by gateway.hub with the event and field, not the value."""
    caplog.set_level(logging.ERROR, logger="gateway.wire")
    secret = "s3cret-token-value"
    payload = {"requestId": secret, "deviceId": "d", "decision": "approved"}
    assert not check_event("device.pair.resolved", payload)
    assert not check_event("device.pair.resolved", {**payload, "ts": secret})
    assert not check_event("no.such.event", {"token": secret})
    messages = [r.getMessage() for r in caplog.records if r.name == "gateway.wire"]
    assert messages == [
        "event device.pair.resolved payload does not fit DevicePairResolvedEvent: ts (missing)",
        "event device.pair.resolved payload does not fit DevicePairResolvedEvent: ts (int_type)",
        "event no.such.event is not in the protocol event table",
    ]
    assert all(r.levelno == logging.ERROR for r in caplog.records)
    assert check_event("device.pair.resolved", {**payload, "ts": 1})
    assert wire_misfits == messages  # what the suite-wide check would fail a test on
    wire_misfits.clear()


def test_the_hub_checks_what_it_sends_when_asked(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, wire_misfits: list[str]
) -> None:
    """With the variable set the hub checks each broadcast (its own presence fits); without
    it, it does not."""
    caplog.set_level(logging.ERROR, logger="gateway.wire")
    monkeypatch.setenv(CHECK_EVENTS_ENV, "1")
    hub = Hub("instance")
    assert hub.check_events
    hub.presence_changed()
    hub.broadcast("talk.mode", {"enabled": True, "ts": 1})
    hub.send_to("gone", "chat.send_timing", {"phase": "dispatch-started"})
    messages = [r.getMessage() for r in caplog.records if r.name == "gateway.wire"]
    assert messages[0] == "event talk.mode payload does not fit TalkModeEvent: phase (missing)"
    assert len(messages) == 5  # talk.mode's phase; chat.send_timing's four required fields
    caplog.clear()
    wire_misfits.clear()
    monkeypatch.delenv(CHECK_EVENTS_ENV)
    quiet = Hub("instance")
    quiet.broadcast("talk.mode", {"enabled": True, "ts": 1})
    assert not quiet.check_events
    assert [r for r in caplog.records if r.name == "gateway.wire"] == []
