"""The real ``openclaw`` CLI's operator commands in remote mode against OUR gateway and the
REAL one side by side (issue #17): ``models list``, ``logs``, ``cron list``, ``gateway
stability``, ``gateway usage-cost``, ``approvals pending``, ``approvals get --gateway``,
``gateway probe``, ``devices reject``, ``status`` and ``health`` (plain and ``--json``).
Each runs on both and the outputs are compared modulo ids, times, paths and versions.

Where our gateway has no such feature the output is the real one's shape, empty: the real
gateway ships built-in cron jobs and records diagnostic events; ours has no scheduler and
records none (the tests say so where they compare). One difference remains and is named:
``models list`` shows ``local: null`` here (the model refs of our providers keep no base
URL to tell a loopback provider by).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway, RawClient, raw_operator
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import (
    GatewayFactory,
    NodeHostFactory,
    OpenClawInstall,
    RealGateway,
    RealNodeHost,
    RemoteCli,
    strip_ansi,
)
from tests.interop.test_gw_real_clients import eventually

#: Bound of a real node host's connect and pairing steps (it takes seconds to start).
NODE_HOST_S = 90.0

pytestmark = pytest.mark.timeout(600)


class Side:
    """One gateway and the real CLI pointed at it."""

    def __init__(self, name: str, gateway: RealGateway | BundledGateway, cli: RemoteCli) -> None:
        self.name, self.gateway, self.cli = name, gateway, cli
        self.url, self.token = gateway.url, gateway.token


@pytest.fixture(scope="module")
def sides(
    openclaw_install: OpenClawInstall, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Side]]:
    """Both gateways (manual pairing, so a device can be left pending), each with a fake
    model, and a remote-mode CLI for each."""
    factory = GatewayFactory(openclaw_install)
    root = tmp_path_factory.mktemp("cli-ops-ours")
    clis: list[RemoteCli] = []
    with FakeLLM() as real_llm, FakeLLM() as our_llm:
        write_fake_providers(root / "state", our_llm.port)
        ours: BundledGateway | None = None
        try:
            with ThreadPoolExecutor(2, thread_name_prefix="cli-ops") as pool:
                real_future = pool.submit(factory, manual_pairing=True, fake_llm_port=real_llm.port)
                ours_future = pool.submit(
                    BundledGateway.start, root=root, args=["--manual-pairing"]
                )
                try:
                    ours = ours_future.result(timeout=120)
                finally:
                    real: RealGateway = real_future.result(timeout=240)
            result = {}
            gateways: tuple[tuple[str, RealGateway | BundledGateway], ...] = (
                ("real", real),
                ("ours", ours),
            )
            for name, gateway in gateways:
                cli = RemoteCli(openclaw_install, gateway.url, gateway.token)
                clis.append(cli)
                result[name] = Side(name, gateway, cli)
            yield result
        finally:
            for cli in clis:
                cli.cleanup()
            if ours is not None:
                ours.cleanup()
            factory.close()


def both(sides: dict[str, Side], *args: str) -> tuple[Any, Any]:
    """``openclaw ARGS --json`` on the real gateway and on ours: (real, ours)."""
    return sides["real"].cli.cli_json(*args), sides["ours"].cli.cli_json(*args)


def shape(value: Any) -> Any:
    """The structure of a JSON value: keys and value kinds, every list by its first item."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "null" if value is None else type(value).__name__


def test_models_list_is_our_catalog_as_the_real_cli_shows_it(sides: dict[str, Side]) -> None:
    """The CLI asks for models.list only from a gateway advertising published-model-catalog
    (it refused ours before calling); both show the fake model alike, ``local`` aside."""
    real, ours = both(sides, "models", "list")
    assert ours["count"] == real["count"] == 1
    strip = [{k: v for k, v in m.items() if k != "local"} for m in real["models"]]
    assert [{k: v for k, v in m.items() if k != "local"} for m in ours["models"]] == strip
    assert strip[0]["key"] == "fake/fake-model" and strip[0]["tags"] == ["default"]


def _records(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in strip_ansi(text).splitlines() if line.strip()]


