"""The recorded chat traces of both gateways (``tests/fixtures/chat-traces/``) as the steps of
:mod:`tests.helpers.transcripts`, and the window's chat state (:class:`Client`, :func:`live`)
that lives through such steps, so the timeline tests replay real event shapes.

A trace (written by ``tests/interop/test_chat_golden_traces.py``) holds, in arrival order,
what the window did (``{"local": "send"|"steer"|"stop", "runId", "text"}``) and every event
the operator received (``{"event", "payload"}``), then the session's ``chat.history``. The
history does not say *when* each message was stored, so :func:`trace_steps` places a
``("persist", message)`` step at the first event by which the gateway must have stored it:

* a user message: where it was sent (or, steered, no earlier than the message before it);
* an assistant message that calls tools: at the first event naming one of its calls;
* an assistant message with text only: at the first model-turn boundary after its text
  streamed (a ``lifecycle`` event, a tool event, the run's end, or the end of a steered
  message's own run: it is taken in at a boundary);
* a tool result: at the ``tool`` ``result`` event of its call.

The message is stored just before that event (a user message just after it was sent).
Positions never go backwards (the history is append-only), so every prefix of the steps has
a prefix of the history as its transcript: what a ``chat.history`` asked for then returns.

:func:`live` lives through steps as the window does, with reconnects where it is told: the
frames sent while it is away are lost, and back online it merges a page of the history (the
latest messages); after a reconnect during a run it loads the history once more when that
run ends (``ChatPresenter``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openclaw_desktop.chat import ChatItem, ChatTimeline
from openclaw_desktop.chat.history import from_history
from openclaw_desktop.sdk.normalize import Normalizer
from tests.helpers.transcripts import SESSION, Step, transcript

__all__ = [
    "FIXTURES",
    "GATEWAYS",
    "LOCAL",
    "SCENARIOS",
    "Client",
    "coalesce",
    "history_alone",
    "live",
    "load_trace",
    "shown",
    "trace_session",
    "trace_steps",
]

LOCAL = frozenset({"send", "steer", "stop"})
_RUN_ENDS = frozenset({"run.completed", "run.cancelled", "run.failed", "run.timed_out"})

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "chat-traces"
GATEWAYS = ("real", "bundled")
SCENARIOS = ("tool", "steer", "abort", "stopsteer")
_TERMINAL = frozenset({"final", "error", "aborted"})


def load_trace(gateway: str, scenario: str) -> dict[str, Any]:
    """One recorded trace."""
    trace: dict[str, Any] = json.loads((FIXTURES / f"{gateway}-{scenario}.json").read_text("utf-8"))
    return trace


def trace_session(trace: dict[str, Any]) -> str:
    """The session key a trace's scenario ran in."""
    return f"agent:main:golden-{trace['scenario']}"


def _call_ids(message: dict[str, Any]) -> set[str]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return {str(b.get("id")) for b in blocks if isinstance(b, dict) and b.get("type") == "toolCall"}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _names_call(entry: dict[str, Any], calls: set[str]) -> bool:
    data = _object(_object(entry.get("payload")).get("data"))
    return str(data.get("toolCallId")) in calls


def _is_result(entry: dict[str, Any], call: str) -> bool:
    payload = _object(entry.get("payload"))
    data = _object(payload.get("data"))
    return (
        payload.get("stream") == "tool"
        and data.get("phase") == "result"
        and str(data.get("toolCallId")) == call
    )


def _boundary(entry: dict[str, Any], run_id: str) -> bool:
    payload = _object(entry.get("payload"))
    if entry.get("event") == "chat":  # the run's end, or a steered message's taken in
        return payload.get("state") in _TERMINAL
    if payload.get("runId") != run_id:
        return False
    return payload.get("stream") in ("lifecycle", "item", "tool")


def _is_text(entry: dict[str, Any], run_id: str) -> bool:
    payload = entry.get("payload") or {}
    if payload.get("runId") != run_id:
        return False
    return (entry.get("event") == "chat" and payload.get("state") == "delta") or (
        payload.get("stream") == "assistant"
    )


