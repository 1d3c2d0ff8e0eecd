"""``agents.list``, ``agent`` and ``agent.wait`` of the bundled gateway over real loopback
WebSockets, with our fake model server over real HTTP.

``agent`` answers twice like the reference (``accepted``, then the run's result); the error
wordings are the ones the real gateway 2026.9.6 answered for the same params (captured side
by side: see ``tests/interop/test_agent_cli_real_client.py``).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.bundled_gateway import RawClient, raw_operator
from tests.integration.gateway.chat.test_gw_chat_runs import chat_gateway

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("no_ambient_providers")]


async def answers(client: RawClient, request_id: str, timeout: float = 20) -> list[dict[str, Any]]:
    """Every ``res`` frame of ``request_id`` once one that is not ``accepted`` arrived."""
    async with asyncio.timeout(timeout):
        while True:
            frames = [
                f for f in client.frames if f.get("type") == "res" and f.get("id") == request_id
            ]
            if frames and frames[-1].get("payload", {}).get("status") != "accepted":
                return frames
            await asyncio.sleep(0.02)


async def start_agent(client: RawClient, **params: Any) -> tuple[str, str]:
    """Send ``agent`` (a fresh idempotency key unless given); returns (request id, run id)."""
    run_id = params.setdefault("idempotencyKey", str(uuid.uuid4()))
    request_id = client.next_id()
    await client.send({"type": "req", "id": request_id, "method": "agent", "params": params})
    return request_id, run_id


async def run_agent(client: RawClient, **params: Any) -> tuple[str, list[dict[str, Any]]]:
    """An ``agent`` call to its end: (run id, its answers)."""
    request_id, run_id = await start_agent(client, **params)
    return run_id, await answers(client, request_id)


async def test_agent_answers_accepted_then_the_reply_it_streamed(tmp_path: Path) -> None:
    """The run streams agent and chat events like a chat.send run; the second answer carries
    the final text as the CLI prints it, and the transcript has the turn."""
    async with chat_gateway(tmp_path) as chat:
        run_id, frames = await run_agent(
            chat.op, message="hello agent", agentId="main", deliver=False, timeout=600
        )
        accepted, final = [f["payload"] for f in frames]
        assert frames[0]["ok"] and frames[1]["ok"]
        assert set(accepted) == {"runId", "sessionKey", "agentId", "status", "acceptedAt"}
        assert accepted["runId"] == run_id and accepted["status"] == "accepted"
        assert accepted["sessionKey"] == "agent:main:main" and accepted["agentId"] == "main"
        assert final["status"] == "ok" and final["summary"] == "completed"
        chat_final = await chat.finished(run_id)
        text = chat_final["message"]["content"][0]["text"]
        assert text == "FAKE-LLM reply #1: hello agent"
        assert final["result"]["payloads"] == [{"text": text, "mediaUrl": None}]
        meta = final["result"]["meta"]
        assert meta["aborted"] is False and meta["stopReason"] == "stop"
        assert meta["agentMeta"]["provider"] == "fake"
        assert meta["agentMeta"]["model"] == "fake-model"
        assert meta["agentMeta"]["sessionFile"] == "agent:main:main"
        streams = [(e["stream"], e["data"].get("phase")) for e in chat.run_events(run_id, "agent")]
        assert ("lifecycle", "start") in streams and ("lifecycle", "end") in streams
        assert (
            "".join(
                e["data"]["delta"]
                for e in chat.run_events(run_id, "agent")
                if e["stream"] == "assistant"
            )
            == text
        )
        history = await chat.history()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]


async def test_an_agent_call_naming_no_session_gets_one_of_its_own(tmp_path: Path) -> None:
    """Neither sessionKey, sessionId nor agentId (openclaw-node's chat()): a session of its
    own, ``agent:main:explicit:<runId>``, not named in the accepted answer."""
    async with chat_gateway(tmp_path) as chat:
        run_id, frames = await run_agent(chat.op, message="alone")
        assert "sessionKey" not in frames[0]["payload"]
        assert frames[1]["payload"]["status"] == "ok"
        keys = {e["sessionKey"] for e in chat.run_events(run_id)}
        assert keys == {f"agent:main:explicit:{run_id.lower()}"}
        main = await chat.history()
        assert main["messages"] == [], "the main session was not touched"
        _run, frames = await run_agent(chat.op, message="by id", sessionId="s-1")
        assert frames[0]["payload"]["sessionKey"] == "agent:main:explicit:s-1"


async def test_a_resent_key_gets_the_result_again_without_a_second_run(tmp_path: Path) -> None:
    """The same idempotency key after the end: one answer, the same result; the model was
    asked once. A key first used by chat.send is answered from that run."""
    async with chat_gateway(tmp_path) as chat:
        run_id, first = await run_agent(chat.op, message="once", sessionKey="main")
        _same, again = await run_agent(chat.op, message="once", idempotencyKey=run_id)
        assert len(again) == 1
        assert again[0]["payload"] == first[1]["payload"]
        assert len(chat.llm.bodies("/chat/completions")) == 1
        sent = await chat.send("by chat.send")
        await chat.finished(sent)
        _key, frames = await run_agent(chat.op, message="by chat.send", idempotencyKey=sent)
        assert len(frames) == 1
        assert frames[0]["payload"]["result"]["payloads"][0]["text"].endswith("by chat.send")


async def test_agent_wait_follows_runs_of_agent_and_chat_send(tmp_path: Path) -> None:
    """While it runs: timeoutMs 0 says timeout, a longer wait the end (with startedAt);
    afterwards the end at once (without startedAt); an unknown run times out."""
    async with chat_gateway(tmp_path) as chat:
        run_id = await chat.send("SLOW:60")
        zero = await chat.op.ok("agent.wait", {"runId": run_id, "timeoutMs": 0})
        assert zero == {"runId": run_id, "status": "timeout"}
        live = await chat.op.ok("agent.wait", {"runId": run_id, "timeoutMs": 20_000}, 25)
        assert live["status"] == "ok" and live["stopReason"] == "stop"
        assert live["startedAt"] <= live["endedAt"]
        assert live["terminalReply"]["disposition"] == "visible"
        after = await chat.op.ok("agent.wait", {"runId": run_id})
        assert "startedAt" not in after and after["endedAt"] == live["endedAt"]
        unknown = await chat.op.ok("agent.wait", {"runId": "never", "timeoutMs": 50})
        assert unknown == {"runId": "never", "status": "timeout"}
        assert chat.gw.app.chat is not None
        assert chat.gw.app.chat.outcomes.waiting == 0


async def test_a_run_over_its_timeout_is_stopped_and_answered_so(tmp_path: Path) -> None:
    """``timeout`` seconds pass with the model silent: the run is stopped (chat aborted)
    and the answer says timeout/aborted."""
    async with chat_gateway(tmp_path) as chat:
        run_id, frames = await run_agent(chat.op, message="HANG", sessionKey="main", timeout=1)
        final = frames[-1]["payload"]
        assert (final["status"], final["summary"]) == ("timeout", "aborted")
        assert final["stopReason"] == "aborted"
        assert final["result"]["meta"]["aborted"] is True
        assert (await chat.finished(run_id))["state"] == "aborted"


async def test_a_failed_model_call_is_answered_as_failed(tmp_path: Path) -> None:
    """The model answers HTTP 500: accepted, then status error / summary failed with the
    run's error words (the CLI prints them and exits 1); agent.wait says error too."""
    async with chat_gateway(tmp_path) as chat:
        run_id, frames = await run_agent(chat.op, message="FAIL:500", sessionKey="main")
        assert frames[0]["payload"]["status"] == "accepted"
        final = frames[-1]["payload"]
        assert (final["status"], final["summary"], final["stopReason"]) == (
            "error",
            "failed",
            "error",
        )
        error = await chat.finished(run_id)
        assert error["state"] == "error"
        assert final["result"]["meta"]["error"] == {"message": error["errorMessage"]}
        waited = await chat.op.ok("agent.wait", {"runId": run_id})
        assert (waited["status"], waited["error"]) == ("error", error["errorMessage"])


async def test_the_caller_leaving_does_not_stop_the_run(tmp_path: Path) -> None:
    """The agent caller's connection closes mid-run: the run ends normally for the others,
    and nothing is left waiting."""
    async with chat_gateway(tmp_path) as chat:
        async with raw_operator(chat.gw.url) as caller:
            _request, run_id = await start_agent(caller, message="SLOW:40", sessionKey="main")
            await caller.wait_event("agent", lambda e: e["payload"]["runId"] == run_id)
        final = await chat.finished(run_id)
        assert final["state"] == "final"
        service = chat.gw.app.chat
        assert service is not None and service.outcomes.waiting == 0
        assert (await chat.op.ok("agent.wait", {"runId": run_id}))["status"] == "ok"


async def test_agents_list_and_bad_params_as_the_reference(tmp_path: Path) -> None:
    """The one agent with its model; closed schemas with the reference's wording; scopes."""
    async with chat_gateway(tmp_path) as chat:
        listed = await chat.op.ok("agents.list", {})
        assert listed == {
            "defaultId": "main",
            "ownership": "sole",
            "selectionRequired": False,
            "mainKey": "main",
            "scope": "per-sender",
            "agents": [
                {"id": "main", "thinkingDefault": "off", "model": {"primary": "fake/fake-model"}}
            ],
        }
        cases: list[tuple[str, dict[str, Any], str]] = [
            (
                "agents.list",
                {"x": 1},
                "invalid agents.list params: at root: unexpected property 'x'",
            ),
            (
                "agent",
                {"message": "hi"},
                "invalid agent params: must have required property 'idempotencyKey'",
            ),
            (
                "agent",
                {"message": "", "idempotencyKey": "k1"},
                "invalid agent params: at /message: must not have fewer than 1 characters",
            ),
            (
                "agent",
                {"message": "hi", "idempotencyKey": "k2", "bogus": 1},
                "invalid agent params: at root: unexpected property 'bogus'",
            ),
            (
                "agent",
                {"message": "hi", "idempotencyKey": "k3", "timeout": "x"},
                "invalid agent params: at /timeout: must be integer",
            ),
            (
                "agent",
                {"message": "hi", "idempotencyKey": "k4", "agentId": "nope"},
                'invalid agent params: unknown agent id "nope"',
            ),
            ("agent.wait", {}, "invalid agent.wait params: must have required property 'runId'"),
            (
                "agent.wait",
                {"runId": "x", "timeoutMs": -1},
                "invalid agent.wait params: at /timeoutMs: must be >= 0",
            ),
        ]
        for method, params, message in cases:
            error = await chat.op.error(method, params)
            assert (error["code"], error["message"]) == ("INVALID_REQUEST", message), method
        assert chat.llm.bodies("/chat/completions") == [], "nothing refused reached the model"
        async with raw_operator(chat.gw.url, scopes=["operator.read"]) as reader:
            assert (await reader.ok("agents.list", {}))["defaultId"] == "main"
            refused = await reader.error("agent", {"message": "hi", "idempotencyKey": "r1"})
            assert refused["message"] == "missing scope: operator.write"
        async with raw_operator(chat.gw.url, scopes=["operator.write"]) as writer:
            reset = await writer.error("agent", {"message": "/new", "idempotencyKey": "r2"})
            assert reset["message"] == "missing scope: operator.admin"
