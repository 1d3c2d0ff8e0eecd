"""The two pairing layers of the bundled gateway over real sockets: device pairing gating
``connect`` (manual approval), and the node command surface (``node.pair.*``)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.errors import GatewayError, PairingRequired
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.transport import ConnectionState, GatewayConnection
from tests.helpers.bundled_gateway import (
    ALL_OPERATOR_SCOPES,
    RawClient,
    bundled_gateway,
    operator_options,
    raw_node,
    raw_operator,
    start_node,
    wait_for,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "gateway" / "real-node-methods.json"
REAL = json.loads(FIXTURE.read_text())


@asynccontextmanager
async def deviceless_operator(
    url: str, scopes: tuple[str, ...] = ALL_OPERATOR_SCOPES
) -> AsyncIterator[RawClient]:
    """An operator without a device identity (loopback + shared token): no pairing needed."""
    client = await RawClient.open(url)
    try:
        res = await client.connect(None, scopes=scopes)
        assert res["ok"] is True, res
        yield client
    finally:
        await client.close()


async def _refused(url: str, identity: DeviceIdentity, **kw: Any) -> tuple[dict[str, Any], str]:
    """Connect once; return the error and the close reason."""
    client = await RawClient.open(url)
    res = await client.connect(identity, **kw)
    assert res["ok"] is False, res
    _code, reason = await client.wait_closed()
    await client.close()
    return res["error"], reason or ""


# ---------------------------------------------------------------- device pairing


async def test_unpaired_device_gets_pairing_required_with_a_stable_request_id(
    tmp_path: Path,
) -> None:
    """With auto_approve_local off: NOT_PAIRED/PAIRING_REQUIRED, the same requestId on retry,
    and one device.pair.requested to pairing operators."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        first, reason = await _refused(gw.url, ident, scopes=["operator.read"])
        assert first["code"] == "NOT_PAIRED"
        details = first["details"]
        assert details["code"] == "PAIRING_REQUIRED"
        assert details["reason"] == "not-paired"
        assert details["deviceId"] == ident.device_id
        assert details["requestedRole"] == "operator"
        request_id = details["requestId"]
        assert f"(requestId: {request_id})" in reason
        second, _ = await _refused(gw.url, ident, scopes=["operator.read"])
        assert second["details"]["requestId"] == request_id
        event = await admin.wait_event("device.pair.requested")
        assert event["payload"]["requestId"] == request_id
        assert event["payload"]["deviceId"] == ident.device_id
        await asyncio.sleep(0.1)
        assert len(admin.events_named("device.pair.requested")) == 1
        listed = await admin.ok("device.pair.list")
        assert [p["requestId"] for p in listed["pending"]] == [request_id]


async def test_device_pair_approve_lets_the_device_in(tmp_path: Path) -> None:
    """device.pair.approve: resolved event, the device is listed as paired and connects."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        error, _ = await _refused(gw.url, ident, scopes=["operator.read"])
        request_id = error["details"]["requestId"]
        approved = await admin.ok("device.pair.approve", {"requestId": request_id})
        assert approved["requestId"] == request_id
        assert approved["device"]["deviceId"] == ident.device_id
        resolved = await admin.wait_event("device.pair.resolved")
        assert resolved["payload"]["decision"] == "approved"
        async with raw_operator(gw.url, ident, scopes=["operator.read"]) as op:
            assert op.hello is not None and op.hello["auth"]["deviceToken"]
        listed = await admin.ok("device.pair.list")
        paired = {d["deviceId"]: d for d in listed["paired"]}
        assert paired[ident.device_id]["approvedVia"] == "owner"
        assert listed["pending"] == []


async def test_our_client_waits_for_approval_and_continues(tmp_path: Path) -> None:
    """Our client waits in AWAITING_APPROVAL with the requestId and connects once approved."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        opts = operator_options(gw.url, scopes=("operator.read",), wait_for_pairing=True)
        async with GatewayConnection(opts) as conn:
            await wait_for(lambda: conn.status.pairing is not None, 5)
            pairing = conn.status.pairing
            assert isinstance(pairing, PairingRequired)
            assert conn.status.state is ConnectionState.AWAITING_APPROVAL
            await admin.ok("device.pair.approve", {"requestId": pairing.request_id})
            hello = await conn.wait_ready(10)
            assert hello.auth.scopes == ["operator.read"]


