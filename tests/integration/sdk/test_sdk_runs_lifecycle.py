"""SDK runs against the bundled gateway (a child process on loopback, the scripted fake
model): a steered message's run ends with the run that took it in, finished runs are
forgotten, a run cut by a gateway restart ends interrupted, and the chat timeline built from
the live events of a reply with text, a tool call and a final answer is the one its
``chat.history`` gives."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.sdk import Event, OpenClaw
from openclaw_desktop.sdk.client import FINISHED_KEPT
from openclaw_desktop.sdk.normalize import INTERRUPTED
from openclaw_desktop.sdk.run import Run
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM

pytestmark = pytest.mark.timeout(120)

SCOPES = ("operator.read", "operator.write")


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[BundledGateway]:
    """Our gateway whose default model is the fake one."""
    with FakeLLM() as llm:
        (tmp_path / "gw" / "state").mkdir(parents=True)
        provider = {
            "api": "openai-completions",
            "baseUrl": llm.openai_base_url,
            "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
        }
        document = {"defaultModel": "fake/fake-model", "providers": {"fake": provider}}
        (tmp_path / "gw" / "state" / "providers.json").write_text(json.dumps(document), "utf-8")
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            yield gw
        finally:
            gw.cleanup()


@pytest.fixture
async def oc(gateway: BundledGateway) -> AsyncIterator[OpenClaw]:
    client = OpenClaw.connect(gateway.url, token=gateway.token, identity="ephemeral", scopes=SCOPES)
    async with client:
        yield client


async def first_delta(run: Any) -> None:
    async with asyncio.timeout(20):
        async for event in run.events():
            if event.type == "assistant.delta":
                return


async def test_a_steered_message_ends_with_the_run_that_took_it_in(oc: OpenClaw) -> None:
    first = await oc.sessions.send("main", "SLOW:40 write slowly")
    await first_delta(first)
    steered = await oc.sessions.send("main", "and mind the weather", queue_mode="interrupt")
    assert steered.absorbed_by == first.run_id
    result = await steered.wait(timeout=30)
    assert result.status == "completed"
    assert (await first.wait(timeout=5)).status == "completed"
    events = [e async for e in steered.events()]
    assert events[-1].type == "run.completed"
    # Its own end, as the real gateway sends it when the running turn takes the message in
    # (the SDK ends it with ``absorbedBy`` from the absorbing run only when that never came).
    taken_in = {"runId": steered.run_id, "sessionKey": "agent:main:main", "seq": 1}
    assert events[-1].raw == {**taken_in, "state": "final"}
    history = await oc.sessions.history("main")
    keys = [m.get("idempotencyKey") for m in history if m.get("role") == "user"]
    assert keys == [f"{first.run_id}:user", f"{steered.run_id}:user"]
    assert oc.runs.active() == []


async def test_finished_runs_are_forgotten(oc: OpenClaw) -> None:
    runs = []
    for n in range(FINISHED_KEPT + 8):
        run = await oc.sessions.send("main", f"hello {n}")
        assert (await run.wait(timeout=30)).status == "completed"
        runs.append(run.run_id)
    assert oc.run_book.running == {}
    assert len(oc.run_book.finished) == FINISHED_KEPT
    assert oc.runs.get(runs[0]) is None
    assert oc.runs.get(runs[-1]) is not None
    assert oc._normalizer._items == {}  # per-run stream state goes with the run
    gc.collect()  # and nothing else holds a forgotten run (listeners, tasks, the normalizer)
    alive = [o for o in gc.get_objects() if type(o) is Run and o._sessions is oc.sessions]
    assert len(alive) == FINISHED_KEPT


async def test_a_run_cut_by_a_gateway_restart_ends_interrupted(
    gateway: BundledGateway, oc: OpenClaw
) -> None:
    if os.name != "posix":
        pytest.skip("SIGKILL is POSIX")
    seen: list[Event] = []

    async def follow() -> None:
        async for event in oc.events():
            seen.append(event)

    follower = asyncio.create_task(follow())
    run = await oc.sessions.send("main", "SLOW:300 a long story")
    await first_delta(run)
    assert gateway.proc is not None
    os.killpg(gateway.proc.pid, signal.SIGKILL)
    gateway.proc.wait(10)
    gateway.restart()
    result = await run.wait(timeout=60)
    follower.cancel()
    assert (result.status, result.error) == ("failed", INTERRUPTED)
    ends = [e for e in seen if e.run_id == run.run_id and e.type == "run.failed"]
    assert [e.data["errorKind"] for e in ends] == ["interrupted"]  # readers of events() too


async def test_text_a_tool_and_a_final_answer_live_and_from_history(oc: OpenClaw) -> None:
    """What the window shows while the reply streams is what it shows after a restart."""
    timeline = ChatTimeline("main")
    events: asyncio.Queue[Event] = asyncio.Queue()

    async def follow() -> None:
        async for event in oc.events():
            events.put_nowait(event)

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.05)
    text = "PREAMBLE CALLTOOL:nodes_list:{}"
    run = await oc.sessions.send("main", text)
    timeline.send(run.run_id, text)
    async with asyncio.timeout(30):
        while True:
            event = await events.get()
            timeline.apply(event)
            if event.run_id == run.run_id and event.type == "run.completed":
                break
    follower.cancel()
    live = [(i.key, i.role, i.text, i.status) for i in timeline.items]
    assert [k for k, *_ in live] == [
        f"{run.run_id}:user",
        f"{run.run_id}:assistant",
        f"{run.run_id}:tool:call_fake_1",
        f"{run.run_id}:assistant:1",
    ]
    assert live[1][2] == "Let me look that up first."
    assert live[3][2].startswith("FAKE-LLM tool result:")
    restarted = ChatTimeline("main")
    restarted.merge_history(await oc.sessions.history("main"))
    assert [(i.key, i.role, i.text, i.status) for i in restarted.items] == live


async def test_a_send_repeated_after_its_run_was_forgotten_ends_at_once(oc: OpenClaw) -> None:
    """The same idempotency key again (a message re-sent after a reconnect) once the SDK has
    forgotten its finished run: the gateway acks ``ok`` and sends nothing more, so the run
    ends from the history instead of waiting forever."""
    first = await oc.sessions.send("main", "hello once")
    done = await first.wait(timeout=30)
    assert done.status == "completed"
    assert oc.runs.get(first.run_id) is first  # still findable
    again = await oc.sessions.send("main", "hello once", idempotency_key=first.run_id)
    assert again is first  # the same run, already over
    oc.run_book.finished.clear()  # forgotten, as after FINISHED_KEPT later runs
    repeated = await oc.sessions.send("main", "hello once", idempotency_key=first.run_id)
    assert repeated is not first
    result = await repeated.wait(timeout=10)
    assert (result.status, result.text) == ("completed", done.text)


async def test_a_run_that_ended_unseen_without_a_final_message_ends_on_catch_up(
    gateway: BundledGateway,
) -> None:
    """A run whose end this client missed (it was away) and that stored no final message
    (the model failed before any text): back online, the session's status in
    ``chat.history`` (idle, the run's message stored) ends it, instead of leaving it going
    for ever."""
    other = OpenClaw.connect(gateway.url, token=gateway.token, identity="ephemeral", scopes=SCOPES)
    async with other:
        theirs = await other.sessions.send("main", "FAIL:500 no reply at all")
        assert (await theirs.wait(timeout=30)).status == "failed"
        history = await other.sessions.history("main")
    # The message, and the failure in words (``<runId>:terminal-error``, as the real gateway
    # records it): no reply; catch-up ends the run from that record as failed, never as a
    # reply.
    assert [(m["role"], m.get("stopReason")) for m in history] == [
        ("user", None),
        ("assistant", "error"),
    ]
    oc = OpenClaw.connect(gateway.url, token=gateway.token, identity="ephemeral", scopes=SCOPES)
    missed = oc.run_book.track(theirs.run_id, "main")  # sent, then away until it was over
    async with oc:
        ends: list[Event] = []

        async def follow() -> None:
            async for event in oc.events():
                ends.append(event)

        follower = asyncio.create_task(follow())
        await asyncio.sleep(0.05)
        await oc._catch_up()  # what a reconnect runs
        await asyncio.sleep(0.05)
        follower.cancel()
    assert missed.status == "failed"
    assert [e.type for e in ends if e.run_id == theirs.run_id] == ["run.failed"]
