"""The operator diagnostics methods of the bundled gateway over real loopback WebSockets:
hello-ok capabilities, ``models.*`` params, ``logs.tail`` over the gateway's real log file,
``usage.cost`` from real transcripts, ``cron.*``, ``config.get`` (redacted), the approval
lists, ``exec.approvals.node.get/set`` through a real node, and the scopes a device-less
connect keeps. The wordings are the real gateway 2026.9.6's (see
``tests/interop/test_cli_ops_real_client.py`` for the real CLI against both)."""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from gateway.chat.transcript_store import TranscriptStore
from gateway.logfile import read_tail
from gateway.methods.config import REDACTED
from openclaw_desktop.node import InvokeResult
from tests.helpers.bundled_gateway import (
    TOKEN,
    BundledGateway,
    RawClient,
    bundled_gateway,
    raw_operator,
    start_node,
)
from tests.integration.gateway.chat.test_gw_chat_runs import chat_gateway

pytestmark = pytest.mark.timeout(90)


@pytest.fixture(autouse=True)
def no_ambient_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the providers a test configures (never the developer's own keys)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")


async def test_hello_advertises_the_model_catalog_capabilities(tmp_path: Path) -> None:
    """Exactly the capabilities models.list honours (the real CLI's ``models list`` needs
    published-model-catalog before it calls)."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        assert op.hello is not None
        assert op.hello["features"]["capabilities"] == [
            "published-model-catalog",
            "session-scoped-model-catalog",
        ]


async def test_models_list_takes_the_real_params(tmp_path: Path) -> None:
    """sessionKey, agentId, includeDetails and view are accepted, provider filters, and the
    closed schema refuses anything else with the reference's wording."""
    async with chat_gateway(tmp_path) as chat:
        listed = await chat.op.ok(
            "models.list",
            {"sessionKey": "agent:main:main", "agentId": "main", "includeDetails": True},
        )
        assert [m["id"] for m in listed["models"]] == ["fake-model"]
        assert (await chat.op.ok("models.list", {"view": "all"})) == listed
        assert (await chat.op.ok("models.list", {"provider": "nobody"})) == {"models": []}
        bogus = await chat.op.error("models.list", {"bogus": 1})
        assert (
            bogus["message"] == "invalid models.list params: at root: unexpected property 'bogus'"
        )
        empty = await chat.op.error("models.list", {"sessionKey": ""})
        assert empty["message"] == (
            "invalid models.list params: at /sessionKey: must not have fewer than 1 characters"
        )
        not_object = await chat.op.error("models.list", [])
        assert (
            not_object["message"] == "invalid models.list params: must be object; must not be valid"
        )
        view = await chat.op.error("models.list", {"view": "x"})
        assert view["message"] == (
            "invalid models.list params: at /view: must be equal to constant; "
            "at /view: must match a schema in anyOf"
        )
        status = await chat.op.ok("models.authStatus", {"agentId": "main", "refresh": True})
        assert [p["provider"] for p in status["providers"]] == ["fake"]
        assert (await chat.op.ok("models.authStatus", {"sessionKey": "main"}))["providers"]
        stranger = await chat.op.error("models.authStatus", {"agentId": "ops"})
        assert stranger["message"] == 'unknown agent id "ops"'
        assert stranger["details"] == {"code": "UNKNOWN_AGENT_ID", "agentId": "ops"}
        both = await chat.op.error("models.list", {"preparedOnly": True, "refresh": True})
        assert both["message"] == "invalid models.list params: must not be valid"


def _assistant(text: str, when: datetime.datetime, **usage: int) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "usage": usage,
        "timestamp": int(when.timestamp() * 1000),
    }


