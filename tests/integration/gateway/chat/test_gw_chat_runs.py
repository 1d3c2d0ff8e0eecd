"""Chat runs of the bundled gateway over real loopback WebSockets, with our fake model server
over real HTTP and a real node on our client library for tool calls."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gateway.server import GatewayServer
from openclaw_desktop.node import InvokeResult
from tests.helpers.bundled_gateway import (
    NodeHarness,
    RawClient,
    bundled_gateway,
    raw_operator,
    start_node,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.ports import free_port

pytestmark = [pytest.mark.timeout(60), pytest.mark.usefixtures("no_ambient_providers")]

TERMINAL = ("final", "aborted", "error")


def providers_json(
    state_dir: Path,
    base_url: str,
    *,
    accounts: list[dict[str, Any]] | None = None,
    context_window: int = 128_000,
    max_tokens: int = 4096,
    vision: bool = False,
) -> None:
    """Point the gateway at the fake model."""
    provider: dict[str, Any] = {
        "api": "openai-completions",
        "baseUrl": base_url,
        "models": [
            {
                "id": "fake-model",
                "name": "Fake Model",
                "contextWindow": context_window,
                "maxTokens": max_tokens,
                "vision": vision,
            }
        ],
    }
    if accounts is not None:
        provider["accounts"] = accounts
    state_dir.mkdir(parents=True, exist_ok=True)
    document = {"defaultModel": "fake/fake-model", "providers": {"fake": provider}}
    (state_dir / "providers.json").write_text(json.dumps(document), encoding="utf-8")


@dataclass
class Chat:
    """A gateway with the fake model and an operator advertising tool-events."""

    gw: GatewayServer
    llm: FakeLLM
    op: RawClient

    async def send(self, message: str, **extra: Any) -> str:
        """chat.send to the main session; returns the run id (asserts the ack)."""
        run_id = extra.pop("idempotencyKey", None) or str(uuid.uuid4())
        params = {"sessionKey": "main", "message": message, "idempotencyKey": run_id, **extra}
        ack = await self.op.ok("chat.send", params)
        assert ack == {"runId": run_id, "status": "started"}
        return run_id

    async def finished(self, run_id: str, timeout: float = 20) -> dict[str, Any]:
        """The terminal chat event of a run."""
        frame = await self.op.wait_event(
            "chat",
            lambda e: e["payload"]["runId"] == run_id and e["payload"]["state"] in TERMINAL,
            timeout,
        )
        payload: dict[str, Any] = frame["payload"]
        return payload

    def run_events(self, run_id: str, name: str = "chat") -> list[dict[str, Any]]:
        """Payloads of one run's events."""
        return [
            e["payload"] for e in self.op.events_named(name) if e["payload"].get("runId") == run_id
        ]

    async def history(self, **params: Any) -> dict[str, Any]:
        """chat.history of the main session."""
        result: dict[str, Any] = await self.op.ok("chat.history", {"sessionKey": "main", **params})
        return result


@contextlib.asynccontextmanager
async def chat_gateway(
    tmp_path: Path,
    *,
    llm: FakeLLM | None = None,
    allow: tuple[str, ...] = ("probe.echo",),
    **provider: Any,
) -> AsyncIterator[Chat]:
    """The bundled gateway in-process with providers.json pointing at a fake model."""
    with contextlib.ExitStack() as stack:
        fake = llm or stack.enter_context(FakeLLM())
        state = tmp_path / "state"
        providers_json(state, provider.pop("base_url", fake.openai_base_url), **provider)
        async with (
            bundled_gateway(state, nodes_allow=list(allow)) as gw,
            raw_operator(gw.url, caps=["tool-events"]) as op,
        ):
            yield Chat(gw, fake, op)