async def test_device_pair_reject(tmp_path: Path) -> None:
    """device.pair.reject: resolved(rejected); the next attempt opens a new request."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        error, _ = await _refused(gw.url, ident)
        request_id = error["details"]["requestId"]
        rejected = await admin.ok("device.pair.reject", {"requestId": request_id})
        assert rejected["decision"] == "rejected"
        event = await admin.wait_event("device.pair.resolved")
        assert event["payload"] == {
            "requestId": request_id,
            "deviceId": ident.device_id,
            "decision": "rejected",
            "ts": event["payload"]["ts"],
        }
        again, _ = await _refused(gw.url, ident)
        assert again["details"]["requestId"] != request_id
        unknown = await admin.error("device.pair.approve", {"requestId": request_id})
        assert unknown["message"] == "unknown requestId"


async def test_device_pair_remove_disconnects_and_unpairs(tmp_path: Path) -> None:
    """device.pair.remove closes the device's live socket and it must pair again."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        victim = await RawClient.open(gw.url)
        assert (await victim.connect(ident))["ok"]
        removed = await admin.ok("device.pair.remove", {"deviceId": ident.device_id})
        assert removed == {"deviceId": ident.device_id, "removed": True}
        code, _ = await victim.wait_closed(5)
        assert code == 1008
        listed = await admin.ok("device.pair.list")
        assert ident.device_id not in {d["deviceId"] for d in listed["paired"]}
        error = await admin.error("device.pair.remove", {"deviceId": ident.device_id})
        assert error["message"] == "unknown deviceId"
    # Removal persisted: with manual pairing it is now an unknown device.
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        error, _ = await _refused(gw.url, ident)
        assert error["code"] == "NOT_PAIRED"


async def test_pairing_state_survives_a_restart(tmp_path: Path) -> None:
    """A device approved on one server instance connects on the next (same state dir)."""
    ident = DeviceIdentity.generate()
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        error, _ = await _refused(gw.url, ident)
        await admin.ok("device.pair.approve", {"requestId": error["details"]["requestId"]})
        async with raw_operator(gw.url, ident, scopes=["operator.read"]) as op:
            assert op.hello is not None
            token = op.hello["auth"]["deviceToken"]
    async with bundled_gateway(tmp_path, auto_approve_local=False) as gw:
        async with raw_operator(
            gw.url, ident, scopes=["operator.read"], auth={"deviceToken": token}
        ) as op:
            assert op.hello is not None and op.hello["auth"]["method"] == "device-token"
        # The shared token still admits the paired device, which gets its existing token back
        # (as from the real gateway: the token still covers the connection's scopes).
        async with raw_operator(gw.url, ident, scopes=["operator.read"]) as op:
            assert op.hello is not None
            assert op.hello["auth"]["deviceToken"] == token


# ---------------------------------------------------------------- node surface


async def test_node_surface_is_inactive_until_approved_then_live(tmp_path: Path) -> None:
    """Declared commands are inactive until node.pair.approve; the live node gets
    node.pair.resolved and the command works without a reconnect."""
    async with (
        bundled_gateway(tmp_path) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
    ):
        await operator.wait_ready(5)
        requested: list[dict[str, Any]] = []
        operator.on_event(
            lambda e: requested.append(e.payload) if e.event == "node.pair.requested" else None
        )
        node = start_node(gw.url, handlers=None)
        try:
            hello = await node.connection.wait_ready(5)
            await wait_for(lambda: node.session.surface == "pending", 5)
            await wait_for(lambda: requested, 5)
            assert requested[0]["nodeId"] == node.node_id
            assert sorted(requested[0]["commands"]) == ["system.notify"]
            assert requested[0]["requiredApproveScopes"] == ["operator.pairing", "operator.write"]
            with pytest.raises(GatewayError) as info:
                await operator.request(
                    "node.invoke",
                    {"nodeId": node.node_id, "command": "system.notify", "idempotencyKey": "a"},
                )
            assert info.value.code == "INVALID_REQUEST"
            assert "pending approval" in info.value.message
            listed = await operator.request("node.list")
            entry = listed["nodes"][0]
            assert entry["approvalState"] == "pending-approval"
            assert entry["commands"] == []
            assert entry["pendingDeclaredCommands"] == ["system.notify"]
            await operator.request("node.pair.approve", {"requestId": requested[0]["requestId"]})
            await wait_for(node.surface_resolved, 5)
            result = await operator.request(
                "node.invoke",
                {
                    "nodeId": node.node_id,
                    "command": "system.notify",
                    "params": {"title": "T"},
                    "idempotencyKey": "b",
                },
            )
            assert result["payload"] == {"delivered": True, "echo": {"title": "T"}}
            assert node.connection.hello is hello  # same session: no reconnect
        finally:
            await node.aclose()