async def test_usage_cost_sums_the_transcripts_per_day(tmp_path: Path) -> None:
    """Assistant usage recorded in the transcripts is summed per UTC day (reset transcripts
    too); days outside the range and messages without usage count nothing."""
    now = datetime.datetime.now(datetime.UTC)
    old = now - datetime.timedelta(days=40)
    store = TranscriptStore(tmp_path / "state" / "sessions")
    main = store.open("main")
    main.append({"role": "user", "content": "hi", "timestamp": int(now.timestamp() * 1000)})
    main.append(_assistant("a", now, input=10, output=5, totalTokens=15, cacheRead=2))
    main.append(_assistant("b", old, input=100, output=50, totalTokens=150))
    store.reset("main")
    store.open("agent:main:other").append(_assistant("c", now, input=1, output=1))
    store.close()
    async with chat_gateway(tmp_path) as chat:
        month = await chat.op.ok("usage.cost", {"days": 30})
        assert month["days"] == len(month["daily"]) == 30
        assert month["daily"][-1]["date"] == now.date().isoformat()
        totals = month["totals"]
        assert (totals["input"], totals["output"], totals["totalTokens"]) == (11, 6, 17)
        assert totals["cacheRead"] == 2 and totals["totalCost"] == 0
        assert month["daily"][-1]["totalTokens"] == 17
        day = old.date().isoformat()
        then = await chat.op.ok("usage.cost", {"startDate": day, "endDate": day})
        assert then["days"] == 1 and then["totals"]["totalTokens"] == 150
        alone = await chat.op.error("usage.cost", {"startDate": day})
        assert alone["message"] == "startDate and endDate must be provided together"
        bad = await chat.op.error("usage.cost", {"startDate": "2026-02-30", "endDate": day})
        assert bad["message"] == "invalid startDate: expected a valid YYYY-MM-DD calendar date"
        backwards = await chat.op.error("usage.cost", {"startDate": day, "endDate": "2000-01-01"})
        assert backwards["message"] == "startDate must not be after endDate"
        early = await chat.op.error("usage.cost", {"startDate": "0099-12-31", "endDate": day})
        assert early["message"] == "invalid startDate: expected a valid YYYY-MM-DD calendar date"
        # Past 366 days only the days with usage have a row (the reference's bound).
        century = await chat.op.ok("usage.cost", {"days": 10**12})
        assert century["days"] == 36_600
        assert [row["date"] for row in century["daily"]] == [day, now.date().isoformat()]
        assert century["totals"]["totalTokens"] == 167
        assert (await chat.op.ok("usage.cost", {"days": 0}))["days"] == 1
        assert (await chat.op.ok("usage.cost", {"range": "7d", "days": 2}))["days"] == 7


async def test_usage_cost_counts_the_days_of_the_calendar_asked_for(tmp_path: Path) -> None:
    """An assistant message at 23:30 UTC is on the next day in Tokyo and at UTC+1, the
    same day at UTC-5; the days end on today of that calendar."""
    late = datetime.datetime.now(datetime.UTC).replace(hour=23, minute=30) - datetime.timedelta(
        days=2
    )
    store = TranscriptStore(tmp_path / "state" / "sessions")
    store.open("main").append(_assistant("a", late, input=3, output=4, totalTokens=7))
    store.close()
    async with chat_gateway(tmp_path) as chat:
        for calendar, shift in (
            ({"mode": "specific", "timeZone": " asia/tokyo "}, 1),
            ({"mode": "specific", "utcOffset": "UTC+1"}, 1),
            ({"mode": "specific", "timeZone": "Nowhere/City", "utcOffset": "UTC-05:00"}, 0),
            ({"mode": "specific", "timeZone": "-05:00"}, 0),
            ({"mode": "specific"}, 0),
        ):
            answer = await chat.op.ok("usage.cost", {"days": 5, **calendar})
            used = [row["date"] for row in answer["daily"] if row["totalTokens"]]
            assert used == [(late.date() + datetime.timedelta(days=shift)).isoformat()], calendar
            assert answer["days"] == len(answer["daily"]) == 5
        bad_zone = await chat.op.error("usage.cost", {"mode": "specific", "timeZone": "Nowhere"})
        assert bad_zone["message"] == "invalid timeZone: expected a valid IANA time zone"
        bad_offset = await chat.op.error("usage.cost", {"mode": "specific", "utcOffset": "UTC+15"})
        assert bad_offset["message"] == "invalid utcOffset: expected UTC-12:00 through UTC+14:00"


async def test_cron_and_diagnostics_answer_the_empty_record(tmp_path: Path) -> None:
    """No scheduler and no diagnostic recorder: the reference's shapes, empty, and its closed
    cron.list schema and stability checks."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        page = await op.ok("cron.list", {"includeDisabled": False, "limit": 200, "offset": 0})
        assert page["jobs"] == [] and page["total"] == 0 and page["limit"] == 200
        assert page["hasMore"] is False and page["nextOffset"] is None
        assert page["snapshotRevision"].startswith("sha256:")
        low = await op.error("cron.list", {"limit": 0})
        assert low["message"] == "invalid cron.list params: at /limit: must be >= 1"
        status = await op.ok("cron.status", {})
        assert status["enabled"] is False and status["jobs"] == 0
        extra = await op.error("cron.status", {"x": 1})
        assert extra["message"] == "invalid cron.status params: at root: unexpected property 'x'"
        record = await op.ok("diagnostics.stability", {"limit": 25})
        assert record["events"] == [] and record["count"] == 0
        assert record["summary"] == {"byType": {}}
        wide = await op.error("diagnostics.stability", {"limit": 5000})
        assert wide["message"] == "limit must be between 1 and 1000"
        since = await op.error("diagnostics.stability", {"sinceSeq": -1})
        assert since["message"] == "sinceSeq must be a non-negative integer"


async def test_config_get_is_redacted(tmp_path: Path) -> None:
    """Our configuration in the reference's layout; the token is never in it."""
    async with chat_gateway(tmp_path) as chat:
        got = await chat.op.ok("config.get", {})
        assert got["valid"] is True and got["issues"] == []
        assert got["config"]["gateway"]["auth"] == {"mode": "token", "token": REDACTED}
        assert got["config"]["agents"]["defaults"]["model"]["primary"] == "fake/fake-model"
        assert json.loads(got["raw"]) == got["config"]
        assert TOKEN not in json.dumps(got)
        refused = await chat.op.error("config.get", {"path": "gateway"})
        assert (
            refused["message"] == "invalid config.get params: at root: unexpected property 'path'"
        )