async def approved_node(chat: Chat, **kw: Any) -> NodeHarness:
    """A node on our client library (probe.echo etc. unless ``handlers``), surface approved."""
    node = start_node(chat.gw.url, **kw)
    event = await chat.op.wait_event(
        "node.pair.requested", lambda e: e["payload"]["nodeId"] == node.node_id
    )
    await chat.op.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
    async with asyncio.timeout(10):
        while not node.surface_resolved():
            await asyncio.sleep(0.02)
    return node


async def test_reply_streams_idempotently_and_is_recorded(tmp_path: Path) -> None:
    """Ack at once; deltas add up to the final text; re-sends say in_flight, then ok."""
    async with chat_gateway(tmp_path) as chat:
        run_id = await chat.send("SLOW:30")
        again = {"sessionKey": "main", "message": "SLOW:30", "idempotencyKey": run_id}
        assert (await chat.op.ok("chat.send", again))["status"] == "in_flight"
        final = await chat.finished(run_id)
        assert final["state"] == "final" and final["stopReason"] == "stop"
        assert (await chat.op.ok("chat.send", again))["status"] == "ok"
        events = chat.run_events(run_id)
        deltas = [e for e in events if e["state"] == "delta"]
        text = final["message"]["content"][0]["text"]
        assert "".join(d["deltaText"] for d in deltas) == text
        assert 1 <= len(deltas) < 20, "deltas are coalesced"
        assert {e["sessionKey"] for e in events} == {"agent:main:main"}
        phases = [e["phase"] for e in events if e["state"] == "status"]
        assert phases == ["preparing_workspace", "preparing_context", "starting_model"]
        assert sorted(e["seq"] for e in events) == [e["seq"] for e in events]
        agent_seqs = [p["seq"] for p in chat.run_events(run_id, "agent")]
        assert agent_seqs == sorted(agent_seqs)
        assert {e["seq"] for e in deltas} <= set(agent_seqs), "deltas share the agent seq"
        history = await chat.history()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
        assert history["messages"][1]["content"][0]["text"] == text
        assert history["messages"][1]["stopReason"] == "stop"
        assert chat.llm.bodies("/chat/completions")[0]["stream"] is True


async def test_tool_call_invokes_a_real_node(tmp_path: Path) -> None:
    """The model's node_invoke reaches the node through policy; calls and results are in the
    transcript; tool streams go only to tool-events clients."""
    async with chat_gateway(tmp_path) as chat:
        node = await approved_node(chat)
        try:
            async with raw_operator(chat.gw.url) as plain:
                args = {"node": "test-node", "command": "probe.echo", "params": {"x": 1}}
                run_id = await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}")
                final = await chat.finished(run_id)
                assert final["state"] == "final"
                assert node.handled == ["probe.echo"]
                assert '"echo"' in final["message"]["content"][0]["text"]
                streams = [e["stream"] for e in chat.run_events(run_id, "agent")]
                assert streams.count("item") == 2 and streams.count("tool") == 2
                tool_events = [
                    e
                    for e in plain.events_named("agent")
                    if e["payload"]["stream"] in ("item", "tool")
                ]
                assert tool_events == [], "no tool-events cap, no tool streams"
                assert plain.events_named("chat"), "chat events go to every reader"
            history = await chat.history()
            roles = [m["role"] for m in history["messages"]]
            assert roles == ["user", "assistant", "toolResult", "assistant"]
            call = history["messages"][1]["content"][0]
            assert call["type"] == "toolCall" and call["name"] == "node_invoke"
            result = history["messages"][2]
            assert result["toolCallId"] == call["id"] and result["isError"] is False
        finally:
            await node.aclose()


