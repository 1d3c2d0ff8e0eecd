"""Unit tests of :mod:`openclaw_desktop.sdk.normalize`: gateway events -> SDK events.

The run frames are the real gateway's, recorded in ``tests/fixtures/gateway/real-chat-trace.json``
(a plain reply, then an ``ls`` tool run); the approval payloads have the shape the real
gateway 2026.9.6 sends (observed in ``tests/interop/test_sdk_both_gateways.py``).
"""

from __future__ import annotations

import itertools
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.sdk import EVENT_TYPES, Event
from openclaw_desktop.sdk.normalize import Normalizer, message_text, run_event_id

TRACE = Path(__file__).resolve().parents[2] / "fixtures" / "gateway" / "real-chat-trace.json"
PLAIN_RUN = "8c9aeacd-b659-465e-8924-55421f3ea129"
TOOL_RUN = "3ff60336-2dcd-4714-b4cb-b4273f2890fa"
NOW = 1_796_000_000_000
RUN = "run-1"
KEY = "agent:main:main"


def trace_frames() -> list[tuple[str, Any]]:
    """(event name, payload) of every event frame of the recorded trace, in order."""
    entries = json.loads(TRACE.read_text("utf-8"))
    return [(e["event"], e["payload"]) for e in entries if "event" in e]


def normalize_run(run_id: str) -> list[Event]:
    """The normalized events of one recorded run."""
    normalizer = Normalizer()
    out: list[Event] = []
    for name, payload in trace_frames():
        out += [e for e in normalizer.feed(name, payload, NOW) if e.run_id == run_id]
    return out


def chat(state: str, seq: int, **extra: Any) -> dict[str, Any]:
    """A ``chat`` event payload of run :data:`RUN`."""
    return {"runId": RUN, "sessionKey": KEY, "agentId": "main", "seq": seq, "state": state, **extra}


def agent(stream: str, seq: int, data: dict[str, Any]) -> dict[str, Any]:
    """An ``agent`` event payload of run :data:`RUN`."""
    return {"runId": RUN, "sessionKey": KEY, "agentId": "main", "stream": stream, "seq": seq,
            "ts": NOW + seq, "data": data}  # fmt: skip


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "timestamp": NOW}


def approval_request(run_id: str = RUN, session_key: str = KEY) -> dict[str, Any]:
    """An ``exec.approval.requested`` payload shaped like the real gateway's."""
    return {
        "approvalKind": "exec",
        "id": "appr-1",
        "request": {
            "command": "ls",
            "cwd": "/tmp/workspace",
            "host": "gateway",
            "security": "allowlist",
            "ask": "always",
            "commandAnalysis": {"commandCount": 1, "riskKinds": [], "warningLines": []},
            "unavailableDecisions": ["allow-always"],
            "allowedDecisions": ["allow-once", "deny"],
            "agentId": "main",
            "resolvedPath": "/usr/bin/ls",
            "sessionKey": session_key,
            "runId": run_id,
            "toolCallId": "call_fake_1",
            "turnSourceChannel": "webchat",
        },
        "createdAtMs": NOW,
        "expiresAtMs": NOW + 1_800_000,
    }


def approval_resolved() -> dict[str, Any]:
    """An ``exec.approval.resolved`` payload shaped like the real gateway's."""
    request = approval_request()["request"]
    return {"id": "appr-1", "decision": "allow-once", "resolvedBy": "cli", "ts": NOW + 5,
            "request": request}  # fmt: skip


# ------------------------------------------------------------------------- recorded runs


