"""Unit tests: a node's self-reports (``gateway/nodes/inventory.py``) as the real gateway
validates and normalizes them, and the saved host stats of ``NodeSurfaces``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gateway.nodes.inventory import (
    RUNNER_UPDATE_REQUIRED_ISSUE,
    NodeInventory,
    catalog_fields,
    normalize_skills,
    parse_host_stats,
    parse_runner_declaration,
    plugin_tools_for,
    runner_update_required,
)
from gateway.state import GatewayState

STATS: dict[str, Any] = {
    "cpuCount": 8,
    "loadAverage": [1.25, 1.1, 0.9],
    "memoryTotalBytes": 100,
    "memoryFreeBytes": 40,
    "diskTotalBytes": 1000,
    "diskAvailableBytes": 250,
}
V6 = "node-worker-supervisor-v6"


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in STATS.items() if k != key}


@pytest.mark.parametrize(
    "payload",
    [
        STATS,
        _without("loadAverage"),
        {k: v for k, v in STATS.items() if not k.startswith("disk")},
        {**STATS, "memoryFreeBytes": 100, "diskAvailableBytes": 1000, "cpuCount": 4096},
        {**STATS, "loadAverage": [0, 0, 100000]},
    ],
)
def test_host_stats_the_real_schema_accepts(payload: dict[str, Any]) -> None:
    """Closed, the totals bound the free values, disk fields come in pairs."""
    assert parse_host_stats(payload) == payload


@pytest.mark.parametrize(
    "payload",
    [
        None,
        [1],
        "x",
        _without("cpuCount"),
        _without("memoryFreeBytes"),
        _without("diskTotalBytes"),
        {**STATS, "updatedAtMs": 1},
        {**STATS, "cpuCount": 0},
        {**STATS, "cpuCount": 4097},
        {**STATS, "cpuCount": 1.5},
        {**STATS, "cpuCount": True},
        {**STATS, "memoryTotalBytes": -1},
        {**STATS, "memoryFreeBytes": 101},
        {**STATS, "diskAvailableBytes": 1001},
        {**STATS, "loadAverage": [1, 2]},
        {**STATS, "loadAverage": [1, 2, 100001]},
        {**STATS, "loadAverage": [1, 2, -1]},
        {**STATS, "loadAverage": [1, 2, "3"]},
        {**STATS, "loadAverage": [1, 2, float("inf")]},
    ],
)
def test_host_stats_the_real_schema_refuses(payload: Any) -> None:
    """Anything else is an invalid payload."""
    assert parse_host_stats(payload) is None


def test_host_stats_integral_floats_become_integers() -> None:
    """``4.0`` is an integer to JavaScript and is kept as ``4``."""
    stats = parse_host_stats({**STATS, "cpuCount": 4.0, "memoryTotalBytes": 100.0})
    assert stats is not None
    assert stats["cpuCount"] == 4 and isinstance(stats["cpuCount"], int)
    assert isinstance(stats["memoryTotalBytes"], int)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"protocolFeatures": []}, {"protocolFeatures": []}),
        (
            {"protocolFeatures": [V6], "workerHost": {"enabled": False}},
            {"protocolFeatures": [V6], "workerHost": {"enabled": False}},
        ),
        (
            {
                "protocolFeatures": [V6],
                "workerHost": {
                    "enabled": True,
                    "capacity": {"total": 2, "available": 1},
                    "bundleRetention": 1,
                    "bundleStatus": 1,
                    "capturedExecPolicy": True,
                },
            },
            {
                "protocolFeatures": [V6],
                "workerHost": {
                    "enabled": True,
                    "capacity": {"total": 2, "available": 1},
                    "bundleRetention": 1,
                    "bundleStatus": 1,
                    "capturedExecPolicy": True,
                },
            },
        ),
        (
            {"protocolFeatures": ["node-worker-supervisor-v2"], "workerRuns": 3},
            {"protocolFeatures": ["node-worker-supervisor-v2"]},
        ),
    ],
)
def test_runner_declarations_accepted(params: Any, expected: dict[str, Any]) -> None:
    """No features, the current dialect with its worker host, or a retired dialect."""
    assert parse_runner_declaration(params) == expected


@pytest.mark.parametrize(
    "params",
    [
        None,
        {},
        {"protocolFeatures": "x"},
        {"protocolFeatures": [], "workerHost": {"enabled": False}},
        {"protocolFeatures": [V6, V6], "workerHost": {"enabled": False}},
        {"protocolFeatures": ["node-worker-supervisor-v7"], "workerHost": {"enabled": False}},
        {"protocolFeatures": [V6]},
        {"protocolFeatures": [V6], "workerHost": {"enabled": False, "x": 1}},
        {"protocolFeatures": [V6], "workerHost": {"enabled": True}},
        {"protocolFeatures": [V6], "workerHost": {"enabled": 1}},
        {
            "protocolFeatures": [V6],
            "workerHost": {"enabled": True, "capacity": {"total": 1, "available": 2}},
        },
        {
            "protocolFeatures": [V6],
            "workerHost": {"enabled": True, "capacity": {"total": 1025, "available": 0}},
        },
        {
            "protocolFeatures": [V6],
            "workerHost": {"enabled": True, "capacity": {"total": 1, "available": 0}, "x": 1},
        },
        {
            "protocolFeatures": [V6],
            "workerHost": {
                "enabled": True,
                "capacity": {"total": 1, "available": 0},
                "bundleStatus": 1,
            },
        },
        {
            "protocolFeatures": [V6],
            "workerHost": {
                "enabled": True,
                "capacity": {"total": 1, "available": 0},
                "portalStream": True,
            },
        },
        {"protocolFeatures": ["node-worker-supervisor-v1"], "a": 1, "b": 2},
    ],
)
def test_runner_declarations_refused(params: Any) -> None:
    """Everything the real parser refuses (``invalid node runner inventory``)."""
    assert parse_runner_declaration(params) is None


def test_retired_dialect_text_and_issue() -> None:
    """The refusal names the node and the update commands; node.list shows the issue only
    for a node-runtime client."""
    assert runner_update_required("abc") == (
        "device worker node abc requires an update before it can host sessions; run "
        "openclaw update, then reconnect it (for a headless node, run openclaw node restart)"
    )
    inventory = NodeInventory(runner={"protocolFeatures": ["node-worker-supervisor-v5"]})
    assert inventory.issues("node-host", "node") == [dict(RUNNER_UPDATE_REQUIRED_ISSUE)]
    assert inventory.issues("openclaw-android", "node") == []
    assert NodeInventory(runner={"protocolFeatures": [V6]}).issues("node-host", "node") == []


def _skill(name: str, content: str = "body", description: str = "d") -> dict[str, str]:
    return {"name": name, "description": description, "content": content}


def test_skills_are_trimmed_deduplicated_bounded_and_sorted() -> None:
    """The first of each name, at most 64 KiB each and 512 KiB in all, sorted by name."""
    big = "é" * 40_000  # 80,000 bytes: within 65,536 characters, beyond 64 KiB
    chunk = "x" * 60_000
    skills = [
        _skill(" zeta ", description=" last "),
        _skill("alpha"),
        _skill("alpha", description="duplicate"),
        _skill("huge", content=big),
        _skill("blank", description=" "),
        *[_skill(f"part-{i}", content=chunk) for i in range(9)],
    ]
    kept = normalize_skills(skills)
    names = [s["name"] for s in kept]
    assert names[0] == "alpha" and names[-1] == "zeta"
    assert "huge" not in names and "blank" not in names
    assert kept[0]["description"] == "d"
    assert kept[-1]["description"] == "last"
    parts = [n for n in names if n.startswith("part-")]
    assert len(parts) == 8  # 8 x 60,000 + 8 bytes fits 524,288; a ninth does not
    assert names == sorted(names)


def _tool(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "pluginId": "demo",
        "name": "tool",
        "description": "a tool",
        "command": "run.it",
    }
    base.update(fields)
    return base


def test_plugin_tools_need_an_approved_command() -> None:
    """Tools without a command, or with one the node may not run now, are dropped."""
    tools = [_tool(), _tool(name="other", command="not.approved"), _tool(name="none", command="")]
    assert [t["name"] for t in plugin_tools_for(tools, ["run.it"])] == ["tool"]
    assert plugin_tools_for(tools, []) == []


def test_plugin_tools_are_normalized() -> None:
    """Trimmed, description cut at 1,024, a default parameters schema, mcp kept only whole,
    ``node-mcp`` only for MCP calls, one per plugin and name, sorted, at most 128."""
    tools = [
        _tool(description=" " + "d" * 2000 + " "),
        _tool(description="second of the same name"),
        _tool(name="b_tool", parameters={"type": "object"}, mcp={"server": "s", "tool": " "}),
        _tool(pluginId="node-mcp", name="mcp_a"),
        _tool(
            pluginId="node-mcp",
            name="mcp_b",
            command="mcp.tools.call.v1",
            mcp={"server": " s ", "tool": "t"},
        ),
        _tool(pluginId="Alpha", name="first"),
    ]
    out = plugin_tools_for(tools, ["run.it", "mcp.tools.call.v1"])
    assert [(t["pluginId"], t["name"]) for t in out] == [
        ("Alpha", "first"),
        ("demo", "b_tool"),
        ("demo", "tool"),
        ("node-mcp", "mcp_b"),
    ]
    by_name = {t["name"]: t for t in out}
    assert len(by_name["tool"]["description"]) == 1024
    assert by_name["tool"]["parameters"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": True,
    }
    assert by_name["b_tool"]["parameters"] == {"type": "object"}
    assert "mcp" not in by_name["b_tool"]
    assert by_name["mcp_b"]["mcp"] == {"server": "s", "tool": "t"}
    many = [_tool(name=f"t{i:03d}") for i in range(130)]
    assert len(plugin_tools_for(many, ["run.it"])) == 128


class _Live:
    def __init__(self, inventory: NodeInventory, commands: list[str]) -> None:
        self.inventory = inventory
        self.commands = commands
        self.client: dict[str, Any] = {"id": "node-host", "mode": "node"}


def test_catalog_fields_live_and_offline() -> None:
    """Live: this connection's stats (none yet: no key), tools and pathEnv; offline: the
    saved stats only."""
    saved = {**STATS, "updatedAtMs": 5}
    fresh = NodeInventory(path_env="/bin")
    assert catalog_fields(_Live(fresh, []), saved) == {"nodePluginTools": [], "pathEnv": "/bin"}
    fresh.host_stats = {**STATS, "updatedAtMs": 9}
    fresh.declared_tools = [_tool()]
    fields = catalog_fields(_Live(fresh, ["run.it"]), saved)
    assert list(fields) == ["hostStats", "nodePluginTools", "pathEnv"]
    assert fields["hostStats"]["updatedAtMs"] == 9
    assert [t["name"] for t in fields["nodePluginTools"]] == ["tool"]
    assert catalog_fields(None, saved) == {"hostStats": saved}
    assert catalog_fields(None, None) == {}


def test_saved_host_stats_survive_reopening(tmp_path: Path) -> None:
    """``record_host_stats`` saves on the approved surface only; it is read back after the
    database is reopened, and an unreadable value counts as none."""
    path = tmp_path / "gateway.sqlite3"
    state = GatewayState(path)
    try:
        assert state.nodes.record_host_stats("nobody", STATS) is False
        device = "d" * 64
        state.devices.approve(
            device, "key", role="node", scopes=[], approved_via="silent", now_ms=1
        )
        request = state.nodes.request(
            device, commands=["x"], caps=[], permissions=None, required_approve_scopes=[], now_ms=1
        )
        state.nodes.approve(request.request.request_id, 2)
        assert state.nodes.record_host_stats(device, {**STATS, "updatedAtMs": 3}) is True
    finally:
        state.close()
    state = GatewayState(path)
    try:
        surface = state.nodes.approved(device)
        assert surface is not None
        assert dict(surface.last_host_stats or {}) == {**STATS, "updatedAtMs": 3}
    finally:
        state.close()
