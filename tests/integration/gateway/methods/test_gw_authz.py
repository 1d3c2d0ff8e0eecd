"""Who may approve, manage and invoke what on the bundled gateway (issue #14 part A), over
real loopback WebSockets: approvals grant no more than the approver holds, a device-token
session manages only its own device, a revoked node stays out and a removed node comes back
with its surface pending, and each node command needs the real gateway's operator scope.

The same rules are compared with the real gateway in
``tests/interop/test_gw_authz_side_by_side.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.node import InvokeResult
from tests.helpers.bundled_gateway import (
    RawClient,
    bundled_gateway,
    raw_node,
    raw_operator,
    start_node,
)

pytestmark = pytest.mark.timeout(60)

READ, WRITE, ADMIN = "operator.read", "operator.write", "operator.admin"
PAIRING = "operator.pairing"
NODE: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "node-host",
    "client_mode": "node",
}
HOST_COMMANDS = ["system.which", "system.run.prepare", "system.run", "system.notify"]
ADMIN_ONLY = ["fs.listDir", "browser.proxy", "browser.proxy.upload.v1", "terminal.upload"]


@asynccontextmanager
async def deviceless(url: str, scopes: Sequence[str]) -> AsyncIterator[RawClient]:
    """A loopback ``cli`` operator on the shared token with no device (like the CLIs)."""
    client = await RawClient.open(url)
    try:
        res = await client.connect(None, scopes=list(scopes))
        assert res["ok"] is True, res
        yield client
    finally:
        await client.close()


async def refused(url: str, identity: DeviceIdentity, **kw: Any) -> dict[str, Any]:
    """A connect that must be refused: its error (the socket is then closed)."""
    client = await RawClient.open(url)
    try:
        res = await client.connect(identity, **kw)
        assert res["ok"] is False, res
        error: dict[str, Any] = res["error"]
        return error
    finally:
        await client.close()


async def accepted(url: str, identity: DeviceIdentity, **kw: Any) -> RawClient:
    """A connect that must be accepted: the open client (close it)."""
    client = await RawClient.open(url)
    res = await client.connect(identity, **kw)
    assert res["ok"] is True, res
    return client


async def pair(admin: RawClient, url: str, identity: DeviceIdentity, **kw: Any) -> None:
    """Pair ``identity`` for this connect (manual pairing: the admin approves its request)."""
    error = await refused(url, identity, **kw)
    assert error["code"] == "NOT_PAIRED", error
    await admin.ok("device.pair.approve", {"requestId": error["details"]["requestId"]})


async def on_device_token(url: str, identity: DeviceIdentity, scopes: list[str]) -> RawClient:
    """A session of a paired device on its device token only (it speaks for its device)."""
    first = await accepted(url, identity, scopes=scopes)
    assert first.hello is not None
    token = first.hello["auth"]["deviceToken"]
    await first.close()
    client = await accepted(url, identity, scopes=scopes, auth={"deviceToken": token})
    assert client.hello is not None
    assert client.hello["auth"]["method"] == "device-token"
    return client


async def pending_surface(admin: RawClient, node_id: str) -> str:
    """The requestId of ``node_id``'s pending command surface (bounded wait)."""
    for _ in range(100):
        for request in (await admin.ok("node.pair.list"))["pending"]:
            if request["nodeId"] == node_id:
                return str(request["requestId"])
        await asyncio.sleep(0.05)
    raise AssertionError(f"no pending surface for {node_id}")


def paired_entry(listed: dict[str, Any], device_id: str) -> dict[str, Any] | None:
    return next((d for d in listed["paired"] if d["deviceId"] == device_id), None)


# ---------------------------------------------------------------------- 1. approvals


