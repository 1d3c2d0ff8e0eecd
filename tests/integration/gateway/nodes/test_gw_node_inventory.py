"""A node's self-reports through the bundled gateway over loopback: ``node.host.stats`` (kept
per connection, saved on the approved node and shown offline, also after a restart; sent to
read-scoped operators as ``node.hostStats``), ``pathEnv``, ``node.pluginTools.update`` (only
tools an approved command runs, recomputed on approval), ``node.skills.update``,
``node.runnerInventory.update`` (served, not advertised) and ``node.pluginSurface.refresh``;
who may call them, and what a node whose surface awaits approval is told."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, raw_node, raw_operator

pytestmark = pytest.mark.timeout(60)

STATS = {
    "cpuCount": 4,
    "loadAverage": [0.5, 0.25, 0.125],
    "memoryTotalBytes": 8_000_000_000,
    "memoryFreeBytes": 2_000_000_000,
    "diskTotalBytes": 500_000_000_000,
    "diskAvailableBytes": 100_000_000_000,
}
PATH_ENV = "/opt/node/bin:/usr/bin"
UPDATED = {"ok": True, "event": "node.host.stats", "handled": True, "reason": "updated"}


def _stats_event(**changes: Any) -> dict[str, Any]:
    return {"event": "node.host.stats", "payloadJSON": json.dumps({**STATS, **changes})}


async def _approve(admin: RawClient, node: RawClient, node_id: str) -> None:
    """Approve the node's pending surface; wait until the node is told."""
    event = await admin.wait_event(
        "node.pair.requested", lambda e: e["payload"]["nodeId"] == node_id
    )
    await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
    await node.wait_event("node.pair.resolved")


async def _described(admin: RawClient, node_id: str) -> dict[str, Any]:
    described: dict[str, Any] = await admin.ok("node.describe", {"nodeId": node_id})
    return described


async def test_host_stats_are_kept_shown_sent_and_saved(tmp_path: Path) -> None:
    """Refused while the surface awaits approval; then stamped with the gateway's time,
    shown by node.list/describe, sent to a read-only operator as node.hostStats, and still
    shown (same updatedAtMs) once the node is gone and after a gateway restart."""
    ident = DeviceIdentity.generate()
    node_id = ident.device_id
    async with (
        bundled_gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
        raw_operator(gw.url, scopes=["operator.read"]) as reader,
    ):
        async with raw_node(gw.url, ["probe.echo"], ident, extra={"pathEnv": PATH_ENV}) as node:
            refused = await node.error("node.event", _stats_event())
            assert refused == {
                "code": "UNAVAILABLE",
                "message": "node pairing changed while invocation was active",
                "details": {"code": "PAIRING_CHANGED"},
                "retryable": True,
            }
            await _approve(admin, node, node_id)
            assert "hostStats" not in await _described(admin, node_id)

            assert await node.ok("node.event", _stats_event()) == UPDATED
            event = await reader.wait_event("node.hostStats")
            live = await _described(admin, node_id)
            assert live["pathEnv"] == PATH_ENV
            stats = live["hostStats"]
            assert {k: v for k, v in stats.items() if k != "updatedAtMs"} == STATS
            assert event["payload"] == {"nodeId": node_id, "hostStats": stats}
            listed = await reader.ok("node.list", {})
            (entry,) = [n for n in listed["nodes"] if n["nodeId"] == node_id]
            assert entry["hostStats"] == stats
            keys = list(entry)
            assert keys.index("sessionHost") < keys.index("hostStats") < keys.index("pathEnv")

            invalid = await node.ok("node.event", _stats_event(memoryFreeBytes=9_000_000_000))
            assert invalid["reason"] == "invalid_payload"
            assert (await _described(admin, node_id))["hostStats"] == stats
        await asyncio.sleep(0.2)  # the node's socket is gone
        offline = await _described(admin, node_id)
        assert offline["connected"] is False
        assert offline["hostStats"] == stats
        assert "pathEnv" not in offline and "nodePluginTools" not in offline
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        assert (await _described(admin, node_id))["hostStats"] == stats


async def test_no_node_event_is_taken_before_approval(tmp_path: Path) -> None:
    """Whatever the event, a node whose surface awaits approval gets PAIRING_CHANGED (the
    real gateway's answer); the same events are handled once it is approved."""
    ident = DeviceIdentity.generate()
    alive = {"event": "node.presence.alive", "payloadJSON": '{"trigger":"manual"}'}
    custom = {"event": "probe.custom", "payload": {"x": 1}}
    async with (
        bundled_gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
        raw_node(gw.url, ["probe.echo"], ident) as node,
    ):
        for params in (alive, custom):
            error = await node.error("node.event", params)
            assert error["details"] == {"code": "PAIRING_CHANGED"}, params
        await _approve(admin, node, ident.device_id)
        assert (await node.ok("node.event", alive))["reason"] == "persisted"
        assert (await node.ok("node.event", custom))["reason"] == "unsupported_event"