async def test_config_get_names_the_providers_file_and_whether_it_exists(tmp_path: Path) -> None:
    """``path`` is the one configuration file we read (providers.json in the state dir, not
    the state dir itself) and ``exists`` is the truth about it, either way."""
    async with chat_gateway(tmp_path) as chat:
        got = await chat.op.ok("config.get", {})
        providers = chat.gw.app.config.state_dir / "providers.json"
        assert got["path"] == str(providers) and providers.is_file()
        assert got["exists"] is True
    bare = tmp_path / "bare"
    async with bundled_gateway(bare) as gw, raw_operator(gw.url) as op:
        got = await op.ok("config.get", {})
        assert got["path"] == str(gw.app.config.state_dir / "providers.json")
        assert got["exists"] is False


async def test_approval_lists_and_the_host_policy(tmp_path: Path) -> None:
    """Nothing pending (the agent here never asks); the host policy denies exec."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        for method in ("exec.approval.list", "plugin.approval.list", "openclaw.approval.list"):
            assert await op.ok(method, {}) == []
        policy = await op.ok("exec.approvals.get", {})
        assert policy["exists"] is False and policy["file"]["version"] == 1
        assert policy["resolvedDefaults"]["security"] == "deny"
    async with (
        bundled_gateway(tmp_path / "b") as gw,
        raw_operator(gw.url, scopes=["operator.read"]) as reader,
    ):
        denied = await reader.error("exec.approval.list", {})
        assert denied["details"]["missingScope"] == "operator.approvals"
        admin_only = await reader.error("exec.approvals.get", {})
        assert admin_only["details"]["missingScope"] == "operator.admin"


async def test_node_exec_approvals_go_to_the_node(tmp_path: Path) -> None:
    """exec.approvals.node.get/set run the node's system.execApprovals.get/set and answer
    with its payload; one of file or native (with baseHash) is required."""
    seen: list[Any] = []

    async def policy_get(params: Any) -> InvokeResult:
        seen.append(("get", params))
        return InvokeResult.success({"path": "/node/exec-approvals.json", "hash": "h1"})

    async def policy_set(params: Any) -> InvokeResult:
        seen.append(("set", params))
        return InvokeResult.success({"hash": "h2"})

    handlers = {
        "system.execApprovals.get": ("system", policy_get),
        "system.execApprovals.set": ("system", policy_set),
    }
    allow = ("system.execApprovals.get", "system.execApprovals.set")
    async with chat_gateway(tmp_path, allow=allow) as chat:
        node = start_node(chat.gw.url, handlers=handlers)
        try:
            event = await chat.op.wait_event(
                "node.pair.requested", lambda e: e["payload"]["nodeId"] == node.node_id
            )
            await chat.op.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            async with asyncio.timeout(10):
                while not node.surface_resolved():
                    await asyncio.sleep(0.05)
            got = await chat.op.ok("exec.approvals.node.get", {"nodeId": node.node_id})
            assert got == {"path": "/node/exec-approvals.json", "hash": "h1"}
            file = {"version": 1, "defaults": {}, "agents": {}}
            put = await chat.op.ok(
                "exec.approvals.node.set",
                {"nodeId": node.node_id, "file": file, "baseHash": "h1"},
            )
            assert put == {"hash": "h2"}
            assert seen == [("get", {}), ("set", {"file": file, "baseHash": "h1"})]
            neither = await chat.op.error("exec.approvals.node.set", {"nodeId": node.node_id})
            assert neither["message"] == (
                "invalid exec.approvals.node.set params: must have required property 'file'; "
                "must have required property 'native'; must match exactly one schema in oneOf"
            )
            native: dict[str, Any] = {"rules": []}
            for params, problems in (
                (
                    {"file": {}, "native": {}},
                    "at /file: must have required property 'version'; at /native: must have "
                    "required property 'rules'; must not be valid; must have required property "
                    "'baseHash'",
                ),
                (
                    {"native": native},
                    "must have required property 'file'; must not be valid; "
                    "must have required property 'baseHash'",
                ),
                ({"file": file, "native": native, "baseHash": "h"}, "must not be valid"),
            ):
                wrong = await chat.op.error(
                    "exec.approvals.node.set", {"nodeId": node.node_id, **params}
                )
                assert wrong["message"] == (
                    f"invalid exec.approvals.node.set params: {problems}; "
                    "must match exactly one schema in oneOf"
                )
            gone = await chat.op.error("exec.approvals.node.get", {"nodeId": "nope"})
            assert gone == {
                "code": "UNAVAILABLE",
                "message": "NOT_CONNECTED: node not connected",
                "details": {
                    "nodeError": {"code": "NOT_CONNECTED", "message": "node not connected"},
                    "nodeCommandDispatched": False,
                },
            }
        finally:
            await node.aclose()


async def _deviceless(url: str, **kw: Any) -> tuple[RawClient, dict[str, Any]]:
    client = await RawClient.open(url, **kw.pop("open", {}))
    res = await client.connect(None, scopes=["operator.read", "operator.admin"], **kw)
    assert res["ok"] is True, res
    return client, res["payload"]["auth"]


async def test_a_deviceless_probe_is_scope_limited(tmp_path: Path) -> None:
    """Without a device, a shared-token connect keeps its scopes only as the local CLI
    (cli/cli) or a local backend (gateway-client/backend): a probe gets none, may call
    health but not status (``openclaw gateway probe`` shows connected_no_operator_scope)."""
    async with bundled_gateway(tmp_path) as gw:
        probe, auth = await _deviceless(gw.url, client_mode="probe")
        try:
            assert auth["scopes"] == []
            assert (await probe.ok("health", {}))["ok"] is True
            refused = await probe.error("status", {})
            assert refused["message"] == "missing scope: operator.read"
        finally:
            await probe.close()
        for client_id, mode in (("cli", "cli"), ("gateway-client", "backend")):
            kept, auth = await _deviceless(gw.url, client_id=client_id, client_mode=mode)
            await kept.close()
            assert auth["scopes"] == ["operator.read", "operator.admin"], (client_id, mode)
        ui, auth = await _deviceless(gw.url, client_id="gateway-client", client_mode="ui")
        await ui.close()
        assert auth["scopes"] == []


def test_logs_tail_reads_the_gateway_log_file() -> None:
    """A gateway process writes its log file; logs.tail gives its newest lines, a cursor
    gives only what came after it, and the token is in none of them."""
    with BundledGateway.start() as gw:

        async def scenario() -> None:
            async with raw_operator(gw.url, auth={"token": gw.token}) as op:
                first = await op.ok("logs.tail", {"limit": 2})
                assert first["file"].endswith("logs/gateway.log")
                assert len(first["lines"]) == 2 and first["truncated"] is True
                records = [json.loads(line) for line in first["lines"]]
                assert all({"time", "level", "subsystem", "message"} <= set(r) for r in records)
                async with raw_operator(gw.url, auth={"token": gw.token}):
                    pass
                for _ in range(100):
                    later = await op.ok("logs.tail", {"cursor": first["cursor"]})
                    if any("connected from" in line for line in later["lines"]):
                        break
                    await asyncio.sleep(0.05)
                assert later["reset"] is False and later["cursor"] > first["cursor"]
                assert any("connected from" in line for line in later["lines"])
                everything = await op.ok("logs.tail", {"limit": 5000})
                assert gw.token not in json.dumps(everything)
                bad = await op.error("logs.tail", {"limit": 0})
                assert bad["message"] == "invalid logs.tail params: at /limit: must be >= 1"

        asyncio.run(scenario())


def test_read_tail_follows_the_reference_cursor_rules(tmp_path: Path) -> None:
    """No file is empty; a cursor past the end (rotated) starts over; more than maxBytes
    after a cursor skips ahead and drops the cut line."""
    path = tmp_path / "gateway.log"
    assert read_tail(path, cursor=None, limit=10, max_bytes=100) == {
        "cursor": 0,
        "size": 0,
        "lines": [],
        "truncated": False,
        "reset": False,
    }
    path.write_text("".join(f"line {i:02d}\n" for i in range(10)), "utf-8")  # 8 bytes each
    whole = read_tail(path, cursor=None, limit=3, max_bytes=1000)
    assert whole["lines"] == ["line 07", "line 08", "line 09"] and whole["truncated"] is True
    assert whole["cursor"] == whole["size"] == 80
    rotated = read_tail(path, cursor=500, limit=100, max_bytes=20)
    assert rotated["reset"] is True and rotated["lines"] == ["line 08", "line 09"]
    skipped = read_tail(path, cursor=8, limit=100, max_bytes=20)
    assert skipped["reset"] is True and skipped["skippedBytes"] == 52
    assert skipped["lines"] == ["line 08", "line 09"]
    after = read_tail(path, cursor=64, limit=100, max_bytes=1000)
    assert after["lines"] == ["line 08", "line 09"] and after["reset"] is False
