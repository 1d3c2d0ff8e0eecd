"""Run outcomes (what ``agent`` and ``agent.wait`` wait on) and the ``agent`` answers built
from them: remembered and bounded, waiters woken or timed out without leaving anything, the
reference's status words, and ``agent``'s scope rule."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from gateway.chat.outcomes import RunOutcome, RunOutcomes
from gateway.methods.agent import agent_result, agent_scope, wait_result
from gateway.scopes import ADMIN, WRITE


def outcome(run_id: str = "r1", status: str = "completed", **kw: Any) -> RunOutcome:
    """A finished run with a reply."""
    fields: dict[str, Any] = {
        "run_id": run_id,
        "session_key": "agent:main:main",
        "session_id": "s-1",
        "status": status,
        "stop_reason": "stop",
        "text": "the reply",
        "started_at": 1_000,
        "ended_at": 1_250,
        "provider": "fake",
        "model": "fake-model",
        "input_tokens": 3,
        "output_tokens": 4,
        "model_calls": 1,
    }
    fields.update(kw)
    return RunOutcome(**fields)


async def test_a_waiter_is_woken_by_the_end_and_a_late_one_answered_at_once() -> None:
    outcomes = RunOutcomes()
    waiting = asyncio.create_task(outcomes.wait("r1", 5))
    await asyncio.sleep(0)
    assert outcomes.waiting == 1
    done = outcome()
    outcomes.record(done)
    assert await waiting is done
    assert await outcomes.wait("r1", 0) is done
    assert outcomes.get("r1") is done and outcomes.waiting == 0


async def test_a_wait_that_times_out_or_is_cancelled_leaves_nothing_behind() -> None:
    outcomes = RunOutcomes()
    assert await outcomes.wait("never", 0.01) is None
    task = asyncio.create_task(outcomes.wait("r2", None))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert outcomes.waiting == 0
    outcomes.record(outcome("r2"))  # no waiter left to wake: nothing fails
    assert outcomes.get("r2") is not None


def test_only_the_newest_outcomes_are_kept() -> None:
    outcomes = RunOutcomes(kept=3)
    for index in range(5):
        outcomes.record(outcome(f"r{index}"))
    assert [outcomes.get(f"r{i}") is not None for i in range(5)] == [False, False, True, True, True]


@pytest.mark.parametrize(
    ("status", "words"),
    [
        ("completed", ("ok", "completed")),
        ("failed", ("error", "failed")),
        ("aborted", ("timeout", "aborted")),
    ],
)
def test_the_final_answer_uses_the_reference_words(status: str, words: tuple[str, str]) -> None:
    stop = "aborted" if status == "aborted" else "stop"
    answer = agent_result(outcome(status=status, stop_reason=stop))
    assert (answer["status"], answer["summary"]) == words
    assert ("stopReason" in answer) is (status != "completed")
    assert answer["result"]["payloads"] == [{"text": "the reply", "mediaUrl": None}]
    meta = answer["result"]["meta"]
    assert meta["durationMs"] == 250 and meta["aborted"] is (status == "aborted")
    assert meta["agentMeta"]["usage"]["total"] == 7


def test_a_run_without_text_has_no_payloads_and_the_wait_no_reply() -> None:
    empty = outcome(text="", status="failed", stop_reason="error", error="model down")
    assert agent_result(empty)["result"]["payloads"] == []
    waited = wait_result(empty, live=False)
    assert waited == {
        "runId": "r1",
        "status": "error",
        "endedAt": 1_250,
        "stopReason": "error",
        "livenessState": "working",
        "error": "model down",
    }
    assert wait_result(outcome(), live=True)["startedAt"] == 1_000


@pytest.mark.parametrize(
    ("params", "scope"),
    [
        ({"message": "/new"}, ADMIN),
        ({"message": "/RESET all of it"}, ADMIN),
        ({"message": "/newer"}, WRITE),
        ({"message": "hello /new"}, WRITE),
        ({"message": 3}, WRITE),
        ([], WRITE),
        (None, WRITE),
    ],
)
def test_agent_needs_admin_only_for_a_session_reset(params: Any, scope: str) -> None:
    assert agent_scope(params) == scope