async def test_gated_and_vanished_nodes_answer_the_model_not_the_run(tmp_path: Path) -> None:
    """A command outside the allowlist, an unknown node and invalid tool JSON come back to the
    model as tool errors; the run still ends with a reply."""
    async with chat_gateway(tmp_path) as chat:
        node = await approved_node(chat)
        try:
            cases = [
                ({"node": "test-node", "command": "probe.fail"}, "not allowed"),
                ({"node": "gone", "command": "probe.echo"}, "no connected node named 'gone'"),
            ]
            for args, expected in cases:
                run_id = await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}")
                assert (await chat.finished(run_id))["state"] == "final"
                history = await chat.history()
                result = history["messages"][-2]
                assert result["role"] == "toolResult" and result["isError"] is True
                assert expected in result["content"][0]["text"]
            run_id = await chat.send("BADJSON:node_invoke")
            assert (await chat.finished(run_id))["state"] == "final"
            result = (await chat.history())["messages"][-2]
            assert result["isError"] is True and "invalid JSON" in result["content"][0]["text"]
            assert node.handled == []
        finally:
            await node.aclose()


async def test_abort_keeps_the_partial_reply(tmp_path: Path) -> None:
    """chat.abort stops the stream at once; the partial text is kept; the session goes on."""
    async with chat_gateway(tmp_path) as chat:
        run_id = await chat.send("SLOW:150")
        await chat.op.wait_event(
            "chat", lambda e: e["payload"]["runId"] == run_id and e["payload"]["state"] == "delta"
        )
        result = await chat.op.ok("chat.abort", {"sessionKey": "main"})
        assert result == {"ok": True, "aborted": True, "runIds": [run_id]}
        aborted = await chat.finished(run_id, timeout=5)
        assert aborted["state"] == "aborted"
        partial = aborted["message"]["content"][0]["text"]
        assert partial and len(partial) < len("FAKE-LLM reply") + 200
        history = await chat.history()
        assert history["messages"][-1]["stopReason"] == "aborted"
        assert history["messages"][-1]["content"][0]["text"] == partial
        nothing = await chat.op.ok("chat.abort", {"sessionKey": "main"})
        assert nothing == {"ok": True, "aborted": False, "runIds": []}
        assert (await chat.finished(await chat.send("after the abort")))["state"] == "final"


async def test_follow_ups_queue_and_interrupt_steers(tmp_path: Path) -> None:
    """A second send waits for the first run; queueMode interrupt joins the running turn."""
    async with chat_gateway(tmp_path) as chat:
        first = await chat.send("SLOW:40")
        steer_id = await chat.send("steer me", queueMode="interrupt")
        second = await chat.send("second")
        first_final = await chat.finished(first)
        await chat.finished(second)
        first_end = chat.op.events.index(
            next(
                e
                for e in chat.op.events
                if e.get("payload", {}).get("runId") == first
                and e["payload"].get("state") == "final"
            )
        )
        second_start = chat.op.events.index(
            next(
                e
                for e in chat.op.events
                if e.get("event") == "chat" and e["payload"]["runId"] == second
            )
        )
        assert second_start > first_end, "the follow-up ran after the first run"
        assert "steer me" in first_final["message"]["content"][0]["text"]
        # A steer is part of the running turn: its own run ends when it is taken in, with
        # the one event the real gateway sends for it.
        taken_in = {"runId": steer_id, "sessionKey": "agent:main:main", "seq": 1, "state": "final"}
        assert chat.run_events(steer_id) == [taken_in]
        assert chat.run_events(steer_id, "agent") == []
        roles = [
            (m["role"], m.get("content") if m["role"] == "user" else None)
            for m in (await chat.history())["messages"]
        ]
        assert [r for r in roles if r[0] == "user"] == [
            ("user", "SLOW:40"),
            ("user", "steer me"),
            ("user", "second"),
        ]


async def test_failover_to_the_next_account(tmp_path: Path) -> None:
    """A 401 on the first account fails over to the second, invisibly to the session."""
    with FakeLLM(key_status={"sk-bad": 401}) as llm:
        accounts = [{"apiKey": "sk-bad"}, {"apiKey": "sk-good"}]
        async with chat_gateway(tmp_path, llm=llm, accounts=accounts) as chat:
            final = await chat.finished(await chat.send("hello"))
            assert final["state"] == "final"
            keys = [r.api_key for r in llm.requests if r.path.endswith("/chat/completions")]
            assert keys == ["sk-bad", "sk-good"]


