"""``health`` and ``status`` of the bundled gateway over real loopback WebSockets: the real
gateway's shapes, filled from our own agent and sessions (SQLite state), redacted as the
real one redacts for callers without ``operator.admin`` (issue #17)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from gateway.scopes import ADMIN, READ
from tests.helpers.bundled_gateway import bundled_gateway, raw_operator, wait_for
from tests.integration.gateway.chat.test_gw_chat_runs import chat_gateway

pytestmark = pytest.mark.timeout(60)


async def test_health_reports_the_agent_its_sessions_and_no_heartbeat(tmp_path: Path) -> None:
    """No sessions, then two: ``count`` follows the state and ``recent`` lists the newest
    first with its age; no heartbeat runs here, so it says disabled, as the real does."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        await wait_for(lambda: gw.app.chat is not None)
        empty = await op.ok("health")
        assert empty["ok"] is True and empty["sessions"]["count"] == 0
        assert empty["sessions"]["recent"] == []
        assert empty["sessions"]["path"] == str(gw.app.state.db_path)
        assert (empty["channels"], empty["channelOrder"], empty["channelLabels"]) == ({}, [], {})
        assert empty["heartbeatSeconds"] == 0 and empty["defaultAgentId"] == "main"
        (agent,) = empty["agents"]
        assert agent["agentId"] == "main" and agent["isDefault"] is True
        assert agent["heartbeat"] == {"enabled": False, "every": "disabled", "everyMs": None}
        assert empty["modelRuntime"] == {"degraded": False, "pendingAgents": []}

        for key in ("agent:main:first", "agent:main:second"):
            await op.ok("sessions.create", {"key": key})
        two = await op.ok("health", {"probe": True})
        assert two["sessions"]["count"] == 2
        assert [row["key"] for row in two["sessions"]["recent"]] == [
            "agent:main:second",
            "agent:main:first",
        ]
        assert all(row["age"] >= 0 and row["updatedAt"] > 0 for row in two["sessions"]["recent"])
        assert two["agents"][0]["sessions"] == two["sessions"]


async def test_status_is_the_real_summary_redacted_for_read_callers(tmp_path: Path) -> None:
    """``sessions.byAgent`` and ``heartbeat.agents`` (the real CLI reads both), empty task
    counters in every bucket, our pid; the store path only for an admin caller."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url, scopes=[READ]) as reader,
        raw_operator(gw.url, scopes=[ADMIN]) as admin,
    ):
        await wait_for(lambda: gw.app.chat is not None)
        await admin.ok("sessions.create", {"key": "agent:main:one"})
        seen = await reader.ok("status", {"includeChannelSummary": False})
        assert "cliProjection" not in seen
        assert seen["sessions"]["paths"] == [] and seen["sessions"]["count"] == 1
        assert seen["sessions"]["byAgent"] == [
            {"agentId": "main", "path": "[redacted]", "count": 1, "recent": []}
        ]
        assert seen["heartbeat"] == {
            "defaultAgentId": "main",
            "agents": [
                {
                    "agentId": "main",
                    "enabled": False,
                    "every": "disabled",
                    "everyMs": None,
                    "waitingForRoute": False,
                }
            ],
        }
        assert seen["tasks"]["total"] == 0 and set(seen["tasks"]["byStatus"]) == {
            "queued",
            "running",
            "succeeded",
            "failed",
            "timed_out",
            "cancelled",
            "lost",
        }
        assert seen["taskAudit"]["byCode"]["lost"] == 0
        assert seen["pid"] == os.getpid()
        assert seen["channelSummary"] == seen["queuedSystemEvents"] == []

        full = await admin.ok("status", {"includeCliProjection": True})
        assert full["sessions"]["paths"] == [str(gw.app.state.db_path)]
        assert full["sessions"]["byAgent"][0]["path"] == str(gw.app.state.db_path)
        assert full["cliProjection"]["agents"] == {
            "defaultId": "main",
            "ownership": "sole",
            "selectionRequired": False,
            "rows": [{"id": "main"}],
        }


async def test_status_and_health_accept_any_params_like_the_real_gateway(
    tmp_path: Path,
) -> None:
    """The real gateway answers ``status``/``health`` whatever the params (an unknown key, or
    none at all); so does ours."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        assert (await op.ok("status", {"bogus": 1}))["sessions"]["count"] == 0
        assert (await op.ok("status"))["runtimeVersion"]
        assert (await op.ok("health", {"bogus": 1}))["ok"] is True


async def test_status_lists_sessions_and_the_default_model_to_admin_callers(
    tmp_path: Path,
) -> None:
    """With a configured (fake) model and a session that ran: the admin caller gets the
    default model, the session rows (newest first, in the real row shape, tokens counted,
    a session override named) in ``recent`` and ``byAgent[].recent``; a read caller none."""
    async with chat_gateway(tmp_path) as chat:
        first = (await chat.op.ok("sessions.create", {"key": "agent:main:first"}))["key"]
        run_id = str(uuid.uuid4())
        await chat.op.ok(
            "chat.send", {"sessionKey": first, "message": "hello", "idempotencyKey": run_id}
        )
        await chat.finished(run_id)
        await chat.op.ok("sessions.patch", {"key": first, "thinkingLevel": "low"})
        second = await chat.op.ok("sessions.create", {"key": "agent:main:second"})

        full = await chat.op.ok("status", {})
        sessions = full["sessions"]
        assert sessions["defaults"] == {"model": "fake-model", "contextTokens": 128_000}
        assert sessions["count"] == 2
        assert sorted(row["key"] for row in sessions["recent"]) == [first, second["key"]]
        stamps = [row["updatedAt"] for row in sessions["recent"]]
        assert stamps == sorted(stamps, reverse=True), "newest first"
        assert sessions["byAgent"][0]["recent"] == sessions["recent"]
        by_key = {row["key"]: row for row in sessions["recent"]}
        fresh, ran = by_key[second["key"]], by_key[first]
        assert set(fresh) == set(ROW_KEYS)
        assert fresh["sessionId"] == second["sessionId"] and fresh["age"] >= 0
        assert (fresh["totalTokens"], fresh["totalTokensFresh"]) == (None, False)
        assert fresh["flags"] == [f"id:{second['sessionId']}"]
        assert (fresh["model"], fresh["configuredModel"], fresh["selectedModel"]) == (
            "fake-model",
            "fake/fake-model",
            "fake/fake-model",
        )
        assert fresh["modelSelectionReason"] is None and fresh["contextTokens"] == 128_000
        counted = ran["inputTokens"] + ran["outputTokens"]
        assert counted > 0 and ran["totalTokens"] == counted and ran["totalTokensFresh"] is True
        assert ran["remainingTokens"] == 128_000 - counted
        assert ran["thinkingLevel"] == "low" and ran["flags"][0] == "think:low"

        async with raw_operator(chat.gw.url, scopes=[READ]) as reader:
            seen = (await reader.ok("status", {}))["sessions"]
        assert seen["recent"] == [] and seen["byAgent"][0]["recent"] == []
        assert seen["defaults"] == {"model": None, "contextTokens": None}


#: The keys of a real gateway's ``status`` session row for a session that never ran
#: (captured from openclaw 2026.9.6 with a fake model).
ROW_KEYS = (
    "agentId",
    "key",
    "kind",
    "sessionId",
    "updatedAt",
    "age",
    "totalTokens",
    "totalTokensFresh",
    "remainingTokens",
    "percentUsed",
    "model",
    "configuredModel",
    "selectedModel",
    "modelSelectionReason",
    "runtime",
    "contextTokens",
    "flags",
)