def test_logs_tails_our_own_log_file(sides: dict[str, Side]) -> None:
    """``openclaw logs --json --limit 3``: a meta record naming the file, three log lines
    parsed into time/level/message, and the truncation notice, on both; our lines are our
    gateway's own log (a connect line among them), without the token."""
    runs = {
        name: _records(side.cli.cli("logs", "--json", "--limit", "3").stdout)
        for name, side in sides.items()
    }
    real, ours = runs["real"], runs["ours"]
    assert (
        [r["type"] for r in ours]
        == [r["type"] for r in real]
        == [
            "meta",
            "log",
            "log",
            "log",
            "notice",
        ]
    )
    assert set(ours[0]) == set(real[0])
    assert ours[0]["file"].endswith("gateway.log") and ours[0]["sourceKind"] == "file"
    for record in ours[1:4]:
        assert {"time", "level", "message", "raw"} <= set(record), record
        assert record["level"] in {"debug", "info", "warning", "error"}
    assert ours[4] == real[4]
    whole = sides["ours"].cli.cli("logs", "--json", "--limit", "500").stdout
    assert "connected from 127.0.0.1" in whole
    assert sides["ours"].token not in whole


def test_cron_list_is_an_empty_inventory_page(sides: dict[str, Side]) -> None:
    """The CLI validates the page (revision, total, offset, limit, hasMore, nextOffset): ours
    passes it with no jobs; the real one lists its built-in jobs."""
    real, ours = both(sides, "cron", "list")
    assert set(ours) == set(real)
    assert ours["jobs"] == [] and ours["total"] == 0 and ours["hasMore"] is False
    assert ours["limit"] == real["limit"] and ours["offset"] == real["offset"] == 0
    assert ours["snapshotRevision"].startswith("sha256:")


def test_gateway_stability_is_an_empty_record(sides: dict[str, Side]) -> None:
    """The same record, empty on ours (no diagnostic recorder): the real one's first and
    last sequence numbers are left out as it leaves them out for no events."""
    real, ours = both(sides, "gateway", "stability")
    assert set(ours) == set(real) - {"firstSeq", "lastSeq"}
    assert {k: shape(v) for k, v in ours.items() if k not in ("events", "summary")} == {
        k: shape(real[k]) for k in ours if k not in ("events", "summary")
    }
    assert ours["events"] == [] and ours["count"] == 0 and ours["summary"] == {"byType": {}}


def test_gateway_usage_cost_has_the_real_days_and_columns(sides: dict[str, Side]) -> None:
    """30 days of the same columns, and the same totals (no usage yet on either)."""
    real, ours = both(sides, "gateway", "usage-cost")
    assert shape(ours) == shape(real)
    assert [d["date"] for d in ours["daily"]] == [d["date"] for d in real["daily"]]
    assert ours["totals"] == real["totals"]


def test_approvals_pending_is_empty_on_both(sides: dict[str, Side]) -> None:
    """exec, plugin and system-agent approval lists: none pending anywhere."""
    real, ours = both(sides, "approvals", "pending")
    assert ours == real == {"approvals": []}


def test_approvals_get_gateway_reads_our_policy(sides: dict[str, Side]) -> None:
    """``approvals get --gateway`` (exec.approvals.get): the same snapshot fields; ours has
    no policy file (this gateway runs no command on its host)."""
    real, ours = both(sides, "approvals", "get", "--gateway")
    assert set(ours) == set(real)
    assert ours["file"]["version"] == real["file"]["version"] == 1
    assert ours["exists"] is False


def _configured_target(probe: dict[str, Any]) -> dict[str, Any]:
    target: dict[str, Any] = next(t for t in probe["targets"] if t["id"] == "configRemote")
    return target


def test_gateway_probe_is_scope_limited_on_both(sides: dict[str, Side]) -> None:
    """The probe connects without a device: both grant it no scope, so both report
    ``connected_no_operator_scope`` with the same warning (ours granted operator.read)."""
    real, ours = both(sides, "gateway", "probe")
    assert ours["capability"] == real["capability"] == "connected_no_operator_scope"
    mine, theirs = _configured_target(ours), _configured_target(real)
    assert (
        mine["auth"]
        == theirs["auth"]
        == {
            "role": "operator",
            "scopes": [],
            "capability": "connected_no_operator_scope",
        }
    )
    assert mine["connect"]["scopeLimited"] is theirs["connect"]["scopeLimited"] is True
    assert mine["connect"]["error"] == theirs["connect"]["error"]
    codes = {w["code"] for w in ours["warnings"]}
    assert "probe_scope_limited" in codes
    assert codes == {w["code"] for w in real["warnings"]}


async def _pending_request(url: str, token: str, identity: DeviceIdentity) -> str:
    client = await RawClient.open(url)
    try:
        res = await client.connect(identity, auth={"token": token})
    finally:
        await client.close()
    assert res["ok"] is False, res
    request_id: str = res["error"]["details"]["requestId"]
    return request_id


