"""``system.run`` output streamed as ``node.invoke.progress`` through our bundled gateway.

Our node (the real connection, session and exec handlers, ``exec`` on, a real approvals
file) is approved on the in-process bundled gateway over loopback and runs a real command
that prints a line every 0.2 s. Its progress requests are recorded on the way out (the
node's own send, which still goes to the gateway) with the gateway's answers:

* an operator's plain ``node.invoke``: the chunks are answered ``{ok: true, ignored: true}``
  (nobody consumes them, as on the real gateway) and the result is the usual one;
* the agent's ``node_invoke`` tool: the gateway consumes them (``ignored: false``) and the
  tool call hears the output so far, growing, before it ends.

A raw node gets the real gateway's answers for malformed progress requests.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gateway.chat.tools import AgentTools
from gateway.chat_host import AgentNodeAccess
from gateway.server import GatewayServer
from openclaw_desktop.config import NodeSettings
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.node import InvokeDispatcher, NodeContext, build_dispatcher
from openclaw_desktop.node.progress import INVOKE_PROGRESS
from openclaw_desktop.node.registry import CommandRegistry, CommandSpec
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeInvokeRequest
from openclaw_desktop.protocol.results.nodes import NodeInvokeProgressResult
from openclaw_desktop.sdk.answers import as_wire
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.approved_node import ApprovedNode, approved_node
from tests.helpers.bundled_gateway import bundled_gateway, operator_options, raw_node

pytestmark = pytest.mark.timeout(90)

LINES = 6
SCRIPT = f'for i in $(seq 1 {LINES}); do echo "line $i é€"; sleep 0.2; done'
EXPECTED = "".join(f"line {i} é€\n" for i in range(1, LINES + 1))


@dataclass
class Sent:
    """One progress request the node sent, and what the gateway answered."""

    invoke_id: str
    seq: int
    chunk: str
    answer: NodeInvokeProgressResult
    at: float


@dataclass
class Setup:
    gw: GatewayServer
    node: ApprovedNode
    sent: list[Sent]


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    settings = NodeSettings(exec=True)
    ctx = NodeContext(settings=lambda: settings, exec_approvals_path=tmp_path / "approvals.json")
    async with (
        bundled_gateway(tmp_path / "gw") as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
        approved_node(gw.url, operator, build_dispatcher(ctx), settings) as node,
    ):
        yield Setup(gw, node, _record(node))


def _record(node: ApprovedNode) -> list[Sent]:
    """Record each progress request the node sends and the gateway's answer (the node's own
    send still goes out)."""
    sent: list[Sent] = []
    original = node.session._progress

    async def recorded(
        request: NodeInvokeRequest, seq: int, chunk: str
    ) -> NodeInvokeProgressResult:
        answer = await original(request, seq, chunk)
        sent.append(Sent(request.id, seq, chunk, answer, time.monotonic()))
        return answer

    node.session._progress = recorded  # type: ignore[method-assign]
    return sent


def _check_stream(sent: list[Sent], stdout: str, ended: float) -> None:
    """One invoke's chunks: seq 0.., bounded, the first well before the end, all answered
    before the result, and together a prefix of the result's stdout."""
    assert len({s.invoke_id for s in sent}) == 1, sent
    assert [s.seq for s in sent] == list(range(len(sent)))
    assert len(sent) >= 2, sent  # streamed while running, not once at the end
    assert all(0 < len(s.chunk.encode()) <= 16384 for s in sent)
    assert sent[0].at < ended - 0.4  # the first line came while the command still ran
    assert all(s.at <= ended for s in sent)
    assert stdout.startswith("".join(s.chunk for s in sent))


async def test_an_operator_invoke_streams_chunks_the_gateway_ignores(setup: Setup) -> None:
    params = {"command": ["sh", "-c", SCRIPT], "timeoutMs": 20_000}
    result = await setup.node.invoke("system.run", params)
    ended = time.monotonic()
    payload = result["payload"]
    assert payload["exitCode"] == 0 and payload["success"] is True
    assert payload["stdout"] == EXPECTED and payload["stderr"] == ""
    _check_stream(setup.sent, payload["stdout"], ended)
    assert "".join(s.chunk for s in setup.sent) == EXPECTED  # every byte was within the cap
    assert all(as_wire(s.answer) == {"ok": True, "ignored": True} for s in setup.sent)


async def _streaming_probe(params: Any) -> InvokeResult:
    """A node command that streams its output through the node's own progress port (as
    system.run does): the agent may not run system.run, so the agent path is shown with it."""
    send = INVOKE_PROGRESS.get()
    assert send is not None
    for seq, line in enumerate(PROBE_LINES):
        await send(seq, line)
        await asyncio.sleep(0.2)
    return InvokeResult.success({"stdout": "".join(PROBE_LINES)})