@pytest.mark.parametrize(
    ("asked", "missing"),
    [([ADMIN], ADMIN), ([WRITE], WRITE), ([READ, WRITE], WRITE), ([READ, ADMIN], ADMIN)],
)
async def test_approver_cannot_grant_scopes_it_lacks(
    tmp_path: Path, asked: list[str], missing: str
) -> None:
    """A read + pairing session approving a request for more: ``missing scope: X`` (as the
    real gateway, INVALID_REQUEST without details); the request stays pending, the device
    stays out and never reaches setup codes."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless(gw.url, [READ, PAIRING]) as pairer,
        deviceless(gw.url, [ADMIN]) as admin,
    ):
        identity = DeviceIdentity.generate()
        first = await refused(gw.url, identity, scopes=asked)
        request_id = first["details"]["requestId"]
        error = await pairer.error("device.pair.approve", {"requestId": request_id})
        assert error == {"code": "INVALID_REQUEST", "message": f"missing scope: {missing}"}
        again = await refused(gw.url, identity, scopes=asked)
        assert again["code"] == "NOT_PAIRED"
        assert again["details"]["requestId"] == request_id
        listed = await admin.ok("device.pair.list")
        assert [r["requestId"] for r in listed["pending"]] == [request_id]
        assert paired_entry(listed, identity.device_id) is None
        # The admin holds everything: the same request is approved and the device gets it.
        await admin.ok("device.pair.approve", {"requestId": request_id})
        device = await accepted(gw.url, identity, scopes=asked)
        assert device.hello is not None
        assert device.hello["auth"]["scopes"] == asked
        await device.close()


async def test_approver_grants_what_it_holds(tmp_path: Path) -> None:
    """Read + pairing approves a request for read + pairing; the device connects with it."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless(gw.url, [READ, PAIRING]) as pairer,
    ):
        identity = DeviceIdentity.generate()
        first = await refused(gw.url, identity, scopes=[READ, PAIRING])
        approved = await pairer.ok(
            "device.pair.approve", {"requestId": first["details"]["requestId"]}
        )
        assert approved["device"]["deviceId"] == identity.device_id
        device = await accepted(gw.url, identity, scopes=[READ, PAIRING])
        assert device.hello is not None
        assert device.hello["auth"]["scopes"] == [READ, PAIRING]
        await device.close()


async def test_scope_upgrade_counts_the_device_token_it_will_widen(tmp_path: Path) -> None:
    """A write device asking for pairing too: approving it hands out a token with write
    as well, so a read + pairing approver is refused (``missing scope: operator.write``)
    and a write + pairing approver is not."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless(gw.url, [ADMIN]) as admin,
        deviceless(gw.url, [READ, PAIRING]) as pairer,
        deviceless(gw.url, [WRITE, PAIRING]) as writer,
    ):
        identity = DeviceIdentity.generate()
        await pair(admin, gw.url, identity, scopes=[READ, WRITE])
        device = await accepted(gw.url, identity, scopes=[READ, WRITE])
        await device.close()
        upgrade = await refused(gw.url, identity, scopes=[READ, PAIRING])
        assert upgrade["details"]["reason"] == "scope-upgrade"
        request = {"requestId": upgrade["details"]["requestId"]}
        error = await pairer.error("device.pair.approve", request)
        assert error == {"code": "INVALID_REQUEST", "message": "missing scope: operator.write"}
        await writer.ok("device.pair.approve", request)
        device = await accepted(gw.url, identity, scopes=[READ, PAIRING])
        await device.close()


async def test_node_role_and_other_devices_need_admin_to_approve(tmp_path: Path) -> None:
    """Without admin: a node role request is ``device pairing approval denied``, and a
    device-token session may approve only its own device's requests."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless(gw.url, [ADMIN]) as admin,
        deviceless(gw.url, [READ, PAIRING]) as pairer,
    ):
        node = await refused(gw.url, DeviceIdentity.generate(), **NODE)
        error = await pairer.error("device.pair.approve", node["details"])
        assert error == {"code": "INVALID_REQUEST", "message": "device pairing approval denied"}
        me = DeviceIdentity.generate()
        await pair(admin, gw.url, me, scopes=[READ, PAIRING])
        own = await on_device_token(gw.url, me, [READ, PAIRING])
        stranger = await refused(gw.url, DeviceIdentity.generate(), scopes=[READ])
        request = {"requestId": stranger["details"]["requestId"]}
        error = await own.error("device.pair.approve", request)
        assert error == {"code": "INVALID_REQUEST", "message": "device pairing approval denied"}
        await own.close()
        assert len((await admin.ok("device.pair.list"))["pending"]) == 2


