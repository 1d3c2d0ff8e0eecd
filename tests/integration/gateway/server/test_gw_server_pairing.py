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

from gateway.server import GatewayServer
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

pytestmark = pytest.mark.timeout(60)

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "gateway" / "real-node-methods.json"
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
        assert rejected == {"requestId": request_id, "deviceId": ident.device_id}
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
        code, reason = await victim.wait_closed(5)
        assert (code, reason) == (4001, "device removed")  # as the real gateway
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
        # The shared token still admits the paired device. Only token hashes are kept, so it
        # gets a new token with the same scopes (the real gateway hands back the old one),
        # and the old token stops working.
        async with raw_operator(gw.url, ident, scopes=["operator.read"]) as op:
            assert op.hello is not None
            fresh = op.hello["auth"]["deviceToken"]
            assert fresh != token
            assert op.hello["auth"]["scopes"] == ["operator.read"]
        async with raw_operator(
            gw.url, ident, scopes=["operator.read"], auth={"deviceToken": fresh}
        ) as op:
            assert op.hello is not None and op.hello["auth"]["deviceToken"] == fresh
        error, _ = await _refused(
            gw.url, ident, scopes=["operator.read"], auth={"deviceToken": token}
        )
        assert error["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH", error


# ------------------------------------------------ upgrades: metadata and node role
#: A node connect of the real node host (``node-host`` names Linux without a family).
NODE_HOST: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "node-host",
    "client_mode": "node",
    "device_family": None,
}


async def _connect(url: str, identity: DeviceIdentity, **kw: Any) -> dict[str, Any]:
    """One connect: its ``res`` (the socket is closed either way)."""
    client = await RawClient.open(url)
    try:
        return await client.connect(identity, **kw)
    finally:
        await client.close()


async def _paired_operator(
    gw: GatewayServer, admin: RawClient, ident: DeviceIdentity, **kw: Any
) -> dict[str, Any]:
    """Connect as an operator, approving the device first if it must be."""
    res = await _connect(gw.url, ident, **kw)
    if not res["ok"]:
        await admin.ok("device.pair.approve", {"requestId": res["error"]["details"]["requestId"]})
        res = await _connect(gw.url, ident, **kw)
    assert res["ok"] is True, res
    return res


