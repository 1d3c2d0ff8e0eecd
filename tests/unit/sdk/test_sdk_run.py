"""Unit tests of :class:`openclaw_desktop.sdk.Run`: the events of one run, replay cursors,
results, approvals and the client's routing, fed with the real gateway's recorded frames.

The client is a real :class:`OpenClaw` that never connects (no socket is opened): frames go
in through its event listener exactly as the connection would deliver them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.sdk import Approval, Event, OpenClaw, Run
from openclaw_desktop.session import EventReceived, SequenceGap

TRACE = Path(__file__).resolve().parents[2] / "fixtures" / "gateway" / "real-chat-trace.json"
PLAIN_RUN = "8c9aeacd-b659-465e-8924-55421f3ea129"
TOOL_RUN = "3ff60336-2dcd-4714-b4cb-b4273f2890fa"
PLAIN_TEXT = "FAKE-LLM reply #1: you said 'hello there'"
KEY = "agent:main:main"
BOUND_S = 5.0


def recorded() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(TRACE.read_text("utf-8"))
    return entries


def frames(run_id: str | None = None) -> list[tuple[str, Any]]:
    """The recorded event frames (of one run, or all of them)."""
    out = [(e["event"], e["payload"]) for e in recorded() if "event" in e]
    if run_id is None:
        return out
    return [(n, p) for n, p in out if isinstance(p, dict) and p.get("runId") == run_id]


def history() -> list[dict[str, Any]]:
    """The recorded ``chat.history`` messages (both runs)."""
    (entry,) = [e for e in recorded() if "history" in e]
    messages: list[dict[str, Any]] = entry["history"]["messages"]
    return messages


def split_after_deltas(run_id: str, n: int) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """A run's frames up to and including its ``n``-th chat delta, and the rest."""
    items = frames(run_id)
    seen = 0
    for i, (name, payload) in enumerate(items):
        seen += name == "chat" and payload.get("state") == "delta"
        if seen == n:
            return items[: i + 1], items[i + 1 :]
    raise AssertionError(f"fewer than {n} deltas")


def messages_of(run_id: str) -> list[dict[str, Any]]:
    return [
        m
        for m in history()
        if m["__openclaw"].get("runId") == run_id or m.get("idempotencyKey") == f"{run_id}:user"
    ]


def feed(oc: OpenClaw, items: list[tuple[str, Any]]) -> None:
    for name, payload in items:
        oc._on_event(EventReceived(name, payload, None, None))


async def drain(run: Run, after: str | None = None) -> list[Event]:
    async with asyncio.timeout(BOUND_S):
        return [e async for e in run.events(after=after)]


async def until(predicate: Any) -> None:
    async with asyncio.timeout(BOUND_S):
        while not predicate():
            await asyncio.sleep(0.01)


def approval_request(run_id: str, session_key: str = KEY) -> dict[str, Any]:
    """An ``exec.approval.requested`` payload shaped like the real gateway's."""
    return {
        "approvalKind": "exec",
        "id": f"appr-{run_id}",
        "request": {
            "command": "ls",
            "host": "gateway",
            "allowedDecisions": ["allow-once", "deny"],
            "unavailableDecisions": ["allow-always"],
            "sessionKey": session_key,
            "runId": run_id,
            "toolCallId": "call_fake_1",
        },
        "createdAtMs": 1,
        "expiresAtMs": 1_800_001,
    }


# ------------------------------------------------------------------------------ streaming


