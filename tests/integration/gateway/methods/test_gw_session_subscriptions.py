"""``sessions.subscribe``, ``sessions.messages.(un)subscribe``, ``sessions.describe``,
``sessions.list`` filters and ``commands.list`` of the bundled gateway, over real loopback
WebSockets with the fake model over real HTTP (what the real ``openclaw tui`` calls; the
reference's answers are in ``tests/interop/test_tui_real_client.py`` and the brief capture).

As the reference: ``sessions.changed`` reaches only connections that called
``sessions.subscribe``; a connection that did not gets none.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from gateway.server import GatewayServer
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, raw_operator
from tests.helpers.fake_llm import FakeLLM

pytestmark = pytest.mark.timeout(60)


@contextlib.asynccontextmanager
async def gateway(tmp_path: Path) -> AsyncIterator[GatewayServer]:
    """Our gateway in-process with the fake model as its default."""
    with FakeLLM() as llm:
        state = tmp_path / "state"
        state.mkdir(parents=True, exist_ok=True)
        provider = {
            "api": "openai-completions",
            "baseUrl": llm.openai_base_url,
            "models": [{"id": "fake-model", "name": "Fake", "contextWindow": 128000}],
        }
        document = {"defaultModel": "fake/fake-model", "providers": {"fake": provider}}
        (state / "providers.json").write_text(json.dumps(document), encoding="utf-8")
        async with bundled_gateway(state) as gw:
            yield gw


def conn_id(op: RawClient) -> str:
    """The gateway's id of ``op``'s connection (from its hello-ok)."""
    assert op.hello is not None
    return str(op.hello["server"]["connId"])


async def send_and_finish(op: RawClient, message: str = "hello") -> str:
    run_id = str(uuid.uuid4())
    params = {"sessionKey": "main", "message": message, "idempotencyKey": run_id}
    await op.ok("chat.send", params)
    await op.wait_event(
        "chat", lambda e: e["payload"]["runId"] == run_id and e["payload"]["state"] == "final"
    )
    return run_id


async def test_sessions_changed_goes_only_to_subscribers(tmp_path: Path) -> None:
    async with (
        gateway(tmp_path) as gw,
        raw_operator(gw.url) as subscribed,
        raw_operator(gw.url) as other,
    ):
        assert await subscribed.ok("sessions.subscribe", {}) == {"subscribed": True}
        await send_and_finish(other)
        await subscribed.wait_event("sessions.changed")
        await other.ok("sessions.patch", {"key": "main", "label": "renamed"})
        patched = await subscribed.wait_event(
            "sessions.changed", lambda e: e["payload"].get("reason") == "patch"
        )
        assert patched["payload"]["sessionKey"] == "agent:main:main"
        assert patched["payload"]["agentId"] == "main"
        assert patched["payload"]["session"]["label"] == "renamed"
        assert patched["payload"]["sessionId"] == patched["payload"]["session"]["sessionId"]
        await other.ok("sessions.delete", {"key": "main"})
        deleted = await subscribed.wait_event(
            "sessions.changed", lambda e: e["payload"].get("reason") == "delete"
        )
        assert "session" not in deleted["payload"]  # gone: no row to show (as the real one)
        await asyncio.sleep(0.2)  # anything in flight to `other` would have arrived by now
        assert other.events_named("sessions.changed") == []
        # Both still get the run's chat events: those are not subscription-routed.
        assert subscribed.events_named("chat") and other.events_named("chat")


async def test_subscribe_with_list_params_answers_the_list_too(tmp_path: Path) -> None:
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        await send_and_finish(op)
        answer = await op.ok("sessions.subscribe", {"agentId": "main", "limit": 1})
        assert answer["subscribed"] is True
        assert [s["key"] for s in answer["list"]["sessions"]] == ["agent:main:main"]
        bad = await op.error("sessions.subscribe", {"bogus": 1})
        assert bad["message"] == (
            "invalid sessions.subscribe params: at root: unexpected property 'bogus'"
        )


async def test_messages_subscribe_and_unsubscribe(tmp_path: Path) -> None:
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        assert await op.ok("sessions.messages.subscribe", {"key": "main"}) == {
            "subscribed": True,
            "key": "agent:main:main",
        }
        assert gw.app.hub.sessions.message_keys(conn_id(op)) == ["agent:main:main"]
        assert await op.ok("sessions.messages.unsubscribe", {"key": "agent:main:main"}) == {
            "subscribed": False,
            "key": "agent:main:main",
        }
        assert gw.app.hub.sessions.message_keys(conn_id(op)) == []
        missing = await op.error("sessions.messages.subscribe", {})
        assert missing["message"] == (
            "invalid sessions.messages.subscribe params: must have required property 'key'"
        )
        wrong_agent = await op.error("sessions.messages.subscribe", {"key": "x", "agentId": "zz"})
        assert wrong_agent["message"] == 'Unknown agent id "zz"'
        falsy = await op.error(
            "sessions.messages.subscribe", {"key": "main", "includeApprovals": False}
        )
        assert falsy["message"] == (
            "invalid sessions.messages.subscribe params: at /includeApprovals: "
            "must be equal to constant"
        )
        # Trimmed as JavaScript trims: a byte-order mark is blank, U+001F is not.
        for method in ("sessions.messages.subscribe", "sessions.messages.unsubscribe"):
            blank = await op.error(method, {"key": " \ufeff"})
            assert blank["message"] == "key required", method
        padded = await op.ok("sessions.messages.unsubscribe", {"key": " main "})
        assert padded == {"subscribed": False, "key": "agent:main:main"}


async def test_the_approval_replay_of_a_session_is_honestly_empty(tmp_path: Path) -> None:
    """The Control UI subscribes with ``includeApprovals: true``: a paired device with
    ``operator.approvals`` gets the replay, empty here (this gateway's agent asks for no
    approvals), and is subscribed; without the scope it is refused, as the reference."""
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        answer = await op.ok(
            "sessions.messages.subscribe", {"key": "main", "includeApprovals": True}
        )
        replay = answer.pop("approvalReplay")
        assert answer == {"subscribed": True, "key": "agent:main:main"}
        assert replay.pop("updatedAtMs") > 0
        assert replay == {"sessionKey": "agent:main:main", "approvals": [], "truncated": False}
        assert gw.app.hub.sessions.message_keys(conn_id(op)) == ["agent:main:main"]
        async with raw_operator(gw.url, scopes=["operator.read"]) as reader:
            refused = await reader.error(
                "sessions.messages.subscribe", {"key": "main", "includeApprovals": True}
            )
            assert refused["code"] == "INVALID_REQUEST"
            assert refused["message"] == (
                "sessions.messages.subscribe includeApprovals requires a paired device and "
                "gateway scope: operator.approvals"
            )
            # Checked before the agent is, as the reference checks it.
            first = await reader.error(
                "sessions.messages.subscribe",
                {"key": "main", "agentId": "zz", "includeApprovals": True},
            )
            assert first["message"] == refused["message"]


async def test_a_closed_connection_loses_its_subscriptions(tmp_path: Path) -> None:
    async with gateway(tmp_path) as gw:
        async with raw_operator(gw.url) as op:
            await op.ok("sessions.subscribe", {})
            await op.ok("sessions.messages.subscribe", {"key": "main"})
            closed = conn_id(op)
            assert gw.app.hub.sessions.subscribed_all(closed)
        async with asyncio.timeout(5):
            while closed in gw.app.hub.peers:
                await asyncio.sleep(0.02)
        assert not gw.app.hub.sessions.subscribed_all(closed)
        assert gw.app.hub.sessions.message_keys(closed) == []


async def test_describe_list_filters_and_commands(tmp_path: Path) -> None:
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        assert await op.ok("sessions.describe", {"key": "main"}) == {"session": None}
        history = await op.ok("chat.history", {"sessionKey": "main"})
        assert history["defaults"] == {
            "modelProvider": "fake",
            "model": "fake-model",
            "contextTokens": 128000,
        }
        await send_and_finish(op)
        described = await op.ok("sessions.describe", {"key": "main"})
        assert described["session"]["key"] == "agent:main:main"
        assert described["session"]["model"] == "fake-model"
        listed = await op.ok("sessions.list", {"agentId": "main", "limit": 1})
        assert listed["count"] == 1 and listed["defaults"]["model"] == "fake-model"
        # No session of this gateway was spawned by another: the filter selects none.
        spawned = await op.ok("sessions.list", {"spawnedBy": "agent:main:main"})
        assert spawned["sessions"] == [] and spawned["totalCount"] == 0
        assert (await op.ok("sessions.list", {"agentId": "other"}))["sessions"] == []
        typed = await op.error("sessions.list", {"activeOnly": "yes"})
        assert typed["message"] == "invalid sessions.list params: at /activeOnly: must be boolean"
        commands = (await op.ok("commands.list", {"agentId": "main", "scope": "text"}))["commands"]
        assert {c["name"] for c in commands} == {"nodes", "invoke", "snap", "notify", "help"}
        assert all(c["textAliases"] == [f"/{c['name']}"] for c in commands)
        assert (await op.ok("commands.list", {"scope": "native"}))["commands"] == []
        bad_scope = await op.error("commands.list", {"scope": "web"})
        assert bad_scope["code"] == "INVALID_REQUEST"


async def test_session_message_reaches_the_sessions_followers(tmp_path: Path) -> None:
    async with (
        gateway(tmp_path) as gw,
        raw_operator(gw.url) as everything,
        raw_operator(gw.url) as main_only,
        raw_operator(gw.url) as elsewhere,
        raw_operator(gw.url) as nobody,
    ):
        await everything.ok("sessions.subscribe", {})
        await main_only.ok("sessions.messages.subscribe", {"key": "main"})
        await elsewhere.ok("sessions.messages.subscribe", {"key": "agent:main:other"})
        run_id = await send_and_finish(nobody, "hello followers")
        for op in (everything, main_only):
            reply = await op.wait_event(
                "session.message", lambda e: e["payload"]["message"]["role"] == "assistant"
            )
            messages = [e["payload"] for e in op.events_named("session.message")]
            assert [m["message"]["role"] for m in messages] == ["user", "assistant"]
            assert [m["messageSeq"] for m in messages] == [1, 2]
            assert messages[0]["message"]["content"] == "hello followers"  # a string, as the real
            assert reply["payload"]["sessionKey"] == "agent:main:main"
            assert reply["payload"]["messageId"] == reply["payload"]["message"]["__openclaw"]["id"]
            assert reply["payload"]["session"]["key"] == "agent:main:main"
        history = await nobody.ok("chat.history", {"sessionKey": "main"})
        assert [m["__openclaw"]["id"] for m in history["messages"]] == [
            e["payload"]["messageId"] for e in main_only.events_named("session.message")
        ]
        await asyncio.sleep(0.2)
        assert elsewhere.events_named("session.message") == []
        assert nobody.events_named("session.message") == []
        assert run_id


async def test_a_runs_lifecycle_reaches_session_subscribers(tmp_path: Path) -> None:
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        await op.ok("sessions.subscribe", {})
        run_id = await send_and_finish(op)
        end = await op.wait_event("sessions.changed", lambda e: e["payload"].get("phase") == "end")
        phases = [
            e["payload"]["phase"]
            for e in op.events_named("sessions.changed")
            if e["payload"].get("runId") == run_id
        ]
        assert phases[0] == "start" and "model" in phases and phases[-1] == "end"
        assert end["payload"]["session"]["hasActiveRun"] is False
        assert end["payload"]["session"]["status"] == "done"
        assert end["payload"]["agentId"] == "main"