@pytest.mark.parametrize(
    ("message", "kind"),
    [("FAIL:429", "rate_limit"), ("FAIL:context", "context_length"), ("FAIL:500", "unknown")],
)
async def test_provider_errors_end_the_run_with_an_error_kind(
    tmp_path: Path, message: str, kind: str
) -> None:
    """Provider failures become a chat error event with the right errorKind, not a hang."""
    async with chat_gateway(tmp_path) as chat:
        error = await chat.finished(await chat.send(message))
        assert error["state"] == "error"
        assert error["errorKind"] == kind
        assert error["errorMessage"]
        if kind == "rate_limit":
            # The account waits out Retry-After: the model is not asked, and the run fails
            # in the rate limit's words (the reference's; no "cooling down" of our own).
            asked = len(chat.llm.requests)
            cooling = await chat.finished(await chat.send("too soon"))
            assert len(chat.llm.requests) == asked, "the account waits out Retry-After"
            assert "(rate limited, HTTP 429)" in cooling["errorMessage"], cooling
            await asyncio.sleep(1.2)  # the fake's Retry-After: 1
        assert (await chat.finished(await chat.send("still usable")))["state"] == "final"


async def test_provider_down_is_an_error_quickly(tmp_path: Path) -> None:
    """Nothing listening at the provider's address: an error event within a bounded time."""
    async with chat_gateway(tmp_path, base_url=f"http://127.0.0.1:{free_port()}/v1") as chat:
        loop = asyncio.get_running_loop()
        started = loop.time()
        error = await chat.finished(await chat.send("anyone there?"), timeout=30)
        assert error["state"] == "error"
        assert loop.time() - started < 25


async def test_history_bounds_and_the_oversized_placeholder(tmp_path: Path) -> None:
    """limit keeps the tail; a message over maxChars is replaced; chat.message.get has it whole."""
    async with chat_gateway(tmp_path) as chat:
        missing = await chat.op.error("chat.inject", {"sessionKey": "main", "message": "n"})
        assert missing["message"] == "session not found"
        await chat.op.ok("sessions.create", {"key": "main"})
        big = "x" * 50_000
        injected = await chat.op.ok("chat.inject", {"sessionKey": "main", "message": big})
        for n in range(3):
            await chat.op.ok("chat.inject", {"sessionKey": "main", "message": f"note {n}"})
        history = await chat.history(limit=2)
        assert [m["content"][0]["text"] for m in history["messages"]] == ["note 1", "note 2"]
        assert history["hasMore"] is True and history["totalMessages"] == 4
        bounded = await chat.history(maxChars=1000)
        first = bounded["messages"][0]
        assert first["content"][0]["text"] == "[chat.history omitted: message too large]"
        assert first["__openclaw"]["id"] == injected["messageId"]
        whole = await chat.op.ok(
            "chat.message.get", {"sessionKey": "main", "messageId": injected["messageId"]}
        )
        assert whole["ok"] is True and whole["message"]["content"][0]["text"] == big
        missing = await chat.op.ok("chat.message.get", {"sessionKey": "main", "messageId": "nope"})
        assert missing == {"ok": False, "unavailableReason": "not_found"}


async def test_bad_input_is_refused_and_loses_nothing(tmp_path: Path) -> None:
    """Malformed keys, attachments and oversized images: INVALID_REQUEST; history intact."""
    async with chat_gateway(tmp_path) as chat:
        await chat.finished(await chat.send("keep me"))
        image = {"mimeType": "image/png", "content": base64.b64encode(b"x" * 6_300_000).decode()}
        cases = [
            ({"sessionKey": "agent::x"}, "invalid sessionKey"),
            ({"attachments": [{"mimeType": "image/png", "content": "%%%"}]}, "not valid base64"),
            ({"attachments": ["nope"]}, "at /attachments/0: must be object"),
            ({"attachments": [image]}, "images may be at most 6291456 bytes"),
            ({"message": "   "}, "message or attachments required"),
        ]
        for extra, expected in cases:
            params = {
                "sessionKey": "main",
                "message": "hi",
                "idempotencyKey": str(uuid.uuid4()),
                **extra,
            }
            error = await chat.op.error("chat.send", params)
            assert error["code"] == "INVALID_REQUEST", error
            assert expected in error["message"], error
        history = await chat.history()
        assert [m["role"] for m in history["messages"]] == ["user", "assistant"]