def test_recorded_plain_run() -> None:
    events = normalize_run(PLAIN_RUN)
    types = [e.type for e in events]
    assert types == [
        "run.started",
        "assistant.delta",
        "assistant.delta",
        "assistant.delta",
        "assistant.message",
        "run.completed",
    ]
    final = "FAKE-LLM reply #1: you said 'hello there'"
    deltas = [e for e in events if e.type == "assistant.delta"]
    assert "".join(e.data["text"] for e in deltas) == final
    assert [e.data["cumulative"] for e in deltas][-1] == final
    assert events[-2].data["text"] == final
    assert events[-2].data["message"]["role"] == "assistant"
    assert events[-1].data == {"stopReason": "stop", "usage": None}
    assert events[0].data == {"startedAt": 1796036314959}
    assert events[0].ts == 1796036314959  # the gateway's own ts
    assert deltas[0].ts == 1796036315289  # from the agent event, which carries one
    assert all(e.raw is not None and "stream" in e.raw for e in deltas)  # not the chat ones
    assert [e.data["messageIndex"] for e in deltas] == [0, 0, 0]
    ids = [e.id for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(e.session_key == KEY and e.agent_id == "main" for e in events)
    assert all(e.type in EVENT_TYPES and e.version == 1 for e in events)
    assert all(isinstance(e.raw, dict) and e.raw["runId"] == PLAIN_RUN for e in events)


def test_recorded_tool_run() -> None:
    events = normalize_run(TOOL_RUN)
    types = [e.type for e in events]
    assert types[0] == "run.started"
    assert types[1:3] == ["tool.call.started", "tool.call.completed"]
    assert types[-2:] == ["assistant.message", "run.completed"]
    started, done = events[1], events[2]
    assert started.data == {"toolCallId": "call_fake_1", "name": "ls", "args": {"path": "."}}
    assert done.data["toolCallId"] == "call_fake_1"
    assert done.data["isError"] is False
    assert "AGENTS.md" in done.data["result"]["content"][0]["text"]
    deltas = [e for e in events if e.type == "assistant.delta"]
    assert "".join(e.data["text"] for e in deltas) == events[-2].data["text"]
    ids = [e.id for e in events]
    assert ids == sorted(ids)  # chat and agent seqs share one counter per run


def test_recorded_tool_run_numbers_the_reply_after_the_call() -> None:
    """The reply after the tool call is the run's second assistant message (the first only
    called ``ls``), as ``chat.history`` counts them."""
    deltas = [e for e in normalize_run(TOOL_RUN) if e.type == "assistant.delta"]
    assert {e.data["messageIndex"] for e in deltas} == {1}
    assert deltas[-1].data["cumulative"] == normalize_run(TOOL_RUN)[-2].data["text"]


def item(seq: int, item_id: str, text: str, delta: str, **extra: Any) -> dict[str, Any]:
    """An ``agent`` ``assistant`` payload of one message item."""
    return agent("assistant", seq, {"text": text, "delta": delta, "itemId": item_id, **extra})


def test_assistant_items_delimit_messages_and_chat_deltas_are_dropped() -> None:
    """Text before a tool call and the text after it are two messages; the ``chat`` deltas
    of the run (the real gateway's join both with a blank line) add nothing."""
    normalizer = Normalizer()
    out = normalizer.feed("agent", item(3, "s:1", "Let me look.", "Let me look."), NOW)
    out += normalizer.feed("chat", chat("delta", 3, deltaText="x", message=assistant("x")), NOW)
    out += normalizer.feed("agent", item(6, "s:2", "Done", "Done"), NOW)
    out += normalizer.feed("agent", item(7, "s:2", "Done.", "."), NOW)
    joined = assistant("Let me look.\n\nDone.")
    out += normalizer.feed("chat", chat("delta", 7, deltaText=".", message=joined), NOW)
    assert [(e.data["messageIndex"], e.data["cumulative"], e.data["text"]) for e in out] == [
        (0, "Let me look.", "Let me look."),
        (1, "Done", "Done"),
        (1, "Done.", "."),
    ]
    normalizer.feed("chat", chat("final", 8, stopReason="stop", message=joined), NOW)
    (again,) = normalizer.feed("chat", chat("delta", 9, deltaText="y", message=assistant("y")), NOW)
    assert again.data == {"text": "y", "cumulative": "y", "replace": False}  # state forgotten


def test_a_new_item_stream_continues_the_numbering() -> None:
    """A retried attempt numbers its messages from 1 again: they still follow the others."""
    normalizer = Normalizer()
    first = normalizer.feed("agent", item(3, "a:1", "x", "x"), NOW)
    second = normalizer.feed("agent", item(4, "b:1", "y", "y"), NOW)
    third = normalizer.feed("agent", item(5, "b:2", "z", "z"), NOW)
    unnumbered = normalizer.feed("agent", item(6, "free", "w", "w"), NOW)
    assert [e.data["messageIndex"] for e in first + second + third + unnumbered] == [0, 1, 2, 3]


def test_the_same_frames_give_the_same_ids() -> None:
    assert [e.id for e in normalize_run(TOOL_RUN)] == [e.id for e in normalize_run(TOOL_RUN)]


def test_frames_of_no_interest_give_nothing() -> None:
    normalizer = Normalizer()
    ignored = [
        ("health", {"ok": True}),
        ("tick", {"ts": NOW}),
        ("chat", chat("status", 1, phase="preparing_workspace")),
        ("agent", agent("run_status", 1, {"phase": "preparing_workspace"})),
        ("agent", agent("lifecycle", 5, {"phase": "model", "provider": "fake"})),
        ("agent", agent("lifecycle", 9, {"phase": "end", "stopReason": "stop"})),
        ("agent", agent("usage", 6, {"outputTokens": 10})),
        ("agent", agent("assistant", 7, {"text": "x", "delta": "x"})),
        ("agent", {**agent("tool", 8, {}), "data": "not a dict"}),
        ("chat", "not a dict"),
        ("chat", None),
    ]
    for name, payload in ignored:
        assert normalizer.feed(name, payload, NOW) == [], (name, payload)


# ---------------------------------------------------------------------------- chat states


def test_delta_fields() -> None:
    (event,) = Normalizer().feed(
        "chat", chat("delta", 6, deltaText="ab", message=assistant("xab"), replace=True), NOW
    )
    assert event.type == "assistant.delta"
    assert event.id == run_event_id(RUN, 6, "assistant.delta")
    assert event.data == {"text": "ab", "cumulative": "xab", "replace": True}


def test_aborted_with_partial_text() -> None:
    payload = chat("aborted", 9, stopReason="aborted", message=assistant("part"))
    message, cancelled = Normalizer().feed("chat", payload, NOW)
    assert (message.type, message.data["text"]) == ("assistant.message", "part")
    assert cancelled.type == "run.cancelled"
    assert cancelled.data == {"stopReason": "aborted", "errorMessage": None}
    assert message.id < cancelled.id


def test_aborted_without_text() -> None:
    (cancelled,) = Normalizer().feed("chat", chat("aborted", 9), NOW)
    assert cancelled.type == "run.cancelled"


def test_error_and_timeout() -> None:
    (failed,) = Normalizer().feed("chat", chat("error", 4, errorMessage="boom"), NOW)
    assert failed.type == "run.failed"
    assert failed.data == {"errorMessage": "boom", "errorKind": "unknown", "errorDetail": None}
    timeout = chat("error", 4, errorMessage="slow", errorKind="timeout", errorDetail={"s": 1})
    (timed_out,) = Normalizer().feed("chat", timeout, NOW)
    assert timed_out.type == "run.timed_out"
    assert timed_out.data["errorDetail"] == {"s": 1}


def test_missing_or_negative_seq_sorts_first() -> None:
    (no_seq,) = Normalizer().feed("chat", {**chat("final", 0), "seq": None}, NOW)[:1]
    assert no_seq.id == f"{RUN}:0000000000:assistant.message"
    assert run_event_id(RUN, -5, "x") == f"{RUN}:0000000000:x"
    assert run_event_id(RUN, 9, "z") < run_event_id(RUN, 10, "a")


# --------------------------------------------------------------------------------- agent


def test_tool_phases() -> None:
    normalizer = Normalizer()
    base = {"toolCallId": "t1", "name": "exec"}
    start = {**base, "phase": "start", "args": {"command": "ls"}}
    (started,) = normalizer.feed("agent", agent("tool", 3, start), NOW)
    (partial,) = normalizer.feed(
        "agent", agent("tool", 4, {**base, "phase": "update", "partialResult": "AG"}), NOW
    )
    (failed,) = normalizer.feed(
        "agent", agent("tool", 5, {**base, "phase": "result", "isError": True, "result": "e"}), NOW
    )
    assert started.type == "tool.call.started" and started.data["args"] == {"command": "ls"}
    assert partial.type == "tool.call.delta" and partial.data["partial"] == "AG"
    assert failed.type == "tool.call.failed"
    assert failed.data == {**base, "isError": True, "result": "e"}
    assert started.ts == NOW + 3


def test_thinking_and_compaction() -> None:
    normalizer = Normalizer()
    (thinking,) = normalizer.feed("agent", agent("thinking", 2, {"delta": "hmm"}), NOW)
    assert (thinking.type, thinking.data) == ("thinking.delta", {"text": "hmm"})
    (compacted,) = normalizer.feed(
        "agent", agent("compaction", 3, {"phase": "end", "tokensBefore": 900}), NOW
    )
    assert compacted.type == "session.compacted"
    assert compacted.data["tokensBefore"] == 900
    assert normalizer.feed("agent", agent("compaction", 2, {"phase": "start"}), NOW) == []


# ------------------------------------------------------------------------------ sessions


def test_sessions_changed_and_compacted() -> None:
    normalizer = Normalizer()
    recorded = [p for n, p in trace_frames() if n == "sessions.changed"]
    events = list(
        itertools.chain.from_iterable(
            normalizer.feed("sessions.changed", p, NOW + i) for i, p in enumerate(recorded)
        )
    )
    assert [e.type for e in events] == ["session.updated"] * len(recorded)
    assert events[0].session_key is None  # cron-bindings-loaded names no session
    assert events[1].session_key == KEY  # from session.key
    (created,) = normalizer.feed(
        "sessions.changed", {"reason": "create", "sessionKey": "agent:main:x"}, NOW
    )
    assert created.type == "session.created" and created.session_key == "agent:main:x"
    (compacted,) = normalizer.feed("session.compacted", {"sessionKey": KEY, "kept": 4}, NOW)
    assert compacted.type == "session.compacted" and compacted.data["kept"] == 4
    ids = [e.id for e in [*events, created, compacted]]
    assert len(set(ids)) == len(ids)


# ----------------------------------------------------------------------------- approvals


def test_exec_approval_requested() -> None:
    (event,) = Normalizer().feed("exec.approval.requested", approval_request(), NOW)
    assert event.type == "approval.requested"
    data = event.data
    assert data["id"] == "appr-1"
    assert data["kind"] == "exec"
    assert data["command"] == "ls"
    assert data["summary"] == "ls"
    assert data["expiresAt"] == NOW + 1_800_000
    assert data["request"]["toolCallId"] == "call_fake_1"
    assert event.session_key == KEY
    assert "allow-once" in data["decisions"] and "deny" in data["decisions"]


def test_exec_approval_resolved() -> None:
    (event,) = Normalizer().feed("exec.approval.resolved", approval_resolved(), NOW)
    assert event.type == "approval.resolved"
    assert event.data == {"id": "appr-1", "kind": "exec", "decision": "allow-once"}


def test_plugin_approval_kind() -> None:
    payload = {"id": "p1", "request": {"title": "Publish page?", "sessionKey": KEY}}
    (event,) = Normalizer().feed("plugin.approval.requested", payload, NOW)
    assert (event.data["kind"], event.data["summary"]) == ("plugin", "Publish page?")
    assert event.data["command"] is None


def test_approval_events_name_their_run() -> None:
    normalizer = Normalizer()
    (requested,) = normalizer.feed("exec.approval.requested", approval_request(), NOW)
    (resolved,) = normalizer.feed("exec.approval.resolved", approval_resolved(), NOW)
    assert requested.run_id == RUN
    assert resolved.run_id == RUN


def test_approval_resolved_names_its_session() -> None:
    (resolved,) = Normalizer().feed("exec.approval.resolved", approval_resolved(), NOW)
    assert resolved.session_key == KEY


def test_approval_decisions_follow_the_gateway() -> None:
    (event,) = Normalizer().feed("exec.approval.requested", approval_request(), NOW)
    assert event.data["decisions"] == ["allow-once", "deny"]


# ------------------------------------------------------------------------------- helpers


def test_message_text() -> None:
    assert message_text(assistant("hi")) == "hi"
    assert message_text({"role": "assistant", "content": "plain"}) == "plain"
    mixed = {
        "content": [
            {"type": "text", "text": "a"},
            {"type": "toolCall", "id": "c1", "name": "ls"},
            {"type": "text", "text": "b"},
            "junk",
        ]
    }
    assert message_text(mixed) == "ab"
    assert message_text(None) == ""
    assert message_text({"content": 5}) == ""


def test_event_to_dict() -> None:
    (event,) = Normalizer().feed("chat", chat("delta", 6, deltaText="x"), NOW)
    shape = event.to_dict()
    assert list(shape) == ["version", "id", "ts", "type", "runId", "sessionKey", "agentId",
                           "data", "raw"]  # fmt: skip
    assert shape["runId"] == RUN and shape["data"]["text"] == "x"
    bare = Event("e1", NOW, "session.updated").to_dict()
    assert "runId" not in bare and "sessionKey" not in bare and bare["data"] == {}


# ------------------------------------------------------------------------- malformed input


def test_a_malformed_payload_is_skipped_counted_and_logged_without_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A ``chat``/``agent`` payload that does not fit its model gives nothing and is counted;
    the log names the fields, never the values; the stream goes on."""
    normalizer = Normalizer()
    secret = "sk-live-do-not-log"
    with caplog.at_level(logging.DEBUG, logger="openclaw.sdk"):
        assert normalizer.feed("chat", {**chat("delta", 1), "state": secret}, NOW) == []
        assert normalizer.feed("chat", {**chat("final", 2), "runId": None}, NOW) == []
        assert normalizer.feed("agent", {**agent("tool", 3, {}), "seq": secret}, NOW) == []
    assert normalizer.malformed == {"chat": 2, "agent": 1}
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "state" in logged and "runId" in logged and "seq" in logged
    assert secret not in logged
    (event,) = normalizer.feed(
        "chat", chat("delta", 4, deltaText="ab", message=assistant("ab")), NOW
    )
    assert event.type == "assistant.delta"
    assert normalizer.malformed == {"chat": 2, "agent": 1}