async def test_surface_approval_needs_the_scopes_its_commands_need(tmp_path: Path) -> None:
    """A surface holding host commands (system.run...) needs admin to approve; one holding
    only ordinary commands needs write (FORBIDDEN ``missing scope`` with the required
    scopes, as the real gateway)."""
    async with (
        bundled_gateway(tmp_path) as gw,
        deviceless(gw.url, [READ, WRITE, PAIRING]) as writer,
        deviceless(gw.url, [READ, PAIRING]) as pairer,
        deviceless(gw.url, [ADMIN]) as admin,
    ):
        host, plain = DeviceIdentity.generate(), DeviceIdentity.generate()
        async with (
            raw_node(gw.url, HOST_COMMANDS, host),
            raw_node(gw.url, ["system.notify"], plain),
        ):
            request = {"requestId": await pending_surface(admin, host.device_id)}
            error = await writer.error("node.pair.approve", request)
            assert error == {
                "code": "FORBIDDEN",
                "message": "missing scope: operator.admin",
                "details": {
                    "code": "MISSING_SCOPE",
                    "missingScope": ADMIN,
                    "requiredScopes": [PAIRING, ADMIN],
                },
            }
            await admin.ok("node.pair.approve", request)
            request = {"requestId": await pending_surface(admin, plain.device_id)}
            error = await pairer.error("node.pair.approve", request)
            assert error["details"] == {
                "code": "MISSING_SCOPE",
                "missingScope": WRITE,
                "requiredScopes": [PAIRING, WRITE],
            }
            await writer.ok("node.pair.approve", request)
            approved = {p["nodeId"] for p in (await admin.ok("node.pair.list"))["paired"]}
            assert approved == {host.device_id, plain.device_id}


async def test_device_token_session_answers_only_its_own_surface(tmp_path: Path) -> None:
    """``node.pair.approve``/``reject`` from a device-token session without admin: another
    node's surface, or an unknown request, is ``node pairing approval/rejection denied``."""
    async with bundled_gateway(tmp_path) as gw, deviceless(gw.url, [ADMIN]) as admin:
        me, node = DeviceIdentity.generate(), DeviceIdentity.generate()
        own = await on_device_token(gw.url, me, [READ, WRITE, PAIRING])
        async with raw_node(gw.url, ["system.notify"], node):
            request = {"requestId": await pending_surface(admin, node.device_id)}
            for method, action in (
                ("node.pair.approve", "approval"),
                ("node.pair.reject", "rejection"),
            ):
                error = await own.error(method, request)
                assert error == {
                    "code": "INVALID_REQUEST",
                    "message": f"node pairing {action} denied",
                }
                error = await own.error(method, {"requestId": "no-such-request"})
                assert error["message"] == f"node pairing {action} denied"
            assert await pending_surface(admin, node.device_id) == request["requestId"]
        await own.close()


# ------------------------------------------------------------------ 2. device management


async def test_device_token_session_manages_only_itself(tmp_path: Path) -> None:
    """Read + pairing on a device token: removing or renaming another operator or a node is
    denied and they stay paired and connected; the session renames itself (the label
    trimmed; blanks are ``label required``)."""
    async with bundled_gateway(tmp_path) as gw, deviceless(gw.url, [ADMIN]) as admin:
        me, other_id, node_id = (DeviceIdentity.generate() for _ in range(3))
        own = await on_device_token(gw.url, me, [READ, PAIRING])
        other = await accepted(gw.url, other_id, scopes=[READ])
        async with raw_node(gw.url, ["system.notify"], node_id):
            for target in (other_id.device_id, node_id.device_id):
                error = await own.error("device.pair.remove", {"deviceId": target})
                assert error == {
                    "code": "INVALID_REQUEST",
                    "message": "device pairing removal denied",
                }
                error = await own.error("device.pair.rename", {"deviceId": target, "label": "x"})
                assert error == {
                    "code": "INVALID_REQUEST",
                    "message": "device pairing rename denied",
                }
            error = await own.error("node.pair.remove", {"nodeId": node_id.device_id})
            assert error == {"code": "INVALID_REQUEST", "message": "node pairing removal denied"}
            rename = {"nodeId": node_id.device_id, "displayName": "x"}
            error = await own.error("node.rename", rename)
            assert error == {"code": "INVALID_REQUEST", "message": "node rename denied"}
            error = await own.error("device.pair.remove", {"deviceId": "f" * 64})
            assert error["message"] == "device pairing removal denied"
            blank = {"deviceId": me.device_id, "label": "   "}
            assert (await own.error("device.pair.rename", blank))["message"] == "label required"
            renamed = await own.ok(
                "device.pair.rename", {"deviceId": me.device_id, "label": " me "}
            )
            assert renamed == {"deviceId": me.device_id, "label": "me"}
            listed = await admin.ok("device.pair.list")
            for target in (other_id.device_id, node_id.device_id):
                entry = paired_entry(listed, target)
                assert entry is not None
                assert entry["connected"] is True
                assert "operatorLabel" not in entry or entry["operatorLabel"] != "x"
            assert (await other.ok("health"))["ok"] is True
            nodes = (await admin.ok("node.list"))["nodes"]
            assert any(n["nodeId"] == node_id.device_id and n["connected"] for n in nodes)
        await other.close()
        await own.close()