async def test_messages_too_large_for_the_transcript_are_refused_before_the_ack(
    tmp_path: Path,
) -> None:
    """A chat.send (text, or images within the attachment limits) or chat.inject that would
    not fit in one 16 MiB transcript line is refused at once, with the limit, and no run
    starts; the session takes the next message."""
    limit = 16 * 1024 * 1024
    async with chat_gateway(tmp_path) as chat:
        await chat.finished(await chat.send("keep me"))
        big_image = base64.b64encode(b"x" * 6_291_456).decode()
        image = {"mimeType": "image/png", "content": big_image}
        for extra in ({"message": "x" * limit}, {"attachments": [image, image]}):
            run_id = str(uuid.uuid4())
            params = {"sessionKey": "main", "message": "hi", "idempotencyKey": run_id, **extra}
            error = await chat.op.error("chat.send", params, timeout=30)
            assert error["code"] == "INVALID_REQUEST", error
            assert f"the limit is {limit} bytes" in error["message"], error
            assert error["details"]["limitBytes"] == limit
            assert error["details"]["sizeBytes"] > limit
            assert chat.run_events(run_id) == [], "a refused message starts no run"
        inject = {"sessionKey": "main", "message": "y" * limit}
        error = await chat.op.error("chat.inject", inject, timeout=30)
        assert error["code"] == "INVALID_REQUEST", error
        assert error["details"]["limitBytes"] == limit
        await chat.finished(await chat.send("still here"))
        history = await chat.history()
        users = [m["content"] for m in history["messages"] if m["role"] == "user"]
        assert users == ["keep me", "still here"]


