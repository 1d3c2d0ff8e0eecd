"""A message sent with ``queue_mode="steer"`` (what the window's Steer button sends) while a
reply streams, on our bundled gateway (a child process on loopback, the scripted fake model):
its SDK run ends (``Run.wait()`` returns) with the run that took it in, and the chat timeline
built from the live events has the same rows, in the same order, as ``chat.history`` gives."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.sdk import Event, OpenClaw
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM

pytestmark = pytest.mark.timeout(120)

SCOPES = ("operator.read", "operator.write")
TERMINAL = frozenset({"run.completed", "run.failed", "run.cancelled", "run.timed_out"})
#: What the fake answers to ``SLOW:<ms>``: 20 chunks.
SLOW_REPLY = "".join(f"slow{i} " for i in range(20))


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


async def test_a_message_sent_with_steer_ends_with_the_run_that_took_it_in(oc: OpenClaw) -> None:
    first = await oc.sessions.send("main", "SLOW:40 write slowly")
    async with asyncio.timeout(20):
        async for event in first.events():
            if event.type == "assistant.delta":
                break
    steered = await oc.sessions.send("main", "and mind the weather", queue_mode="steer")
    assert steered.absorbed_by == first.run_id
    result = await steered.wait(timeout=30)
    assert result.status == "completed", result
    done = await first.wait(timeout=5)
    assert done.status == "completed", done
    assert done.text == "FAKE-LLM reply #2: and mind the weather"  # the run's last answer
    assert [e.type for e in [e async for e in steered.events()] if e.type in TERMINAL] == [
        "run.completed"
    ]
    history = await oc.sessions.history("main")
    rows = [(m["role"], m.get("idempotencyKey")) for m in history if m["role"] == "user"]
    assert rows == [("user", f"{first.run_id}:user"), ("user", f"{steered.run_id}:user")]
    roles = [m["role"] for m in history]
    assert roles == ["user", "assistant", "user", "assistant"]  # the steered one is answered
    # The reply that was going on when the message came in is kept, not overwritten.
    assert SLOW_REPLY.strip() in json.dumps(history[1]["content"])
    assert oc.runs.active() == []


async def test_the_timeline_of_a_steer_live_is_the_one_history_gives(oc: OpenClaw) -> None:
    """The window's reducer fed the live events of a steer (the first reply, the steered
    message, its answer) gives the rows a restart gives: the steered message above the reply
    that answers it, the first reply kept, nothing twice."""
    timeline = ChatTimeline("main")
    events: asyncio.Queue[Event] = asyncio.Queue()

    async def follow() -> None:
        async for event in oc.events():
            events.put_nowait(event)

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0.05)
    first = await oc.sessions.send("main", "SLOW:40 write slowly")
    timeline.send(first.run_id, "SLOW:40 write slowly")
    ended: set[str] = set()
    steered_id = ""
    async with asyncio.timeout(40):
        while first.run_id not in ended:
            event = await events.get()
            timeline.apply(event)
            if event.type in TERMINAL and event.run_id:
                ended.add(event.run_id)
            if event.type == "assistant.delta" and not steered_id:
                item = timeline.send("steer-1", "and mind the weather")
                assert item.status == "queued"
                timeline.steered("steer-1")
                steered = await oc.sessions.send(
                    "main", "and mind the weather", queue_mode="steer", idempotency_key="steer-1"
                )
                steered_id = steered.run_id
    follower.cancel()
    assert steered_id == "steer-1"
    live = [(i.role, i.text) for i in timeline.items]
    assert [role for role, _ in live] == ["user", "assistant", "user", "assistant"], live
    assert live[0][1] == "SLOW:40 write slowly"
    assert live[1][1].strip() == SLOW_REPLY.strip()
    assert live[2][1] == "and mind the weather"
    assert "and mind the weather" in live[3][1]
    restarted = ChatTimeline("main")
    restarted.merge_history(await oc.sessions.history("main"))
    assert [(i.role, i.text) for i in restarted.items] == live