PROBE_LINES = [f"step {i} é€\n" for i in range(1, 5)]


async def test_the_agent_tool_call_hears_a_nodes_output_as_it_comes(tmp_path: Path) -> None:
    """The agent's node_invoke consumes the chunks (answered ignored: false) and the tool
    call hears the output so far, growing, before it ends; system.run itself stays out of
    the agent's reach (an operator's admin command)."""
    registry = CommandRegistry([CommandSpec("probe.stream", "system")])
    dispatcher = InvokeDispatcher(registry, {"probe.stream": _streaming_probe}, dict)
    settings = NodeSettings()
    async with (
        bundled_gateway(tmp_path / "gw", nodes_allow=["probe.stream"]) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
        approved_node(gw.url, operator, dispatcher, settings) as node,
    ):
        sent = _record(node)
        tools = AgentTools(AgentNodeAccess(gw.app), _no_sessions)
        updates: list[tuple[float, dict[str, Any]]] = []
        node_id = node.identity.device_id
        args = {"node": node_id, "command": "probe.stream", "params": {}}
        outcome = await tools.run(
            "node_invoke", args, lambda p: updates.append((time.monotonic(), p))
        )
        ended = time.monotonic()
        assert outcome.is_error is False, outcome
        assert [as_wire(s.answer) for s in sent] == [{"ok": True, "ignored": False}] * len(
            PROBE_LINES
        )
        texts = [p["content"][0]["text"] for _, p in updates]
        expected = ["".join(PROBE_LINES[: i + 1]) for i in range(len(PROBE_LINES))]
        assert texts == expected
        assert all(p["content"][0]["type"] == "text" for _, p in updates)
        assert updates[0][0] < ended - 0.4
        refused = await tools.run("node_invoke", {**args, "command": "system.run"})
        assert refused.is_error and "admin rights" in refused.content[0]["text"]


async def _no_sessions() -> list[dict[str, Any]]:
    return []


async def test_malformed_progress_gets_the_real_gateways_answers(tmp_path: Path) -> None:
    identity = DeviceIdentity.generate()
    me = identity.device_id
    good = {"invokeId": str(uuid.uuid4()), "nodeId": me, "seq": 0, "chunk": "hi"}
    async with (
        bundled_gateway(tmp_path / "gw") as gw,
        raw_node(gw.url, ["system.run"], identity) as node,
    ):
        # an invoke nobody sent (or nobody listens to): accepted and ignored
        assert await node.ok("node.invoke.progress", good) == {"ok": True, "ignored": True}
        assert await node.ok("node.invoke.progress", {**good, "chunk": ""}) == {
            "ok": True,
            "ignored": True,
        }
        cases: list[tuple[Any, str]] = [
            ({**good, "nodeId": "someone-else"}, "nodeId mismatch"),
            ({**good, "chunk": "€" * 6000}, "progress chunk too large"),
            (
                {k: v for k, v in good.items() if k != "invokeId"},
                "invalid node.invoke.progress params: must have required property 'invokeId'",
            ),
            (
                {**good, "seq": -1},
                "invalid node.invoke.progress params: at /seq: must be >= 0",
            ),
            (
                {**good, "extra": 1},
                "invalid node.invoke.progress params: at root: unexpected property 'extra'",
            ),
            (
                {**good, "chunk": "x" * 16385},
                "invalid node.invoke.progress params: at /chunk: "
                "must not have more than 16384 characters",
            ),
        ]
        for params, message in cases:
            error = await node.error("node.invoke.progress", params)
            assert (error["code"], error["message"]) == ("INVALID_REQUEST", message), params


async def test_only_the_output_the_result_keeps_is_streamed(setup: Setup) -> None:
    """300,000 bytes of output: the chunks (each at most 16 KiB) carry exactly the first
    200,000 the result keeps, and the result is marked truncated as before."""
    script = "head -c 300000 /dev/zero | tr '\\0' x"
    result = await setup.node.invoke("system.run", {"command": ["sh", "-c", script]})
    payload = result["payload"]
    assert payload["stdout"] == "x" * 200_000 + "\n... (truncated)"
    assert "".join(s.chunk for s in setup.sent) == "x" * 200_000
    assert [s.seq for s in setup.sent] == list(range(len(setup.sent)))
    assert all(len(s.chunk.encode()) <= 16384 for s in setup.sent)
    assert len(setup.sent) >= 200_000 // 16384 + 1