async def test_offline_mode_explains_and_slash_commands_work(tmp_path: Path) -> None:
    """No provider: an honest reply; /nodes and /invoke still reach the nodes."""
    state = tmp_path / "state"
    async with (
        bundled_gateway(state, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as op,
    ):
        chat = Chat(gw, None, op)  # type: ignore[arg-type]
        node = await approved_node(chat)
        try:
            offline = await chat.finished(await chat.send("hello?"))
            assert "No model provider is configured" in offline["message"]["content"][0]["text"]
            listed = await chat.finished(await chat.send("/nodes"))
            assert "probe.echo" in listed["message"]["content"][0]["text"]
            echoed = await chat.finished(await chat.send('/invoke test-node probe.echo {"a": 1}'))
            assert '"a": 1' in echoed["message"]["content"][0]["text"]
            bad = await chat.finished(await chat.send("/invoke test-node probe.echo {nope"))
            assert "not valid JSON" in bad["message"]["content"][0]["text"]
            assert node.handled == ["probe.echo"]
            status = await op.ok("models.authStatus", {})
            assert status["offline"] is True
        finally:
            await node.aclose()


async def test_sessions_methods(tmp_path: Path) -> None:
    """create / list (hasActiveRun) / patch (model, thinking) / reset / delete."""
    async with chat_gateway(tmp_path) as chat:
        created = await chat.op.ok("sessions.create", {"label": "Work"})
        key = created["key"]
        assert key.startswith("agent:main:dashboard:")
        run_id = str(uuid.uuid4())
        await chat.op.ok(
            "chat.send", {"sessionKey": key, "message": "SLOW:40", "idempotencyKey": run_id}
        )
        listed = await chat.op.ok("sessions.list", {})
        row = next(s for s in listed["sessions"] if s["key"] == key)
        assert row["hasActiveRun"] is True and row["activeRunIds"] == [run_id]
        assert row["label"] == "Work"
        await chat.finished(run_id)
        patched = await chat.op.ok(
            "sessions.patch", {"key": key, "model": "fake-model", "thinkingLevel": "low"}
        )
        assert (
            patched["entry"]["model"] == "fake-model" and patched["entry"]["thinkingLevel"] == "low"
        )
        unknown = await chat.op.error("sessions.patch", {"key": key, "model": "gpt-99"})
        assert "unknown model 'gpt-99'" in unknown["message"]
        before = patched["entry"]["sessionId"]
        reset = await chat.op.ok("sessions.reset", {"key": key})
        assert reset["entry"]["sessionId"] != before
        empty = await chat.op.ok("chat.history", {"sessionKey": key})
        assert empty["messages"] == []
        assert (await chat.op.ok("sessions.delete", {"key": key}))["deleted"] is True
        keys = [s["key"] for s in (await chat.op.ok("sessions.list", {}))["sessions"]]
        assert key not in keys
        models = await chat.op.ok("models.list", {})
        assert models["models"][0]["id"] == "fake-model"
        assert models["models"][0]["tags"] == ["default"]


async def test_auto_compaction_keeps_the_originals(tmp_path: Path) -> None:
    """Over the model's window, older turns are summarized; the transcript keeps them."""
    async with chat_gateway(tmp_path, context_window=3000, max_tokens=200) as chat:
        for n in range(6):
            await chat.finished(await chat.send(f"message {n} " + "words " * 250))
        compacted = chat.op.events_named("session.compacted")
        assert compacted, "a session.compacted event"
        assert compacted[0]["payload"]["compactedMessages"] > 0
        systems = [
            b["messages"][0].get("content", "") for b in chat.llm.bodies("/chat/completions")
        ]
        assert any("You compact a conversation" in str(s) for s in systems)
        history = await chat.history()
        users = [m for m in history["messages"] if m["role"] == "user"]
        assert len(users) == 6, "the originals stay in the transcript"
        last = chat.llm.bodies("/chat/completions")[-1]["messages"]
        assert any("[Summary of the earlier conversation]" in str(m.get("content")) for m in last)


#: A 1x1 PNG.
PNG_1PX = "".join(
    (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA",
        "hKmMIQAAAABJRU5ErkJggg==",
    )
)


async def test_images_reach_a_vision_model_and_the_prompt_names_the_nodes(tmp_path: Path) -> None:
    """camera.snap's JPEG goes to a vision model as an image; the system prompt lists the
    connected nodes and their commands."""

    async def snap(params: Any) -> InvokeResult:
        return InvokeResult.success({"format": "jpg", "base64": PNG_1PX, "width": 1, "height": 1})

    async with chat_gateway(tmp_path, allow=("camera.snap",), vision=True) as chat:
        node = await approved_node(chat, handlers={"camera.snap": ("camera", snap)})
        try:
            args = {"node": "test-node", "command": "camera.snap"}
            final = await chat.finished(await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}"))
            assert final["state"] == "final"
            first, second = chat.llm.bodies("/chat/completions")[-2:]
            system = first["messages"][0]["content"]
            assert "test-node" in system and "camera.snap" in system
            text = json.dumps(second["messages"])
            assert PNG_1PX in text, "the photo went to the model"
        finally:
            await node.aclose()


async def test_abort_during_a_tool_call_cancels_it_on_the_node(tmp_path: Path) -> None:
    """An abort while a node command runs sends node.invoke.cancel and ends the run."""
    started = asyncio.Event()

    async def slow(params: Any) -> InvokeResult:
        started.set()
        await asyncio.sleep(30)
        return InvokeResult.success({"late": True})

    async with chat_gateway(tmp_path, allow=("probe.slow",)) as chat:
        node = await approved_node(chat, handlers={"probe.slow": ("probe", slow)})
        try:
            args = {"node": "test-node", "command": "probe.slow"}
            run_id = await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}")
            async with asyncio.timeout(10):
                await started.wait()
            await chat.op.ok("chat.abort", {"sessionKey": "main", "runId": run_id})
            assert (await chat.finished(run_id, timeout=5))["state"] == "aborted"
            async with asyncio.timeout(5):
                while not any(e.event == "node.invoke.cancel" for e in node.events):
                    await asyncio.sleep(0.02)
            follow = await chat.finished(await chat.send("are you there"))
            assert follow["state"] == "final", (
                "the interrupted tool call does not break the session"
            )
        finally:
            await node.aclose()