async def test_a_reconnected_node_shows_stats_once_it_sends_new_ones(tmp_path: Path) -> None:
    """A connected node shows what this connection reported: none right after a reconnect
    (the saved snapshot is for offline nodes), the new one once sent."""
    ident = DeviceIdentity.generate()
    async with (
        bundled_gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
    ):
        async with raw_node(gw.url, ["probe.echo"], ident) as node:
            await _approve(admin, node, ident.device_id)
            await node.ok("node.event", _stats_event(cpuCount=2))
        async with raw_node(gw.url, ["probe.echo"], ident) as node:
            again = await _described(admin, ident.device_id)
            assert again["connected"] is True
            assert "hostStats" not in again
            await node.ok("node.event", {"event": "node.host.stats", "payload": STATS})
            assert (await _described(admin, ident.device_id))["hostStats"]["cpuCount"] == 4


async def test_plugin_tools_follow_the_approved_commands(tmp_path: Path) -> None:
    """Declared tools count only once their command is approved: the answer before
    approval lists none, node.list lists them after."""
    ident = DeviceIdentity.generate()
    tool = {
        "pluginId": "demo",
        "name": "echo_tool",
        "description": " echoes ",
        "command": "probe.echo",
    }
    async with (
        bundled_gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
        raw_node(gw.url, ["probe.echo"], ident) as node,
    ):
        early = await node.ok("node.pluginTools.update", {"tools": [tool]})
        assert early == {"nodeId": ident.device_id, "tools": []}
        skills = await node.ok(
            "node.skills.update",
            {"skills": [{"name": "notes", "description": " take notes ", "content": "# n"}]},
        )
        assert skills == {
            "nodeId": ident.device_id,
            "skills": [{"name": "notes", "description": "take notes", "content": "# n"}],
        }
        await _approve(admin, node, ident.device_id)
        shown = (await _described(admin, ident.device_id))["nodePluginTools"]
        assert shown == [
            {
                "pluginId": "demo",
                "name": "echo_tool",
                "description": "echoes",
                "parameters": {"type": "object", "properties": {}, "additionalProperties": True},
                "command": "probe.echo",
            }
        ]
        again = await node.ok("node.pluginTools.update", {"tools": [tool]})
        assert again["tools"] == shown


async def test_runner_inventory_is_served_but_not_advertised(tmp_path: Path) -> None:
    """node.runnerInventory.update is missing from hello-ok features.methods (as the real
    gateway), yet answered: retry while the surface awaits approval, then the node id; a
    retired dialect is refused and shown as an issue; a node that is not a node host is
    unknown."""
    ident = DeviceIdentity.generate()
    current = {"protocolFeatures": ["node-worker-supervisor-v6"], "workerHost": {"enabled": False}}
    async with (
        bundled_gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
        raw_node(gw.url, ["probe.echo"], ident) as node,
    ):
        assert node.hello is not None
        methods = node.hello["features"]["methods"]
        assert "node.runnerInventory.update" not in methods
        assert {"node.skills.update", "node.pluginTools.update"} <= set(methods)
        assert "node.hostStats" in node.hello["features"]["events"]
        waiting = await node.error("node.runnerInventory.update", current)
        assert waiting["code"] == "UNAVAILABLE"
        assert waiting["message"].startswith("node capability surface is awaiting operator")
        await _approve(admin, node, ident.device_id)
        assert await node.ok("node.runnerInventory.update", current) == {"nodeId": ident.device_id}
        retired = await node.error(
            "node.runnerInventory.update", {"protocolFeatures": ["node-worker-supervisor-v3"]}
        )
        assert retired["message"].startswith(f"device worker node {ident.device_id} requires")
        issues = (await _described(admin, ident.device_id))["issues"]
        assert [issue["code"] for issue in issues] == ["update-required"]
        await node.ok("node.runnerInventory.update", current)
        assert "issues" not in await _described(admin, ident.device_id)
        missing = await node.error("node.pluginSurface.refresh", {"surface": "canvas"})
        assert missing == {"code": "UNAVAILABLE", "message": "canvas plugin surface unavailable"}
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_node(gw.url, [], client_id="openclaw-android", platform="android") as android,
    ):
        refused = await android.error("node.runnerInventory.update", current)
        assert refused == {"code": "INVALID_REQUEST", "message": "unknown nodeId"}


async def test_operators_may_not_report_for_a_node(tmp_path: Path) -> None:
    """The node-role methods refuse an operator (``unauthorized role``), as the reference."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        for method in (
            "node.runnerInventory.update",
            "node.skills.update",
            "node.pluginTools.update",
            "node.pluginSurface.refresh",
        ):
            error = await admin.error(method, {})
            assert error == {"code": "INVALID_REQUEST", "message": "unauthorized role: operator"}