def test_devices_reject_prints_the_rejected_device(sides: dict[str, Side]) -> None:
    """``openclaw devices reject <requestId>`` prints ``Rejected <deviceId>`` on both (ours
    answered without the device id: ``Rejected ok``); a second reject is refused alike."""
    outputs = {}
    for name, side in sides.items():
        identity = DeviceIdentity.generate()
        request_id = asyncio.run(_pending_request(side.url, side.token, identity))
        done = side.cli.cli("devices", "reject", request_id)
        outputs[name] = strip_ansi(done.stdout).strip().splitlines()[-1]
        assert outputs[name] == f"Rejected {identity.device_id}", (name, done.stdout)
        again = side.cli.cli("devices", "reject", request_id, "--json", check=False)
        assert again.returncode == 1
        assert json.loads(again.stdout)["error"]["message"] == "unknown requestId"


def _pending(gateway: RealGateway | BundledGateway, what: str, name: str) -> Any:
    """The pending ``devices`` or ``nodes`` request of the node host called ``name``, by the
    gateway's own CLI (the real one's, or ours)."""
    listed = gateway.cli_json(what, "list" if what == "devices" else "pending")
    rows = listed if isinstance(listed, list) else listed.get("pending", [])
    return next((r for r in rows if r.get("displayName") == name), None)


async def _paired_node_host(side: Side, factory: NodeHostFactory) -> tuple[RealNodeHost, str]:
    """The real node host on ``side``'s gateway, its device and its surface approved."""
    name = f"ops-node-{side.name}"
    gateway = side.gateway
    host = factory(port=gateway.port, token=gateway.token, display_name=name)
    device = await eventually(
        lambda: _pending(gateway, "devices", name), f"{name}'s device request", NODE_HOST_S
    )
    await asyncio.to_thread(gateway.cli, "devices", "approve", device["requestId"])
    await asyncio.to_thread(host.restart)
    surface = await eventually(
        lambda: _pending(gateway, "nodes", name), f"{name}'s surface request", NODE_HOST_S
    )
    assert "system.execApprovals.get" in surface["commands"], surface
    await asyncio.to_thread(gateway.cli, "nodes", "approve", surface["requestId"])
    return host, str(surface["nodeId"])


async def test_approvals_get_node_reads_the_nodes_own_policy(
    sides: dict[str, Side], real_node_host: NodeHostFactory
) -> None:
    """``approvals get --node <id>`` (exec.approvals.node.get): both gateways ask the real
    node host for its policy and the CLI shows the same snapshot. The two sides run at
    once: most of each is waiting for its node host to pair and reconnect."""

    async def shown_on(name: str, side: Side) -> Any:
        _host, node_id = await _paired_node_host(side, real_node_host)

        def policy() -> Any:
            done = side.cli.cli("approvals", "get", "--node", node_id, "--json", check=False)
            return json.loads(done.stdout) if done.returncode == 0 else None

        return await eventually(policy, f"the node's policy ({name})", 60, interval=2)

    names = list(sides)
    results = await asyncio.gather(*(shown_on(name, sides[name]) for name in names))
    shown = dict(zip(names, results, strict=True))
    real, ours = shown["real"], shown["ours"]
    assert shape(ours) == shape(real)
    assert ours["file"] == real["file"] or set(ours["file"]) == set(real["file"])
    assert ours["exists"] == real["exists"]


# ------------------------------------------------------------------- status and health
#: What the real gateway's ``status`` measures and ours cannot (its event-loop delay, its
#: V8 heap, its shutdown budget): ours leaves them out, as the real one leaves out what it
#: did not collect.
STATUS_UNMEASURED = {"eventLoop", "processMemory", "shutdownBudget"}
#: ``health``'s optional parts ours has nothing for: plugins, config hot reload, event loop.
HEALTH_UNMEASURED = {"plugins", "configReload", "eventLoop"}

_URL = re.compile(r"wss?://127\.0\.0\.1:\d+")
_MS = re.compile(r"\b(reachable|duration:) \d+ms")
_PATH = re.compile(r"/tmp/\S+")


def _normalized(text: str) -> str:
    """CLI text modulo the gateway's URL, timings and temporary paths."""
    text = _URL.sub("ws://127.0.0.1:PORT", strip_ansi(text))
    return _PATH.sub("PATH", _MS.sub(r"\1 Nms", text))


def _overview(text: str) -> tuple[dict[str, str], list[str]]:
    """``openclaw status``'s overview table as {item: value} (wrapped rows joined) and the
    lines outside the table."""
    rows: dict[str, str] = {}
    rest: list[str] = []
    last = ""
    for line in _normalized(text).splitlines():
        if not line.startswith("│"):
            if not line.startswith(("┌", "├", "└")):
                rest.append(line.rstrip())
            continue
        cells = [cell.strip() for cell in line.split("│")[1:-1]]
        if cells[0]:
            last = cells[0]
            rows[last] = cells[1]
        else:
            rows[last] = f"{rows[last]} {cells[1]}".strip()
    return rows, rest


