"""A node's self-reports side by side: the REAL gateway and OUR gateway answer alike.

A raw node (``node-host``, linux, declaring ``system.which``; loopback devices are approved by
both gateways) sends each gateway the same requests, first a few while its surface awaits
approval (every node event is then refused with PAIRING_CHANGED), then, once approved:
``node.host.stats`` events (valid, and invalid in each way the real payload schema refuses),
``node.runnerInventory.update`` declarations, ``node.skills.update`` and
``node.pluginTools.update`` params (well formed, to be normalized, and refused by the closed
schemas), ``node.pluginSurface.refresh``, the pending-work queue's methods and
``node.invoke.result`` for no pending invoke. Every answer must be equal (``ok``, payload with
the node id in place of the device id, ``error.code``, ``error.message``, ``error.details``).
Then an operator's ``node.describe`` shows the node's ``hostStats`` (without the receipt time),
``nodePluginTools``, ``pathEnv`` and ``issues`` alike, and both send it ``node.hostStats``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway, RawClient, raw_node, raw_operator
from tests.helpers.real_openclaw import RealGateway

pytestmark = pytest.mark.timeout(300)

OPERATOR_SCOPES = ["operator.read", "operator.write", "operator.admin", "operator.pairing"]
PATH_ENV = "/opt/side-by-side/bin:/usr/bin:/bin"
#: The node's one command (approved first): a plugin tool running it is kept.
COMMAND = "system.which"
STATS = {
    "cpuCount": 8,
    "loadAverage": [1.25, 1.1, 0.9],
    "memoryTotalBytes": 17179869184,
    "memoryFreeBytes": 4294967296,
    "diskTotalBytes": 1000000000000,
    "diskAvailableBytes": 250000000000,
}


def _stats(**changes: Any) -> dict[str, Any]:
    stats: dict[str, Any] = {**STATS, **changes}
    return {k: v for k, v in stats.items() if v is not None}


def _skill(name: str, description: str = "does a thing", content: str = "# body") -> Any:
    return {"name": name, "description": description, "content": content}


def _tool(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"pluginId": "demo", "name": "demo_tool", "description": "a tool"}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


HOST_STATS_CASES: list[Any] = [
    {"event": "node.host.stats", "payload": STATS},
    {"event": "node.host.stats", "payloadJSON": json.dumps(_stats(loadAverage=None))},
    {"event": "node.host.stats", "payload": _stats(diskTotalBytes=None, diskAvailableBytes=None)},
    {"event": "node.host.stats", "payload": _stats(memoryFreeBytes=17179869185)},
    {"event": "node.host.stats", "payload": _stats(diskAvailableBytes=None)},
    {"event": "node.host.stats", "payload": _stats(cpuCount=0)},
    {"event": "node.host.stats", "payload": _stats(cpuCount=2.5)},
    {"event": "node.host.stats", "payload": _stats(loadAverage=[1, 2])},
    {"event": "node.host.stats", "payload": _stats(loadAverage=[1, 2, 100001])},
    {"event": "node.host.stats", "payload": _stats(updatedAtMs=1)},
    {"event": "node.host.stats", "payload": [1, 2]},
    {"event": "node.host.stats", "payloadJSON": "{not json"},
    {"event": "node.host.stats"},
    {"event": "node.host.stats", "payload": STATS, "extra": 1},
    {"event": "probe.custom", "payload": None},
    # The last valid one stands: node.describe shows it.
    {"event": "node.host.stats", "payload": _stats(cpuCount=4)},
]
RUNNER_CASES: list[Any] = [
    None,
    {},
    [],
    {"protocolFeatures": []},
    {"protocolFeatures": [], "workerHost": {"enabled": False}},
    {"protocolFeatures": ["node-worker-supervisor-v6"]},
    {"protocolFeatures": ["node-worker-supervisor-v6"], "workerHost": {"enabled": "no"}},
    {"protocolFeatures": ["node-worker-supervisor-v6"], "workerHost": {"enabled": True}},
    {
        "protocolFeatures": ["node-worker-supervisor-v6"],
        "workerHost": {"enabled": False, "capacity": {"total": 1, "available": 1}},
    },
    {"protocolFeatures": ["node-worker-supervisor-v6", "x"], "workerHost": {"enabled": False}},
    {"protocolFeatures": ["node-worker-supervisor-v7"], "workerHost": {"enabled": False}},
    {"protocolFeatures": ["node-worker-supervisor-v5"], "workerRuns": 1},
    {"protocolFeatures": ["node-worker-supervisor-v6"], "workerHost": {"enabled": False}},
]
SKILLS_CASES: list[Any] = [
    None,
    [],
    {},
    {"skills": [], "extra": 1},
    {"skills": "none"},
    {"skills": [_skill("Bad--Name")]},
    {"skills": [_skill("ok-skill", description="")]},
    {"skills": [{"name": "ok-skill"}]},
    {"skills": [{**_skill("ok-skill"), "extra": True}]},
    {"skills": [_skill(f"s{i}") for i in range(65)]},
    {"skills": [_skill("b-skill", description=" two "), _skill("a-skill"), _skill("a-skill", "x")]},
    {"skills": []},
]
TOOLS_CASES: list[Any] = [
    None,
    {},
    {"tools": {}},
    {"tools": [_tool(name="9bad")]},
    {"tools": [_tool(description=None)]},
    {"tools": [_tool(mcp={"server": "s"})]},
    {"tools": [_tool(parameters=[1])]},
    {"tools": [_tool(extra=1)]},
    {"tools": [_tool(command="demo.run"), _tool(name="other", command="")]},
    # Normalized: trimmed, default parameters, sorted, one per plugin and name, only those
    # an approved command runs, node-mcp only for MCP calls.
    {
        "tools": [
            _tool(name="zeta", command=COMMAND, description=" last "),
            _tool(pluginId="alpha", name="Beta", command=COMMAND, parameters={"type": "object"}),
            _tool(pluginId="alpha", name="beta", command=COMMAND),
            _tool(pluginId="alpha", name="Beta", command=COMMAND, description="duplicate"),
            _tool(name="unapproved", command="demo.run"),
            _tool(name="no_command"),
            _tool(pluginId="node-mcp", name="mcp_tool", command=COMMAND),
            _tool(name="with_mcp", command=COMMAND, mcp={"server": " s ", "tool": "t"}),
        ]
    },
]
SURFACE_CASES: list[Any] = [None, {}, {"surface": " "}, {"surface": 5}, {"surface": " canvas "}]
#: The node's other requests: its pending-work queue (empty on both) and invoke results for
#: no pending invoke (``<node>`` is the node's own id), each well formed and refused.
OTHER_CASES: list[tuple[str, Any]] = [
    ("node.pending.pull", None),
    ("node.pending.pull", {"x": 1}),
    ("node.pending.drain", {}),
    ("node.pending.drain", {"maxItems": 0}),
    ("node.pending.drain", {"maxItems": 11}),
    ("node.pending.drain", {"maxItems": 2.5}),
    ("node.pending.drain", {"maxItems": 3, "x": 1}),
    ("node.pending.ack", {}),
    ("node.pending.ack", {"ids": []}),
    ("node.pending.ack", {"ids": [""]}),
    ("node.pending.ack", {"ids": [" a ", "a", "b"]}),
    ("node.invoke.result", None),
    ("node.invoke.result", {"id": "late"}),
    ("node.invoke.result", {"id": "late", "nodeId": "<node>", "ok": True}),
    ("node.invoke.result", {"id": "late", "nodeId": "other", "ok": True}),
    ("node.invoke.result", {"id": "", "nodeId": "<node>", "ok": "yes"}),
    ("node.invoke.result", {"id": "late", "nodeId": "<node>", "ok": False, "error": None}),
    ("node.invoke.result", {"id": "late", "nodeId": "<node>", "ok": True, "payloadJSON": 5}),
    ("node.invoke.result", {"id": "late", "nodeId": "<node>", "ok": True, "payloadJSON": None}),
    ("node.invoke.result", {"id": "l", "nodeId": "<node>", "ok": False, "error": {"code": ""}}),
    ("node.invoke.result", {"id": "l", "nodeId": "<node>", "ok": False, "error": {"x": 1}}),
    ("node.invoke.result", {"id": "l", "nodeId": "<node>", "ok": True, "extra": 1}),
]

#: Sent while the node's surface awaits approval: every node event is refused alike.
BEFORE_APPROVAL: list[tuple[str, Any]] = [
    ("node.event", {"event": "node.host.stats", "payload": STATS}),
    ("node.event", {"event": "node.presence.alive", "payloadJSON": '{"trigger":"manual"}'}),
    ("node.event", {"event": "probe.custom", "payload": {"x": 1}}),
    # The params are checked first (the closed NodeEventParamsSchema).
    ("node.event", None),
    ("node.event", {"event": ""}),
    ("node.event", {"event": 5, "extra": True}),
    ("node.event", {"event": "probe.custom", "payloadJSON": {"x": 1}}),
    ("node.skills.update", {"skills": []}),
    ("node.pluginTools.update", {"tools": []}),
]
REQUESTS: list[tuple[str, Any]] = (
    [("node.event", case) for case in HOST_STATS_CASES]
    + [("node.runnerInventory.update", case) for case in RUNNER_CASES]
    + [("node.skills.update", case) for case in SKILLS_CASES]
    + [("node.pluginTools.update", case) for case in TOOLS_CASES]
    + [("node.pluginSurface.refresh", case) for case in SURFACE_CASES]
    + OTHER_CASES
)


async def _approve_surface(operator: RawClient, node: RawClient, node_id: str) -> None:
    """Approve the node's declared surface (``node.pair.list``, ``node.pair.approve``) and
    wait until the node is told."""
    async with asyncio.timeout(20):
        while True:
            listed = await operator.ok("node.pair.list", {})
            pending = [r for r in listed["pending"] if r["nodeId"] == node_id]
            if pending:
                break
            await asyncio.sleep(0.2)
    await operator.ok("node.pair.approve", {"requestId": pending[0]["requestId"]})
    await node.wait_event("node.pair.resolved", timeout=20)


def _answer(res: dict[str, Any], node_id: str) -> Any:
    """The comparable part of an answer: the device id replaced by a placeholder, a drained
    item's creation time by whether it is one."""
    text = json.dumps({k: res[k] for k in ("ok", "payload", "error") if k in res})
    answer = json.loads(text.replace(node_id, "<node>"))
    payload = answer.get("payload")
    if isinstance(payload, dict) and isinstance(payload.get("items"), list):
        for item in payload["items"]:
            stamp = item.get("createdAtMs")
            item["createdAtMs"] = isinstance(stamp, int) and stamp > 0
    return answer