async def test_changed_platform_or_family_needs_approval_again(tmp_path: Path) -> None:
    """As the real gateway (2026.9.6): a paired device whose platform or device family
    changed gets NOT_PAIRED/PAIRING_REQUIRED reason metadata-upgrade, with a stable request
    id, whatever the credential (a device token too); client id, mode and display name may
    change freely and case or spaces do not count. Once approved, the record describes the
    new client."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        hello = await _paired_operator(gw, admin, ident)
        device_token = hello["payload"]["auth"]["deviceToken"]
        for same in (
            {"client_id": "openclaw-tui"},
            {"client_mode": "ui"},
            {"display_name": "Renamed"},
            {"platform": " LINUX "},
            {"device_family": "linux"},
        ):
            res = await _connect(gw.url, ident, **same)
            assert res["ok"] is True, (same, res)
            # each shared-token connect replaces the device token (only hashes are kept)
            device_token = res["payload"]["auth"]["deviceToken"]
        error, reason = await _refused(gw.url, ident, platform="darwin")
        assert error["code"] == "NOT_PAIRED"
        assert error["message"] == (
            "pairing required: device identity changed and must be re-approved"
        )
        details = error["details"]
        request_id = details["requestId"]
        assert details == {
            "code": "PAIRING_REQUIRED",
            "reason": "metadata-upgrade",
            "requestId": request_id,
            "remediationHint": (
                "Review the refreshed device details, then approve the pending request."
            ),
            "deviceId": ident.device_id,
            "requestedRole": "operator",
            "requestedScopes": ["operator.read"],
            "approvedRoles": ["operator"],
            "approvedScopes": ["operator.read"],
        }
        assert reason.endswith(f"(requestId: {request_id})")
        event = await admin.wait_event(
            "device.pair.requested", lambda e: e["payload"]["requestId"] == request_id
        )
        assert event["payload"]["platform"] == "darwin"
        assert event["payload"]["isRepair"] is True
        for changed in (
            {"platform": "darwin"},
            {"device_family": None},
            {"device_family": "Mac"},
            {"platform": "darwin", "auth": {"deviceToken": device_token}},
        ):
            again, _ = await _refused(gw.url, ident, **changed)
            assert again["details"]["reason"] == "metadata-upgrade", changed
            assert again["details"]["requestId"] == request_id, changed
        # the request now holds the last claim (darwin, Linux); approving it pins that
        await admin.ok("device.pair.approve", {"requestId": request_id})
        record = gw.state.devices.get(ident.device_id)
        assert record is not None
        assert (record.platform, record.device_family) == ("darwin", "Linux")
        assert (await _connect(gw.url, ident, platform="darwin"))["ok"] is True
        error, _ = await _refused(gw.url, ident)
        assert error["details"]["reason"] == "metadata-upgrade"  # linux is a change now


async def test_metadata_change_on_loopback_is_silent_only_for_an_app_window(
    tmp_path: Path,
) -> None:
    """With loopback auto-approval on (the default), a command-line client's changed
    metadata still needs the owner, as on the real gateway; an official app's window
    (``openclaw-linux`` in ui mode) is re-approved silently, even with auto-approval off,
    and its new metadata are stored."""
    for auto in (True, False):
        async with (
            bundled_gateway(tmp_path / str(auto), auto_approve_local=auto) as gw,
            deviceless_operator(gw.url) as admin,
        ):
            cli = DeviceIdentity.generate()
            await _paired_operator(gw, admin, cli)
            error, _ = await _refused(gw.url, cli, device_family="Mac")
            assert error["details"]["reason"] == "metadata-upgrade", auto
            window = DeviceIdentity.generate()
            app = {"client_id": "openclaw-linux", "client_mode": "ui"}
            await _paired_operator(gw, admin, window, **app)
            res = await _connect(gw.url, window, **app, device_family="Mac")
            assert res["ok"] is True, (auto, res)
            record = gw.state.devices.get(window.device_id)
            assert record is not None and record.device_family == "Mac"


async def test_node_role_of_a_paired_operator_needs_the_owner_on_loopback(
    tmp_path: Path,
) -> None:
    """As the real gateway: with loopback auto-approval on, a paired operator device that
    connects as the node host gets role-upgrade (never approved silently); the approved
    record then carries the node host's metadata (``node-host`` on linux is Linux), so the
    next command-line operator connect without a family is a metadata-upgrade. A device
    that was a node first becomes an operator silently."""
    async with bundled_gateway(tmp_path) as gw, deviceless_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        assert (await _connect(gw.url, ident, device_family=None))["ok"] is True
        error, _ = await _refused(gw.url, ident, **NODE_HOST)
        details = error["details"]
        assert (details["reason"], details["requestedRole"]) == ("role-upgrade", "node")
        assert (details["approvedRoles"], details["approvedScopes"]) == (
            ["operator"],
            ["operator.read"],
        )
        assert "requestedScopes" not in details
        await admin.ok("device.pair.approve", {"requestId": details["requestId"]})
        assert (await _connect(gw.url, ident, **NODE_HOST))["ok"] is True
        record = gw.state.devices.get(ident.device_id)
        assert record is not None
        assert (record.client_id, record.device_family, record.approved_via) == (
            "node-host",
            "Linux",
            "owner",
        )
        error, _ = await _refused(gw.url, ident, device_family=None)
        assert error["details"]["reason"] == "metadata-upgrade"

        node_first = DeviceIdentity.generate()
        assert (await _connect(gw.url, node_first, **NODE_HOST))["ok"] is True
        res = await _connect(gw.url, node_first, device_family="Linux")
        assert res["ok"] is True, res
        record = gw.state.devices.get(node_first.device_id)
        assert record is not None and record.roles == ("node", "operator")
        assert record.approved_via == "silent"


async def test_the_desktop_apps_own_node_is_approved_on_its_own_gateway(tmp_path: Path) -> None:
    """Deliberate difference from the real gateway: the desktop app connects its window as
    an operator, then this computer as a node with the same identity. Its own gateway (with
    loopback auto-approval) approves that node role silently; the real gateway 2026.9.6
    asks the owner (role-upgrade). Only for the desktop node's client, on a record this
    gateway approved silently: the same connect under manual pairing asks."""
    desktop_node = {
        "role": "node",
        "scopes": [],
        "client_id": "openclaw-linux",
        "client_mode": "node",
    }
    async with bundled_gateway(tmp_path / "auto") as gw:
        ident = DeviceIdentity.generate()
        assert (await _connect(gw.url, ident))["ok"] is True
        res = await _connect(gw.url, ident, **desktop_node)
        assert res["ok"] is True, res
        record = gw.state.devices.get(ident.device_id)
        assert record is not None and record.roles == ("operator", "node")
    async with (
        bundled_gateway(tmp_path / "manual", auto_approve_local=False) as gw,
        deviceless_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        await _paired_operator(gw, admin, ident)
        error, _ = await _refused(gw.url, ident, **desktop_node)
        assert error["details"]["reason"] == "role-upgrade"


async def test_a_silent_approval_is_announced_as_resolved(tmp_path: Path) -> None:
    """As the real gateway: a loopback device approved silently is announced with
    device.pair.resolved (approved), and no device.pair.requested."""
    async with bundled_gateway(tmp_path) as gw, deviceless_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        assert (await _connect(gw.url, ident))["ok"] is True
        event = await admin.wait_event("device.pair.resolved")
        assert event["payload"]["deviceId"] == ident.device_id
        assert event["payload"]["decision"] == "approved"
        assert admin.events_named("device.pair.requested") == []
        listed = await admin.ok("device.pair.list")
        assert listed["pending"] == []


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
            assert removed == {"nodeId": ident.device_id}  # the real gateway's answer
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