async def test_tool_calls_time_out_and_slash_snap_and_notify_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node command slower than the tool timeout comes back to the model as an error;
    /snap and /notify reach the node offering them."""
    import gateway.chat.tools as tools_module

    monkeypatch.setattr(tools_module, "TOOL_TIMEOUT_S", 0.5)

    async def slow(params: Any) -> InvokeResult:
        await asyncio.sleep(5)
        return InvokeResult.success({"late": True})

    async def snap(params: Any) -> InvokeResult:
        return InvokeResult.success({"format": "jpg", "base64": PNG_1PX, "width": 1, "height": 1})

    async def notify(params: Any) -> InvokeResult:
        return InvokeResult.success(
            {"sent": True, "title": params.get("title"), "body": params.get("body")}
        )

    handlers = {
        "probe.slow": ("probe", slow),
        "camera.snap": ("camera", snap),
        "system.notify": ("system", notify),
    }
    allow = ("probe.slow", "camera.snap", "system.notify")
    async with chat_gateway(tmp_path, allow=allow) as chat:
        node = await approved_node(chat, handlers=handlers)
        try:
            args = {"node": "test-node", "command": "probe.slow"}
            final = await chat.finished(await chat.send(f"CALLTOOL:node_invoke:{json.dumps(args)}"))
            assert final["state"] == "final"
            result = (await chat.history())["messages"][-2]
            assert result["isError"] is True and "timed out" in result["content"][0]["text"]
            snapped = await chat.finished(await chat.send("/snap"))
            assert "[image, " in snapped["message"]["content"][0]["text"]
            notified = await chat.finished(await chat.send("/notify dinner is ready"))
            assert '"body": "dinner is ready"' in notified["message"]["content"][0]["text"]
            assert node.handled == ["probe.slow", "camera.snap", "system.notify"]
        finally:
            await node.aclose()


async def test_reasoning_streams_as_thinking_and_is_kept(tmp_path: Path) -> None:
    """A model's reasoning goes out as agent ``thinking`` events (cumulative text and delta,
    as the real gateway sends them) and is kept as a thinking block in the transcript."""
    async with chat_gateway(tmp_path) as chat:
        run_id = await chat.send("THINK about it")
        assert (await chat.finished(run_id))["state"] == "final"
        thinking = [e for e in chat.run_events(run_id, "agent") if e["stream"] == "thinking"]
        assert thinking, "thinking events"
        assert "".join(e["data"]["delta"] for e in thinking) == thinking[-1]["data"]["text"]
        reply = (await chat.history())["messages"][-1]
        assert reply["content"][0]["type"] == "thinking"
        assert reply["content"][0]["thinking"] == thinking[-1]["data"]["text"]


async def test_text_files_reach_the_model_as_text_and_others_by_name(tmp_path: Path) -> None:
    """A text attachment's content goes into the prompt; a binary one is named with its
    size (the model is told it exists instead of getting bytes it cannot read)."""
    notes = base64.b64encode(b"the launch code is mauve").decode()
    blob = base64.b64encode(bytes(range(256))).decode()
    attachments = [
        {"type": "file", "mimeType": "text/plain", "fileName": "notes.txt", "content": notes},
        {"type": "file", "mimeType": "application/zip", "fileName": "a.zip", "content": blob},
    ]
    async with chat_gateway(tmp_path) as chat:
        final = await chat.finished(await chat.send("read these", attachments=attachments))
        assert final["state"] == "final"
        prompt = json.dumps(chat.llm.bodies("/chat/completions")[-1]["messages"])
        assert "the launch code is mauve" in prompt
        assert "a.zip (application/zip, 256 bytes)" in prompt
        history = await chat.history()
        user = history["messages"][0]
        assert user["content"][0] == {"type": "text", "text": "read these"}


async def test_a_steer_while_the_last_turn_streams_gets_a_turn_of_that_run(tmp_path: Path) -> None:
    """Steered while the model's last turn streams: the run takes it in after that turn (its
    own run ends then, before the next turn's text) and answers it in one more turn, as the
    real gateway does (``tests/fixtures/chat-traces/real-steer.json``)."""
    async with chat_gateway(tmp_path) as chat:
        first = await chat.send("SLOW:40")
        await chat.op.wait_event(
            "chat", lambda e: e["payload"]["runId"] == first and e["payload"]["state"] == "delta"
        )
        steer_id = await chat.send("steered late", queueMode="steer")
        final = await chat.finished(first)
        assert final["state"] == "final"
        assert "steered late" in final["message"]["content"][0]["text"]
        events = [e["payload"] for e in chat.op.events if e.get("event") == "chat"]
        taken = events.index(
            {"runId": steer_id, "sessionKey": "agent:main:main", "seq": 1, "state": "final"}
        )
        answer = [
            i
            for i, p in enumerate(events)
            if p["runId"] == first and p["state"] == "delta" and "steered late" in p["deltaText"]
        ]
        assert answer and taken < answer[0], "taken in before the turn that answers it"
        messages = (await chat.history())["messages"]
        assert [(m["role"], m.get("stopReason")) for m in messages] == [
            ("user", None),
            ("assistant", "stop"),
            ("user", None),
            ("assistant", "stop"),
        ]
        assert messages[2]["content"] == "steered late"
        assert messages[2]["idempotencyKey"] == f"{steer_id}:user"
        assert messages[2]["__openclaw"]["steerTargetRunId"] == first


async def test_a_steer_left_when_the_run_is_stopped_runs_as_its_own_turn(tmp_path: Path) -> None:
    """Steered, then the run is stopped before a model boundary took it in: the message is not
    lost; it runs next as a turn of its own (its own events, its answer), as the real
    gateway does."""
    async with chat_gateway(tmp_path) as chat:
        first = await chat.send("SLOW:150")
        await chat.op.wait_event(
            "chat", lambda e: e["payload"]["runId"] == first and e["payload"]["state"] == "delta"
        )
        steer_id = await chat.send("after the stop", queueMode="steer")
        stopped = await chat.op.ok("chat.abort", {"sessionKey": "main", "runId": first})
        assert stopped == {"ok": True, "aborted": True, "runIds": [first]}
        assert (await chat.finished(first))["state"] == "aborted"
        final = await chat.finished(steer_id)
        assert final["state"] == "final"
        assert "after the stop" in final["message"]["content"][0]["text"]
        assert chat.run_events(steer_id)[0]["state"] == "status", "a turn of its own"
        messages = (await chat.history())["messages"]
        assert [(m["role"], m.get("stopReason")) for m in messages] == [
            ("user", None),
            ("assistant", "aborted"),
            ("user", None),
            ("assistant", "stop"),
        ]
        assert messages[2]["content"] == "after the stop"
        assert "steerTargetRunId" not in messages[2]["__openclaw"], "a turn of its own"
        again = await chat.op.ok(
            "chat.send",
            {"sessionKey": "main", "message": "after the stop", "idempotencyKey": steer_id},
        )
        assert again == {"runId": steer_id, "status": "ok"}