def _status_text(sides: dict[str, Side]) -> dict[str, tuple[dict[str, str], list[str]]]:
    return {name: _overview(side.cli.cli("status").stdout) for name, side in sides.items()}


def test_status_prints_the_same_overview(sides: dict[str, Side]) -> None:
    """``openclaw status``: the same items and values on both (modulo URL, latency and the
    CLI's temporary paths), the same sections after the table; the one named difference is
    the heartbeat: the real one schedules a run every 30 minutes, ours none."""
    shown = _status_text(sides)
    (real, real_rest), (ours, ours_rest) = shown["real"], shown["ours"]
    assert list(ours) == list(real)
    assert "Sessions" in ours and "Agents" in ours
    assert ours["Heartbeat"] == "disabled (main)" and real["Heartbeat"].startswith("30m (main")
    assert {k: v for k, v in ours.items() if k != "Heartbeat"} == {
        k: v for k, v in real.items() if k != "Heartbeat"
    }
    assert ours["Sessions"].startswith("0 stored")
    assert ours_rest == real_rest


def _zeroed(value: Any) -> Any:
    """``value`` with every count 0 (the same keys)."""
    if isinstance(value, dict):
        return {key: _zeroed(item) for key, item in value.items()}
    return 0 if isinstance(value, int) and not isinstance(value, bool) else value


def _without_own_cron_runs(tasks: dict[str, Any]) -> dict[str, Any]:
    """The real gateway's task summary without the runs of its own managed cron jobs
    (memory-core's dreaming job, created at startup, may have run by now; ours has no such
    job): when every task is a cron run, the summary of none."""
    if tasks["total"] and tasks["total"] == tasks["byRuntime"]["cron"]:
        zeroed: dict[str, Any] = _zeroed(tasks)
        return zeroed
    return tasks


def test_status_json_is_the_real_summary_of_our_state(sides: dict[str, Side]) -> None:
    """``openclaw status --json`` (it failed on ours: ``reading 'byAgent'``): the same
    summary, sessions, tasks, agents and collection notes alike; ours reports its own pid,
    no heartbeat, no host desktop and no memory plugin."""
    real, ours = both(sides, "status")
    assert set(real) - set(ours) == STATUS_UNMEASURED and set(ours) <= set(real)
    real["tasks"] = _without_own_cron_runs(real["tasks"])
    alike = (
        "channelSummary",
        "queuedSystemEvents",
        "degradedSecretOwners",
        "degradedPlugins",
        "tasks",
        "taskAudit",
        "sessions",
        "modelRuntime",
        "agents",
        "collection",
        "os",
        "gatewayService",
        "nodeService",
    )
    assert {key: ours[key] for key in alike} == {key: real[key] for key in alike}
    assert ours["sessions"]["byAgent"] == [
        {"agentId": "main", "path": "[redacted]", "count": 0, "recent": []}
    ]
    mine, theirs = ours["heartbeat"]["agents"], real["heartbeat"]["agents"]
    assert [set(a) for a in mine] == [set(a) for a in theirs]
    assert theirs[0]["every"] == "30m"
    assert mine == [
        {
            "agentId": "main",
            "enabled": False,
            "every": "disabled",
            "everyMs": None,
            "waitingForRoute": False,
        }
    ]
    assert (
        ours["hostDesktop"]
        == {k: real["hostDesktop"][k] for k in ("enabled", "state")}
        == {"enabled": False, "state": "disabled"}
    )
    assert ours["memoryPlugin"] == {"enabled": False, "slot": None, "reason": "plugins disabled"}
    process = sides["ours"].gateway
    assert isinstance(process, BundledGateway) and process.proc is not None
    assert ours["pid"] == process.proc.pid
    for gateway in (real["gateway"], ours["gateway"]):
        assert _URL.fullmatch(gateway.pop("url")) and gateway.pop("connectLatencyMs") >= 0
    assert ours["gateway"] == real["gateway"]


def test_health_prints_the_same_lines(sides: dict[str, Side]) -> None:
    """``openclaw health``: the same lines modulo timings and paths, but the real one's
    event-loop line (ours measures none) and the heartbeat interval (ours: disabled)."""
    runs = {
        name: _normalized(side.cli.cli("health").stdout).splitlines()
        for name, side in sides.items()
    }
    real = [line for line in runs["real"] if not line.startswith("Gateway event loop:")]
    ours = runs["ours"]
    assert "Heartbeat interval: disabled (main)" in ours
    assert "Heartbeat interval: 30m (main)" in real
    beat = "Heartbeat interval:"
    assert [x for x in ours if not x.startswith(beat)] == [
        x for x in real if not x.startswith(beat)
    ]
    assert "Session store (main): PATH (0 entries)" in ours


