"""``openclaw-node`` 0.14 (the npm SDK client) chats through OUR bundled gateway as through
the REAL one: ``chat()`` streams the reply and ``chatSync()`` returns it (against our gateway
they gave an error chunk and ``""`` while ``agent`` was unknown).

The same script runs against each gateway, each with a fake model of its own: connect with
the shared token, ``agents.list()``, ``chat()`` (collecting every chunk), ``agentWait()`` on
that run, ``chatSync()``, and ``chat()`` into a named session. Both gateways must give the
same chunk kinds and the same text (the real gateway's time stamp and runtime line aside).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.chat_trace import bundled_with_fake_llm
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.openclaw_node import ensure_openclaw_node, run_node_script, undecorated
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall

pytestmark = pytest.mark.timeout(300)

SCRIPT = """
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const { OpenClawClient } = require(process.env.OPENCLAW_NODE_PACKAGE);
const [url, token] = process.argv.slice(2);
const client = new OpenClawClient({ url, token, autoReconnect: false });
process.removeAllListeners("warning");
await client.connect();
const agents = await client.agents.list();
const chunks = [];
for await (const chunk of client.chat("hello stream")) chunks.push(chunk);
const waited = await client.agentWait(chunks[0].runId, { timeoutMs: 10000 });
const sync = await client.chatSync("hello sync");
const named = [];
for await (const chunk of client.chat("hello named", { sessionKey: "sdk-side" })) named.push(chunk);
await client.disconnect();
console.log(JSON.stringify({ agents, chunks, waited, sync, named }));
process.exit(0);
"""


async def _both(install: OpenClawInstall, package: Path) -> tuple[Any, Any]:
    factory = GatewayFactory(install)
    with FakeLLM() as real_llm, FakeLLM() as our_llm:
        try:

            async def real_side() -> Any:
                gw = await asyncio.to_thread(factory, fake_llm_port=real_llm.port)
                return await asyncio.to_thread(
                    run_node_script, install, package, SCRIPT, gw.url, gw.token
                )

            async def our_side() -> Any:
                async with bundled_with_fake_llm(
                    our_llm.port, Path(tempfile.mkdtemp(prefix="openclaw-ours-sdk-"))
                ) as gw:
                    return await asyncio.to_thread(
                        run_node_script, install, package, SCRIPT, gw.url, gw.token
                    )

            real, ours = await asyncio.gather(real_side(), our_side())
        finally:
            await asyncio.to_thread(factory.close)
    return real, ours


@pytest.fixture(scope="module")
def runs(openclaw_install: OpenClawInstall) -> tuple[Any, Any]:
    """(real, ours): what the script printed against each gateway."""
    package = ensure_openclaw_node(openclaw_install)

    async def both() -> tuple[Any, Any]:
        async with asyncio.timeout(280):
            return await _both(openclaw_install, package)

    return asyncio.run(both())


def _kinds(chunks: list[dict[str, Any]]) -> list[str]:
    """The chunk kinds in order, repeated text chunks counted once."""
    kinds: list[str] = []
    for chunk in chunks:
        if not (kinds and kinds[-1] == "text" == chunk["type"]):
            kinds.append(chunk["type"])
    return kinds


def _text(chunks: list[dict[str, Any]]) -> str:
    return undecorated("".join(c["text"] for c in chunks if c["type"] == "text"))


@pytest.mark.parametrize("side", ["real", "ours"])
def test_chat_streams_the_reply_and_chat_sync_returns_it(runs: tuple[Any, Any], side: str) -> None:
    """No error chunk; agent_start, the text, agent_end, done; chatSync is the reply."""
    run = runs[0] if side == "real" else runs[1]
    assert _kinds(run["chunks"]) == ["agent_start", "text", "agent_end", "done"]
    assert _text(run["chunks"]) == "FAKE-LLM reply #1: hello stream"
    assert len({c["runId"] for c in run["chunks"]}) == 1
    assert undecorated(run["sync"]) == "FAKE-LLM reply #2: hello sync"
    assert _kinds(run["named"]) == ["agent_start", "text", "agent_end", "done"]
    assert _text(run["named"]) == "FAKE-LLM reply #3: hello named"


def test_both_gateways_give_the_same_conversation(runs: tuple[Any, Any]) -> None:
    """Chunk kinds and texts, agents.list's roster and agentWait's verdict agree."""
    real, ours = runs
    for name in ("chunks", "named"):
        assert _kinds(ours[name]) == _kinds(real[name])
        assert _text(ours[name]) == _text(real[name])
    assert undecorated(ours["sync"]) == undecorated(real["sync"])
    for listed in (real["agents"], ours["agents"]):
        assert listed["defaultId"] == "main" and listed["ownership"] == "sole"
        assert [a["id"] for a in listed["agents"]] == ["main"]
    assert set(ours["agents"]) == set(real["agents"])
    assert set(ours["agents"]["agents"][0]) <= set(real["agents"]["agents"][0])
    for waited in (real["waited"], ours["waited"]):
        assert waited["status"] == "ok" and waited["stopReason"] == "stop"
        assert waited["runId"] == (real if waited is real["waited"] else ours)["chunks"][0]["runId"]
    # The real one shows the reply (terminalReply) only while it still holds the run's
    # receipt (seen in a capture, not in another): ours always shows it.
    assert set(ours["waited"]) - {"terminalReply", "startedAt"} <= set(real["waited"])