async def test_a_recorded_run_from_start_to_end(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    running = (run.done, run.status)
    feed(oc, frames())  # both runs, health, cron, sessions...: only this run's get in
    events = await drain(run)
    types = [e.type for e in events]
    assert types == ["run.created", "run.started", *["assistant.delta"] * 3,
                     "assistant.message", "run.completed"]  # fmt: skip
    assert {e.run_id for e in events} == {PLAIN_RUN}
    assert running == (False, "running")
    assert run.done and run.status == "completed"
    assert run.started_at == 1796036314959
    assert run.ended_at is not None and run.ended_at >= run.started_at
    ids = [e.id for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


async def test_live_readers_and_cursors(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    items = frames(PLAIN_RUN)
    first = asyncio.create_task(drain(run))
    second = asyncio.create_task(drain(run))
    await asyncio.sleep(0)
    for item in items:  # arrives while both read
        feed(oc, [item])
        await asyncio.sleep(0)
    everything = await first
    assert [e.id for e in await second] == [e.id for e in everything]
    for i, event in enumerate(everything):
        assert [e.id for e in await drain(run, after=event.id)] == [
            e.id for e in everything[i + 1 :]
        ]


async def test_duplicates_are_dropped(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    feed(oc, frames(PLAIN_RUN))
    feed(oc, frames(PLAIN_RUN))
    events = await drain(run)
    assert len(events) == len({e.id for e in events}) == 7


async def test_unknown_cursor_replays_from_the_start(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    head, tail = split_after_deltas(PLAIN_RUN, 2)
    feed(oc, head)
    reader = asyncio.create_task(drain(run, after="no-such-id"))
    await asyncio.sleep(0.05)
    feed(oc, tail)
    events = await reader
    types = [e.type for e in events]
    assert types[:2] == ["stream.reset", "run.created"], "the reset first, then everything"
    assert types[-1] == "run.completed"
    assert "no-such-id" in events[0].data["reason"]
    assert all(e.type != "stream.reset" for e in run._events), "other readers see no reset"


async def test_unknown_cursor_keeps_a_finished_run_terminal_last(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    feed(oc, frames(PLAIN_RUN))
    replay = await drain(run, after="no-such-id")
    assert replay[-1].type == "run.completed"
    assert (await drain(run))[-1].type == "run.completed"


async def test_a_late_catch_up_adds_nothing_to_a_finished_run(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    feed(oc, frames(PLAIN_RUN))
    before = [e.id for e in await drain(run)]
    run.finish_from_history(messages_of(PLAIN_RUN)[-1])
    after = await drain(run)
    assert [e.id for e in after] == before
    assert sum(e.type == "run.completed" for e in after) == 1


async def test_catch_up_from_history_ends_a_run(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    feed(oc, split_after_deltas(PLAIN_RUN, 1)[0])
    cursor = (await asyncio.wait_for(_first_delta(run), BOUND_S)).id
    run.finish_from_history(messages_of(PLAIN_RUN)[-1])
    events = await drain(run, after=cursor)
    assert [e.type for e in events][-2:] == ["assistant.message", "run.completed"]
    assert events[-2].data == {"text": PLAIN_TEXT, "message": messages_of(PLAIN_RUN)[-1],
                               "replayed": True}  # fmt: skip
    assert all(e.id > cursor for e in events)
    assert run.status == "completed"


async def _first_delta(run: Run) -> Event:
    async for event in run.events():
        if event.type == "assistant.delta":
            return event
    raise AssertionError("no delta")


async def test_a_sequence_gap_resets_running_runs_only(oc: OpenClaw) -> None:
    running = oc.run_book.track(PLAIN_RUN, "main")
    done = oc.run_book.track(TOOL_RUN, "main")
    feed(oc, split_after_deltas(PLAIN_RUN, 1)[0])
    feed(oc, frames(TOOL_RUN))
    oc._on_gap(SequenceGap(expected=10, received=13))
    resets = [e for e in running._events if e.type == "stream.reset"]
    assert len(resets) == 1
    assert "3 gateway events were missed" in resets[0].data["reason"]
    assert not any(e.type == "stream.reset" for e in done._events)
    assert (await drain(done))[-1].type == "run.completed"


# -------------------------------------------------------------------------------- results


async def test_wait_with_a_timeout_while_running(oc: OpenClaw) -> None:
    run = oc.run_book.track(PLAIN_RUN, "main")
    feed(oc, split_after_deltas(PLAIN_RUN, 2)[0])  # no final yet
    result = await run.wait(0.05)
    assert result.status == "accepted"
    assert result.text == "FAKE-LLM reply #1: you said"
    assert result.messages == [] and result.usage.total_tokens == 0
    assert result.usage.cost_usd is None
    assert result.ended_at is None and result.started_at == 1796036314959


async def test_result_of_a_tool_run(oc: OpenClaw) -> None:
    run = oc.run_book.track(TOOL_RUN, "main")
    feed(oc, frames(TOOL_RUN))
    result = run._result("completed", messages_of(TOOL_RUN))
    assert result.status == "completed" and result.error is None
    assert result.text.startswith("FAKE-LLM reply #3: tool returned")
    assert [m["role"] for m in result.messages] == ["user", "assistant", "toolResult",
                                                     "assistant"]  # fmt: skip
    # Two model calls of 10 in / 10 out each (the recorded usage).
    assert (result.usage.input_tokens, result.usage.output_tokens) == (20, 20)
    assert result.usage.total_tokens == 40
    assert result.usage.cost_usd == 0.0
    assert result.output == {"text": result.text, "messages": result.messages}


async def test_result_of_a_failed_run(oc: OpenClaw) -> None:
    run = oc.run_book.track("r-fail", "main")
    failed = {"runId": "r-fail", "sessionKey": KEY, "seq": 3, "state": "error",
              "errorMessage": "provider said 500"}  # fmt: skip
    feed(oc, [("chat", failed)])
    assert run.status == "failed"
    result = run._result("failed", [])
    assert result.error == "provider said 500"
    assert result.text == ""


# ------------------------------------------------------------------------------ approvals


async def test_on_approval_gets_the_request(oc: OpenClaw) -> None:
    run = oc.run_book.track(TOOL_RUN, "main")
    seen: list[Approval] = []

    async def leave_it(approval: Approval) -> str | None:
        seen.append(approval)
        return None  # a human decides: nothing is sent

    run.on_approval(leave_it)
    feed(oc, [("exec.approval.requested", approval_request(TOOL_RUN))])
    await until(lambda: seen)
    (approval,) = seen
    assert approval.id == f"appr-{TOOL_RUN}"
    assert approval.run_id == TOOL_RUN
    assert approval.kind == "exec"
    assert approval.command == "ls" and approval.summary == "ls"
    assert approval.expires_at == 1_800_001
    assert approval.raw["toolCallId"] == "call_fake_1"
    assert any(e.type == "approval.requested" for e in run._events)


async def test_a_late_handler_still_sees_earlier_requests(oc: OpenClaw) -> None:
    run = oc.run_book.track(TOOL_RUN, "main")
    feed(oc, [("exec.approval.requested", approval_request(TOOL_RUN))])
    seen: list[str] = []

    async def leave_it(approval: Approval) -> str | None:
        seen.append(approval.id)
        return None

    run.on_approval(leave_it)
    await until(lambda: seen)
    assert seen == [f"appr-{TOOL_RUN}"]


async def test_a_failing_handler_is_logged_not_raised(
    oc: OpenClaw, caplog: pytest.LogCaptureFixture
) -> None:
    run = oc.run_book.track(TOOL_RUN, "main")
    calls: list[str] = []

    async def broken(approval: Approval) -> str | None:
        calls.append(approval.id)
        raise RuntimeError("handler bug")

    run.on_approval(broken)
    with caplog.at_level(logging.ERROR, logger="openclaw.sdk"):
        feed(oc, [("exec.approval.requested", approval_request(TOOL_RUN))])
        await until(lambda: any("leaving" in r.getMessage() for r in caplog.records))
    assert calls == [f"appr-{TOOL_RUN}"]


async def test_approvals_of_other_sessions_stay_out(oc: OpenClaw) -> None:
    run = oc.run_book.track(TOOL_RUN, "main")
    feed(oc, [("exec.approval.requested", approval_request("other", "agent:main:work"))])
    assert not any(e.type == "approval.requested" for e in run._events)


async def test_approvals_of_a_suffix_session_stay_out(oc: OpenClaw) -> None:
    run = oc.run_book.track(TOOL_RUN, "main")
    feed(oc, [("exec.approval.requested", approval_request("other", "agent:main:domain"))])
    assert not any(e.type == "approval.requested" for e in run._events)