async def test_live_node_receives_node_pair_resolved(tmp_path: Path) -> None:
    """The node socket itself gets node.pair.resolved {requestId,nodeId,decision,ts}."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url) as admin,
        raw_node(gw.url, ["system.notify"]) as node,
    ):
        event = await admin.wait_event("node.pair.requested")
        request_id = event["payload"]["requestId"]
        await admin.ok("node.pair.approve", {"requestId": request_id})
        resolved = await node.wait_event("node.pair.resolved")
        assert set(resolved["payload"]) == {"requestId", "nodeId", "decision", "ts"}
        assert resolved["payload"]["decision"] == "approved"
        assert "seq" not in resolved
        assert resolved["payload"]["nodeId"] == event["payload"]["nodeId"]


async def test_node_pair_reject_keeps_commands_inactive(tmp_path: Path) -> None:
    """node.pair.reject: the node is told, the commands stay unavailable."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        async with raw_node(gw.url, ["system.notify"], ident) as node:
            event = await admin.wait_event("node.pair.requested")
            await admin.ok("node.pair.reject", {"requestId": event["payload"]["requestId"]})
            resolved = await node.wait_event("node.pair.resolved")
            assert resolved["payload"]["decision"] == "rejected"
            error = await admin.error(
                "node.invoke",
                {"nodeId": ident.device_id, "command": "system.notify", "idempotencyKey": "x"},
            )
            assert error["code"] == "INVALID_REQUEST"


async def test_admin_surface_needs_operator_admin_to_approve(tmp_path: Path) -> None:
    """A surface holding system.which needs operator.admin: pairing+write is FORBIDDEN."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url) as admin,
        raw_node(gw.url, ["system.which", "system.notify"]),
    ):
        event = await admin.wait_event("node.pair.requested")
        payload = event["payload"]
        assert payload["requiredApproveScopes"] == ["operator.pairing", "operator.admin"]
        async with raw_operator(gw.url, scopes=["operator.pairing", "operator.write"]) as limited:
            error = await limited.error("node.pair.approve", {"requestId": payload["requestId"]})
            assert error["code"] == "FORBIDDEN"
            assert error["details"]["code"] == "MISSING_SCOPE"
            assert error["details"]["missingScope"] == "operator.admin"
        approved = await admin.ok("node.pair.approve", {"requestId": payload["requestId"]})
        assert sorted(approved["node"]["commands"]) == ["system.notify", "system.which"]


async def test_pairing_events_are_scope_filtered(tmp_path: Path) -> None:
    """A read-only operator gets no node.pair.requested; a pairing operator does."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url, scopes=["operator.read"]) as reader,
        raw_operator(gw.url, scopes=["operator.pairing"]) as pairer,
        raw_node(gw.url, ["system.notify"]),
    ):
        await pairer.wait_event("node.pair.requested")
        await reader.wait_event("presence", lambda e: len(e["payload"]["presence"]) >= 4)
        await asyncio.sleep(0.1)
        assert reader.events_named("node.pair.requested") == []
        assert reader.events_named("device.pair.requested") == []


async def test_node_id_is_the_device_id_and_pair_list_shapes(tmp_path: Path) -> None:
    """nodeId equals the device id; node.pair.list pending/paired move on approval."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        async with raw_node(gw.url, ["system.notify"], ident):
            event = await admin.wait_event("node.pair.requested")
            assert event["payload"]["nodeId"] == ident.device_id
            listed = await admin.ok("node.pair.list")
            assert [p["nodeId"] for p in listed["pending"]] == [ident.device_id]
            assert listed["paired"] == []
            await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            listed = await admin.ok("node.pair.list")
            assert listed["pending"] == []
            assert [p["nodeId"] for p in listed["paired"]] == [ident.device_id]
            removed = await admin.ok("node.pair.remove", {"nodeId": ident.device_id})
            assert removed["removed"] is True
            assert (await admin.ok("node.pair.list"))["paired"] == []


async def test_device_pair_list_shapes_match_the_real_gateway(tmp_path: Path) -> None:
    """device.pair.list paired entries (an operator; a node with a pending surface) carry the
    key sets the real gateway showed, tokens summarised without secrets."""
    async with (
        bundled_gateway(tmp_path, nodes_allow=["device.info"]) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
    ):
        await operator.wait_ready(5)
        node = start_node(gw.url)
        try:
            await wait_for(lambda: node.session.surface == "pending", 5)
            listed = await operator.request("device.pair.list")
            by_id = {d["deviceId"]: d for d in listed["paired"]}
            real_node, real_operator = REAL["device.pair.list"]["paired"]
            mine = by_id[node.node_id]
            assert set(mine) == set(real_node)
            assert set(mine["pendingNodeSurface"]) == set(real_node["pendingNodeSurface"])
            assert mine["tokens"] == [
                {"role": "node", "scopes": [], "createdAtMs": mine["tokens"][0]["createdAtMs"]}
            ]
            assert mine["connected"] is True
            (op_entry,) = [d for d in listed["paired"] if d["clientId"] == "cli"]
            assert set(op_entry) == set(real_operator)
            summary_keys = {"role", "scopes", "createdAtMs", "rotatedAtMs", "lastUsedAtMs"}
            assert all(set(t) <= summary_keys for t in op_entry["tokens"])
        finally:
            await node.aclose()