def test_health_json_has_the_real_shape(sides: dict[str, Side]) -> None:
    """``openclaw health --json``: the same snapshot keys (but what ours does not have),
    no channels on either, the agent with its sessions: ours in its own state database."""
    real, ours = both(sides, "health")
    assert set(real) - set(ours) == HEALTH_UNMEASURED and set(ours) <= set(real)
    alike = ("ok", "channels", "channelOrder", "channelLabels", "defaultAgentId", "modelRuntime")
    assert {key: ours[key] for key in alike} == {key: real[key] for key in alike}
    assert real["heartbeatSeconds"] == 1800 and ours["heartbeatSeconds"] == 0
    (mine,), (theirs,) = ours["agents"], real["agents"]
    assert set(mine) == set(theirs) and mine["isDefault"] is theirs["isDefault"] is True
    assert set(mine["heartbeat"]) <= set(theirs["heartbeat"])
    assert {k: v for k, v in ours["sessions"].items() if k != "path"} == {
        k: v for k, v in real["sessions"].items() if k != "path"
    }
    process = sides["ours"].gateway
    assert ours["sessions"]["path"] == str(process.state_dir / "gateway.sqlite3")
    assert mine["sessions"] == ours["sessions"]


#: A ``status`` session row's parts that differ by nature between two gateways: the ids
#: and times of two different sessions.
_ROW_OWN = {"sessionId", "updatedAt", "age", "flags"}


async def _status_with_a_session(url: str, token: str) -> dict[str, Any]:
    """``status`` as an ``operator.admin`` caller after creating one session."""
    async with raw_operator(url, auth={"token": token}) as op:
        await op.ok("sessions.create", {"key": "agent:main:probe", "label": "Probe"})
        status: dict[str, Any] = await op.ok("status", {})
        return status


def test_status_lists_a_session_and_the_default_model_like_the_real_one(
    openclaw_install: OpenClawInstall,
    real_gateway: GatewayFactory,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """With a fake model configured and one session, ``status`` to an admin caller: the
    same default model and context window, the same session row (modulo its id and times)
    in ``recent`` and ``byAgent[].recent``; ours said null and [] before. The real CLI's
    ``status --json`` (not an admin caller) counts the session alike and lists no rows."""
    root = tmp_path_factory.mktemp("status-session-ours")
    with FakeLLM() as real_llm, FakeLLM() as our_llm:
        write_fake_providers(root / "state", our_llm.port)
        real = real_gateway(fake_llm_port=real_llm.port)
        ours = BundledGateway.start(root=root)
        try:
            answers = {
                name: asyncio.run(_status_with_a_session(gw.url, gw.token))["sessions"]
                for name, gw in (("real", real), ("ours", ours))
            }
            # The real gateway's own automations (the heartbeat's main-session turn) may add
            # a row of theirs now and then: compare the probe's row, and say which keys came.
            keys = {name: [row["key"] for row in side["recent"]] for name, side in answers.items()}
            assert keys["ours"] == ["agent:main:probe"], keys
            assert "agent:main:probe" in keys["real"], keys
            mine = answers["ours"]["recent"][0]
            (theirs,) = [r for r in answers["real"]["recent"] if r["key"] == "agent:main:probe"]
            assert answers["ours"]["defaults"] == answers["real"]["defaults"]
            assert answers["ours"]["defaults"] == {"model": "fake-model", "contextTokens": 128_000}
            assert set(mine) == set(theirs)
            assert {k: v for k, v in mine.items() if k not in _ROW_OWN} == {
                k: v for k, v in theirs.items() if k not in _ROW_OWN
            }
            assert mine["flags"] == [f"id:{mine['sessionId']}"]
            assert theirs["flags"] == [f"id:{theirs['sessionId']}"]
            for side in answers.values():
                assert side["count"] == len(side["recent"]), side
                assert side["byAgent"][0]["recent"] == side["recent"]
            cli = RemoteCli(openclaw_install, ours.url, ours.token)
            try:
                shown = cli.cli_json("status")["sessions"]
            finally:
                cli.cleanup()
            assert shown["count"] == 1 and shown["recent"] == []
            assert shown["byAgent"][0]["path"] == "[redacted]"
        finally:
            ours.cleanup()