async def test_own_device_with_a_node_role_is_managed_by_admins(tmp_path: Path) -> None:
    """A device that is also a node may not remove or rename itself without admin; with
    admin (or without a device, on the shared token) removal goes through and closes its
    sessions with 4001 ``device removed``."""
    async with bundled_gateway(tmp_path) as gw, deviceless(gw.url, [ADMIN]) as admin:
        me = DeviceIdentity.generate()
        async with raw_node(gw.url, ["system.notify"], me) as node:
            # The paired node becomes an operator too (silently, on loopback).
            own = await on_device_token(gw.url, me, [READ, PAIRING])
            error = await own.error("device.pair.remove", {"deviceId": me.device_id})
            assert error["message"] == "device pairing removal denied"
            error = await own.error("device.pair.rename", {"deviceId": me.device_id, "label": "x"})
            assert error["message"] == "device pairing rename denied"
            label = {"deviceId": me.device_id, "label": "by admin"}
            assert (await admin.ok("device.pair.rename", label))["label"] == "by admin"
            async with deviceless(gw.url, [READ, PAIRING]) as pairer:
                await pairer.ok("device.pair.remove", {"deviceId": me.device_id})
            assert await node.wait_closed(5) == (4001, "device removed")
            assert await own.wait_closed(5) == (4001, "device removed")
            await own.close()
            assert paired_entry(await admin.ok("device.pair.list"), me.device_id) is None


# ------------------------------------------------------------- 3. revoke, remove a node


async def test_revoked_node_stays_out_until_approved_again(tmp_path: Path) -> None:
    """``device.token.revoke --role node``: the node is closed (4001 ``device removed``);
    reconnecting on the shared token is a ``role-upgrade`` needing approval (close 1008),
    its old device token is refused; once approved it is back with a new token."""
    async with (
        bundled_gateway(tmp_path, auto_approve_local=False) as gw,
        deviceless(gw.url, [ADMIN]) as admin,
    ):
        identity = DeviceIdentity.generate()
        await pair(admin, gw.url, identity, **NODE)
        node = await accepted(gw.url, identity, **NODE)
        assert node.hello is not None
        old_token = node.hello["auth"]["deviceToken"]
        revoked = await admin.ok(
            "device.token.revoke", {"deviceId": identity.device_id, "role": "node"}
        )
        assert revoked["role"] == "node"
        assert await node.wait_closed(5) == (4001, "device removed")
        await node.close()
        back = await RawClient.open(gw.url)
        res = await back.connect(identity, **NODE)
        assert res["ok"] is False
        assert res["error"]["code"] == "NOT_PAIRED"
        assert res["error"]["details"]["reason"] == "role-upgrade"
        assert res["error"]["details"]["approvedRoles"] == ["node"]
        code, _ = await back.wait_closed(5)
        assert code == 1008
        await back.close()
        error = await refused(gw.url, identity, **{**NODE, "auth": {"deviceToken": old_token}})
        assert error["details"]["code"] == "AUTH_DEVICE_TOKEN_MISMATCH"
        await admin.ok("device.pair.approve", {"requestId": res["error"]["details"]["requestId"]})
        node = await accepted(gw.url, identity, **NODE)
        assert node.hello is not None
        assert node.hello["auth"]["deviceToken"] != old_token
        await node.close()


async def test_revoked_desktop_node_is_not_readmitted_silently(tmp_path: Path) -> None:
    """This machine's own desktop node, approved silently beside its window: once an owner
    revokes its node token it asks again even on loopback with local auto-approval."""
    async with bundled_gateway(tmp_path) as gw, deviceless(gw.url, [ADMIN]) as admin:
        identity = DeviceIdentity.generate()
        desktop = {**NODE, "client_id": "openclaw-linux"}
        window = await accepted(gw.url, identity, scopes=[READ])
        node = await accepted(gw.url, identity, **desktop)  # silently, beside its window
        await admin.ok("device.token.revoke", {"deviceId": identity.device_id, "role": "node"})
        assert await node.wait_closed(5) == (4001, "device removed")
        await node.close()
        error = await refused(gw.url, identity, **desktop)
        assert error["details"]["reason"] == "role-upgrade"
        assert (await window.ok("health"))["ok"] is True
        await window.close()