async def _session(url: str, token: str, requests: list[tuple[str, Any]]) -> dict[str, Any]:
    """A node sends ``requests``, then ``retired`` and ``current`` runner declarations around
    a ``node.describe`` each; returns the answers, the descriptions and the node.hostStats
    events an operator saw."""
    identity = DeviceIdentity.generate()
    node_id = identity.device_id
    async with (
        raw_operator(url, scopes=OPERATOR_SCOPES, auth={"token": token}) as operator,
        raw_node(
            url, [COMMAND], identity, auth={"token": token}, extra={"pathEnv": PATH_ENV}
        ) as node,
    ):
        answers = []
        for method, params in BEFORE_APPROVAL:
            answers.append(_answer(await node.call(method, params, timeout=20), node_id))
        await _approve_surface(operator, node, node_id)
        for method, params in requests:
            params = json.loads(json.dumps(params).replace("<node>", node_id))
            answers.append(_answer(await node.call(method, params, timeout=20), node_id))
        described = await operator.ok("node.describe", {"nodeId": node_id})
        retired = {"protocolFeatures": ["node-worker-supervisor-v4"]}
        answers.append(_answer(await node.call("node.runnerInventory.update", retired), node_id))
        with_issue = await operator.ok("node.describe", {"nodeId": node_id})
        # The node's requests were answered in order; the events went out before them.
        await operator.ok("health")
        events = [
            _answer({"ok": True, "payload": e["payload"]}, node_id)
            for e in operator.events_named("node.hostStats")
        ]
    return {"answers": answers, "describe": described, "issue": with_issue, "events": events}


