"""``health`` and ``status`` of the bundled gateway over real loopback WebSockets: the real
gateway's shapes, filled from our own agent and sessions (SQLite state), redacted as the
real one redacts for callers without ``operator.admin`` (issue #17)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gateway.scopes import ADMIN, READ
from tests.helpers.bundled_gateway import bundled_gateway, raw_operator, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def test_health_reports_the_agent_its_sessions_and_no_heartbeat(tmp_path: Path) -> None:
    """No sessions, then two: ``count`` follows the state and ``recent`` lists the newest
    first with its age; no heartbeat runs here, so it says disabled, as the real does."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        await wait_for(lambda: gw.core.chat is not None)
        empty = await op.ok("health")
        assert empty["ok"] is True and empty["sessions"]["count"] == 0
        assert empty["sessions"]["recent"] == []
        assert empty["sessions"]["path"] == str(gw.core.state.db_path)
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
        await wait_for(lambda: gw.core.chat is not None)
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
        assert full["sessions"]["paths"] == [str(gw.core.state.db_path)]
        assert full["sessions"]["byAgent"][0]["path"] == str(gw.core.state.db_path)
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