def _stored_at(entries: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[int]:
    """For each history message, the index of the entry by which it was stored."""
    positions: list[int] = []
    floor = 0
    for message in messages:
        meta = _object(message.get("__openclaw"))
        run_id = str(meta.get("runId") or "")
        role = message.get("role")
        at: int | None = None
        if role == "user":
            key = str(message.get("idempotencyKey") or meta.get("idempotencyKey") or "")
            at = next((i for i, e in enumerate(entries) if f"{e.get('runId')}:user" == key), None)
        elif role == "toolResult":
            call = str(message.get("toolCallId"))
            at = next((i for i, e in enumerate(entries) if _is_result(e, call)), None)
        elif role == "assistant" and _call_ids(message):
            calls = _call_ids(message)
            at = next((i for i, e in enumerate(entries) if _names_call(e, calls)), None)
        elif role == "assistant":
            streamed = False
            for i in range(floor, len(entries)):
                streamed = streamed or _is_text(entries[i], run_id)
                if streamed and _boundary(entries[i], run_id):
                    at = i
                    break
        if at is None:
            at = len(entries) - 1
        floor = max(floor, at)
        positions.append(floor)
    return positions


def trace_steps(trace: dict[str, Any]) -> tuple[list[Step], list[dict[str, Any]]]:
    """The trace as steps (local actions, frames and persists), and its whole history."""
    entries: list[dict[str, Any]] = list(trace["events"])
    messages: list[dict[str, Any]] = list(trace["history"]["messages"])
    stored = _stored_at(entries, messages)
    steps: list[Step] = []
    for index, entry in enumerate(entries):
        persists = [("persist", m) for m, at in zip(messages, stored, strict=True) if at == index]
        local = entry.get("local")
        if local == "stop":
            steps += [("stop", entry["runId"]), *persists]
        elif local in ("send", "steer"):
            steps += [(local, entry["runId"], entry["text"]), *persists]
        else:  # a gateway stores a message before the event that shows it was stored
            steps += [*persists, ("frame", entry["event"], entry["payload"])]
    return steps, messages


def _mergeable(a: Step, b: Step) -> bool:
    if a[0] != "frame" or b[0] != "frame" or a[1] != b[1]:
        return False
    pa, pb = a[2], b[2]
    if pa.get("runId") != pb.get("runId"):
        return False
    if a[1] == "chat":
        return bool(pa.get("state") == pb.get("state") == "delta") and not pb.get("replace")
    da, db = pa.get("data") or {}, pb.get("data") or {}
    return bool(
        pa.get("stream") == pb.get("stream") == "assistant"
        and da.get("itemId") == db.get("itemId")
        and not db.get("replace")
    )


def coalesce(a: Step, b: Step) -> Step | None:
    """Two adjacent text frames of one message as the one frame a gateway that coalesces
    deltas would send (None when they cannot be one): the later frame, with both deltas."""
    if not _mergeable(a, b):
        return None
    pa, pb = a[2], b[2]
    if a[1] == "chat":
        text = str(pa.get("deltaText") or "") + str(pb.get("deltaText") or "")
        return ("frame", "chat", {**pb, "deltaText": text})
    da, db = pa["data"], pb["data"]
    data = {**db, "delta": str(da.get("delta") or "") + str(db.get("delta") or "")}
    return ("frame", "agent", {**pb, "data": data})


# ------------------------------------------------------------------------- the window's state
def shown(items: list[ChatItem]) -> list[tuple[Any, ...]]:
    """What the chat shows of each item (not timestamps or ids the live stream lacks; not
    trailing white space, which the real gateway trims from the text it streams and keeps
    in the transcript, and which a rendered message does not show)."""
    return [
        (
            i.key,
            i.role,
            i.text.rstrip(),
            i.status,
            (i.tool.name, i.tool.status, i.tool.arg_count, i.tool.preview) if i.tool else None,
        )
        for i in items
    ]


def history_alone(messages: list[dict[str, Any]], session: str = SESSION) -> list[tuple[Any, ...]]:
    """The timeline a fresh window shows for ``messages`` (merged, or built directly)."""
    timeline = ChatTimeline(session)
    timeline.merge_history(messages)
    assert shown(timeline.items) == shown(from_history(messages).items)
    return shown(timeline.items)


class Client:
    """The window's chat state: a timeline fed by one normalizer, the presenter's reloads."""

    def __init__(self, session: str = SESSION) -> None:
        self.timeline = ChatTimeline(session)
        self.normalizer = Normalizer()
        self.reload_at_end: set[str] = set()
        self.page_start = 0

    def merge(self, messages: list[dict[str, Any]], limit: int) -> None:
        start = max(0, len(messages) - limit)
        self.timeline.merge_history(messages[start:])
        self.page_start = start

    def local(self, step: Step) -> None:
        kind, run_id = step[0], step[1]
        if kind == "send":
            self.timeline.send(run_id, step[2])
        elif kind == "steer":
            queued = self.timeline.send(run_id, step[2])
            assert queued.status == "queued"
            self.timeline.steered(run_id)
        else:
            self.timeline.stop_requested(run_id)

    def frame(self, step: Step, stored: Callable[[], list[dict[str, Any]]]) -> None:
        for event in self.normalizer.feed(step[1], step[2], 0):
            self.timeline.apply(event)
            if event.type in _RUN_ENDS and event.run_id in self.reload_at_end:
                self.reload_at_end.discard(event.run_id)
                messages = stored()
                self.merge(messages, len(messages))


def live(steps: list[Step], cuts: dict[int, tuple[int, int]], session: str = SESSION) -> Client:
    """Live through ``steps``; ``cuts`` maps a step index to (steps away, page size)."""
    client = Client(session)
    away_until = -1
    limit = 0
    for index, step in enumerate([*steps, ("end",)]):
        if index == away_until:  # back online: merge a page of the history
            client.merge(transcript(steps, index), limit)
            if client.timeline.active_run:
                client.reload_at_end.add(client.timeline.active_run)
        if step[0] == "end":
            break
        if index in cuts and index >= away_until:
            length, limit = cuts[index]
            away_until = index + length
        if step[0] == "crash" and away_until < index + 2:
            # away at least until the restarted gateway recorded the cut reply
            limit += sum(1 for s in steps[max(away_until, index) : index + 2] if s[0] == "persist")
            away_until = index + 2
        away = index < away_until
        if step[0] in LOCAL:
            assert not away, "the window does nothing while the gateway is away"
            client.local(step)
        elif step[0] == "frame" and not away:
            client.frame(step, functools.partial(transcript, steps, index + 1))
    return client