def _projection(entry: dict[str, Any]) -> dict[str, Any]:
    """The self-reported part of a node.describe answer, receipt times masked."""
    shown = {k: entry.get(k) for k in ("hostStats", "nodePluginTools", "pathEnv", "issues")}
    if isinstance(shown["hostStats"], dict):
        shown["hostStats"] = dict(shown["hostStats"])
        stamp = shown["hostStats"].pop("updatedAtMs")
        assert isinstance(stamp, int) and stamp > 0, entry
    return shown


def test_node_self_reports_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """Every self-report answer, node.describe's projection of them and the node.hostStats
    events are the same on both gateways."""

    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        return await asyncio.gather(
            _session(real.url, real.token, REQUESTS), _session(ours.url, ours.token, REQUESTS)
        )

    theirs, mine = asyncio.run(both())
    sent = [("before approval: " + m, p) for m, p in BEFORE_APPROVAL] + REQUESTS
    labels = [f"{m} {json.dumps(p)[:120]}" for m, p in sent] + ["runner retired v4"]
    differing = [
        f"{label}:\n  real {a}\n  ours {b}"
        for label, a, b in zip(labels, theirs["answers"], mine["answers"], strict=True)
        if a != b
    ]
    assert not differing, "answers differ:\n" + "\n".join(differing)
    assert _projection(mine["describe"]) == _projection(theirs["describe"])
    assert _projection(mine["issue"]) == _projection(theirs["issue"])
    assert _projection(theirs["issue"])["issues"], theirs["issue"]  # the case is not vacuous
    assert _projection(mine["describe"])["hostStats"] == _stats(cpuCount=4)
    for events in (theirs["events"], mine["events"]):
        for event in events:
            event["payload"]["hostStats"].pop("updatedAtMs")
    assert mine["events"] == theirs["events"]
    assert len(mine["events"]) == 4  # one per valid snapshot