async def test_removed_node_is_closed_and_comes_back_with_its_surface_pending(
    tmp_path: Path,
) -> None:
    """``node.pair.remove``: the answer is ``{nodeId}``, the node (our client) is closed and
    reconnects by itself as a new node whose command surface awaits approval again."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        node = start_node(gw.url)
        try:
            request = await pending_surface(admin, node.node_id)
            await admin.ok("node.pair.approve", {"requestId": request})
            removed = await admin.ok("node.pair.remove", {"nodeId": node.node_id})
            assert removed == {"nodeId": node.node_id}
            resolved = await admin.wait_event(
                "node.pair.resolved", lambda e: e["payload"]["decision"] == "removed"
            )
            assert resolved["payload"]["nodeId"] == node.node_id
            again = await pending_surface(admin, node.node_id)
            assert again != request
            listed = await admin.ok("node.pair.list")
            assert node.node_id not in {p["nodeId"] for p in listed["paired"]}
            nodes = (await admin.ok("node.list"))["nodes"]
            entry = next(n for n in nodes if n["nodeId"] == node.node_id)
            assert entry["connected"] is True
        finally:
            await node.aclose()


# ---------------------------------------------------------------- 4. node command scopes


def _answering(names: Sequence[str]) -> dict[str, tuple[str, Any]]:
    """Node handlers that answer ``{"ran": <command>}``."""

    def handler(name: str) -> Any:
        async def run(params: Any) -> InvokeResult:
            return InvokeResult.success({"ran": name})

        return run

    return {name: ("system", handler(name)) for name in names}


def _invoke(node_id: str, command: str, **params: Any) -> dict[str, Any]:
    return {
        "nodeId": node_id,
        "command": command,
        "params": params,
        "timeoutMs": 5000,
        "idempotencyKey": f"authz-{command}-{len(params)}",
    }


async def test_write_runs_host_commands_and_admin_only_ones_need_admin(tmp_path: Path) -> None:
    """With operator.write: system.which, system.run.prepare and system.run reach the node;
    fs.listDir, browser.proxy, browser.proxy.upload.v1 and terminal.upload are FORBIDDEN
    ``missing scope: operator.admin`` and never reach it; with admin they do."""
    commands = [*HOST_COMMANDS[:3], *ADMIN_ONLY]
    async with (
        bundled_gateway(tmp_path, nodes_allow=commands) as gw,
        raw_operator(gw.url) as admin,
        deviceless(gw.url, [WRITE]) as writer,
    ):
        node = start_node(gw.url, handlers=_answering(commands))
        try:
            await admin.ok(
                "node.pair.approve", {"requestId": await pending_surface(admin, node.node_id)}
            )
            for _ in range(100):
                nodes = (await admin.ok("node.list"))["nodes"]
                entry = next((n for n in nodes if n["nodeId"] == node.node_id), None)
                if entry is not None and set(commands) <= set(entry.get("commands") or []):
                    break
                await asyncio.sleep(0.05)
            for command in HOST_COMMANDS[:3]:
                result = await writer.ok("node.invoke", _invoke(node.node_id, command))
                assert result["payload"] == {"ran": command}
            for command in ADMIN_ONLY:
                error = await writer.error("node.invoke", _invoke(node.node_id, command))
                assert error == {
                    "code": "FORBIDDEN",
                    "message": "missing scope: operator.admin",
                    "details": {
                        "code": "MISSING_SCOPE",
                        "missingScope": ADMIN,
                        "requiredScopes": [ADMIN],
                    },
                }
            assert node.handled == HOST_COMMANDS[:3]
            for command in ADMIN_ONLY:
                result = await admin.ok("node.invoke", _invoke(node.node_id, command))
                assert result["payload"] == {"ran": command}
            assert node.handled == [*HOST_COMMANDS[:3], *ADMIN_ONLY]
        finally:
            await node.aclose()


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/profiles/create"), ("post", "reset-profile/"), ("DELETE", "/profiles/work")],
)
async def test_browser_profile_mutations_are_refused(
    tmp_path: Path, method: str, path: str
) -> None:
    """A browser proxy call that would create, reset or delete a persistent profile is
    refused for everyone (INVALID_REQUEST, as the real gateway) and never reaches the node."""
    async with (
        bundled_gateway(tmp_path, nodes_allow=["browser.proxy"]) as gw,
        raw_operator(gw.url) as admin,
        deviceless(gw.url, [WRITE]) as writer,
    ):
        node = start_node(gw.url, handlers=_answering(["browser.proxy"]))
        try:
            await admin.ok(
                "node.pair.approve", {"requestId": await pending_surface(admin, node.node_id)}
            )
            for caller in (writer, admin):
                error = await caller.error(
                    "node.invoke", _invoke(node.node_id, "browser.proxy", method=method, path=path)
                )
                assert error == {
                    "code": "INVALID_REQUEST",
                    "message": (
                        "node.invoke cannot mutate persistent browser profiles via browser.proxy"
                    ),
                    "details": {"command": "browser.proxy"},
                }
            assert node.handled == []
        finally:
            await node.aclose()


# ------------------------------------------------- tokens beyond the caller, listing


async def test_tokens_holding_more_than_the_caller_stay_put(tmp_path: Path) -> None:
    """Without the scopes an operator token holds, a session can neither revoke nor rotate
    it (``device token revocation/rotation denied``): not an admin's from a read + pairing
    session, not its own wider token from a narrower session of the same device (which
    would hand it write in band); an unknown device or role is denied the same way."""
    async with bundled_gateway(tmp_path) as gw, deviceless(gw.url, [ADMIN]) as admin:
        boss_id, me_id = DeviceIdentity.generate(), DeviceIdentity.generate()
        boss = await accepted(gw.url, boss_id, scopes=[ADMIN])
        wide = await accepted(gw.url, me_id, scopes=[READ, WRITE, PAIRING])
        await wide.close()
        me = await on_device_token(gw.url, me_id, [READ, PAIRING])
        async with deviceless(gw.url, [READ, PAIRING]) as pairer:
            target = {"deviceId": boss_id.device_id, "role": "operator"}
            error = await pairer.error("device.token.revoke", target)
            assert error == {"code": "INVALID_REQUEST", "message": "device token revocation denied"}
            error = await pairer.error("device.token.rotate", target)
            assert error == {"code": "INVALID_REQUEST", "message": "device token rotation denied"}
        assert (await boss.ok("health"))["ok"] is True
        for params in (
            {"deviceId": "f" * 64, "role": "operator"},
            {"deviceId": boss_id.device_id, "role": "node"},
        ):
            error = await admin.error("device.token.revoke", params)
            assert error["message"] == "device token revocation denied"
            error = await admin.error("device.token.rotate", params)
            assert error["message"] == "device token rotation denied"
        own = {"deviceId": me_id.device_id, "role": "operator"}
        error = await me.error("device.token.revoke", own)
        assert error["message"] == "device token revocation denied"
        error = await me.error("device.token.rotate", {**own, "scopes": [READ, WRITE, PAIRING]})
        assert error["message"] == "device token rotation denied"
        rotated = await me.ok("device.token.rotate", {**own, "scopes": [READ, PAIRING]})
        assert rotated["scopes"] == [PAIRING, READ]
        assert rotated["tokenDelivery"] == "in-band"
        assert await me.wait_closed(5) == (4001, "device removed")
        await me.close()
        await boss.close()


async def test_device_token_session_lists_only_its_own_device(tmp_path: Path) -> None:
    """``device.pair.list`` and ``node.pair.list`` from a device-token session without
    admin show its own device only (an admin or a shared-token session sees all)."""
    async with bundled_gateway(tmp_path) as gw, deviceless(gw.url, [ADMIN]) as admin:
        me, other = DeviceIdentity.generate(), DeviceIdentity.generate()
        own = await on_device_token(gw.url, me, [READ, PAIRING])
        async with raw_node(gw.url, ["system.notify"], other):
            await pending_surface(admin, other.device_id)
            listed = await own.ok("device.pair.list")
            assert [d["deviceId"] for d in listed["paired"]] == [me.device_id]
            assert listed["pending"] == []
            assert await own.ok("node.pair.list") == {"pending": [], "paired": []}
            async with deviceless(gw.url, [READ, PAIRING]) as pairer:
                listed = await pairer.ok("device.pair.list")
                assert {me.device_id, other.device_id} <= {d["deviceId"] for d in listed["paired"]}
                nodes = await pairer.ok("node.pair.list")
                assert [r["nodeId"] for r in nodes["pending"]] == [other.device_id]
        await own.close()
