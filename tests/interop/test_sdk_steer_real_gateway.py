"""A message sent with ``queue_mode="steer"`` (what the window's Steer button sends) while a
reply streams, on the REAL OpenClaw gateway (npm ``openclaw``, the scripted fake model): its
SDK run ends (``Run.wait()`` returns) and so does the run that was going on, and the
transcript keeps the first reply with the steered message and its answer after it."""

from __future__ import annotations

import asyncio
import json

import pytest

from openclaw_desktop.sdk import DEFAULT_SCOPES, OpenClaw
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory

pytestmark = pytest.mark.timeout(300)

#: Bound of one run (the real gateway spends seconds preparing a first run).
RUN_TIMEOUT_S = 120.0
TERMINAL = frozenset({"run.completed", "run.failed", "run.cancelled", "run.timed_out"})
#: What the fake answers to ``SLOW:<ms>``: 20 chunks.
SLOW_REPLY = "".join(f"slow{i} " for i in range(20))


async def test_a_message_sent_with_steer_ends_on_the_real_gateway(
    real_gateway: GatewayFactory,
) -> None:
    with FakeLLM(chunk_delay_s=0.03) as llm:
        gateway = real_gateway(fake_llm_port=llm.port)
        client = OpenClaw.connect(
            gateway.url,
            token=gateway.token,
            identity="ephemeral",
            scopes=DEFAULT_SCOPES,
            timeout=60,
        )
        async with client:
            first = await client.sessions.send("main", "SLOW:150 write slowly")
            async with asyncio.timeout(RUN_TIMEOUT_S):
                async for event in first.events():
                    if event.type == "assistant.delta":
                        break
            steered = await client.sessions.send("main", "and mind the weather", queue_mode="steer")
            assert steered.absorbed_by == first.run_id
            result = await steered.wait(timeout=RUN_TIMEOUT_S)
            assert result.status == "completed", result
            done = await first.wait(timeout=RUN_TIMEOUT_S)
            assert done.status == "completed", done
            ends = [e.type for e in [e async for e in steered.events()] if e.type in TERMINAL]
            assert ends == ["run.completed"]
            history = await client.sessions.history("main")
            assert client.runs.active() == []
    users = [json.dumps(m["content"]) for m in history if m["role"] == "user"]
    assert len(users) == 2, history
    assert "write slowly" in users[0] and "and mind the weather" in users[1], users
    texts = [json.dumps(m.get("content")) for m in history if m["role"] == "assistant"]
    # The reply going on when the message came in is kept, and the steered one is answered.
    assert any("slow0" in t for t in texts), texts
    assert any("and mind the weather" in t for t in texts), texts
