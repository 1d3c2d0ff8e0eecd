"""Node routing through the bundled gateway: roles and scopes, node.list/describe/rename shapes
against the real gateway's capture, node.invoke (payload, payloadJSON, errors, timeout,
disconnect, idempotency), node.invoke.result edge cases, command policy and an Android node."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from gateway.server import GatewayServer
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.protocol import MAX_FRAME_DEPTH, ClientId, ClientInfo, ClientMode
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.bundled_gateway import (
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
async def approved_node(
    url: str,
    admin: RawClient,
    commands: list[str],
    identity: DeviceIdentity | None = None,
    **kw: Any,
) -> AsyncIterator[RawClient]:
    """A raw node whose declared surface the admin approved."""
    ident = identity or DeviceIdentity.generate()
    async with raw_node(url, commands, ident, **kw) as node:
        event = await admin.wait_event(
            "node.pair.requested", lambda e: e["payload"]["nodeId"] == ident.device_id
        )
        await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
        await node.wait_event("node.pair.resolved")
        yield node


@asynccontextmanager
async def setup(
    tmp_path: Path, commands: list[str], **overrides: Any
) -> AsyncIterator[tuple[GatewayServer, RawClient, RawClient, str]]:
    """Gateway (probe.* allowed unless overridden) + admin operator + approved raw node."""
    overrides.setdefault("nodes_allow", ["probe.echo", "probe.fail", "probe.slow"])
    ident = DeviceIdentity.generate()
    async with (
        bundled_gateway(tmp_path, **overrides) as gw,
        raw_operator(gw.url) as admin,
        approved_node(gw.url, admin, commands, ident) as node,
    ):
        yield gw, admin, node, ident.device_id


def invoke(node_id: str, command: str, key: str, **extra: Any) -> dict[str, Any]:
    """node.invoke params."""
    return {"nodeId": node_id, "command": command, "idempotencyKey": key, **extra}


async def next_request(node: RawClient, command: str, skip: int = 0) -> dict[str, Any]:
    """The (skip+1)-th node.invoke.request for ``command`` the node received."""
    await wait_for(
        lambda: (
            len(
                [
                    e
                    for e in node.events_named("node.invoke.request")
                    if e["payload"]["command"] == command
                ]
            )
            > skip
        ),
        10,
    )
    requests = [
        e for e in node.events_named("node.invoke.request") if e["payload"]["command"] == command
    ]
    payload: dict[str, Any] = requests[skip]["payload"]
    return payload


# ---------------------------------------------------------------- roles and scopes


async def test_node_calling_an_operator_method_is_refused(tmp_path: Path) -> None:
    """A node calling node.list: INVALID_REQUEST "unauthorized role: node" (as captured)."""
    async with bundled_gateway(tmp_path) as gw, raw_node(gw.url, ["system.notify"]) as node:
        error = await node.error("node.list", {})
        expected = dict(REAL["node_calls"])["node.list"]
        assert error["code"] == expected["code"]
        assert error["message"] == expected["message"]


async def test_operator_calling_a_node_method_is_refused(tmp_path: Path) -> None:
    """An operator calling node.invoke.result: "unauthorized role: operator"."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        error = await op.error("node.invoke.result", {"id": "x", "nodeId": "y", "ok": True})
        assert error == {"code": "INVALID_REQUEST", "message": "unauthorized role: operator"}


async def test_read_only_operator_cannot_invoke(tmp_path: Path) -> None:
    """operator.read calling node.invoke: FORBIDDEN with MISSING_SCOPE operator.write."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url, scopes=["operator.read"]) as reader,
    ):
        error = await reader.error("node.invoke", invoke("n", "system.notify", "k"))
        assert error["code"] == "FORBIDDEN"
        assert error["message"] == "missing scope: operator.write"
        assert error["details"] == {
            "code": "MISSING_SCOPE",
            "missingScope": "operator.write",
            "requiredScopes": ["operator.write"],
        }
        assert (await reader.ok("node.list"))["nodes"] == []


async def test_admin_only_command_needs_operator_admin(tmp_path: Path) -> None:
    """node.invoke of fs.listDir with only operator.write: missing operator.admin (the real
    gateway's admin-only commands; system.which needs only write, see test_gw_authz)."""
    async with (
        bundled_gateway(tmp_path) as gw,
        raw_operator(gw.url, scopes=["operator.write"]) as writer,
    ):
        error = await writer.error("node.invoke", invoke("n", "fs.listDir", "k"))
        assert error["details"]["missingScope"] == "operator.admin"


# ---------------------------------------------------------------- shapes vs the real gateway


async def test_node_method_shapes_match_the_real_gateway(tmp_path: Path) -> None:
    """node.list / node.describe / node.pair.* / node.rename carry the real key sets, before
    and after approval, for the same client the capture used."""
    async with (
        bundled_gateway(tmp_path, nodes_allow=["device.info"]) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
    ):
        await operator.wait_ready(5)
        node = start_node(
            gw.url,
            handlers={
                "device.info": ("device", _noop),
                "system.notify": ("system", _noop),
            },
        )
        try:
            await node.connection.wait_ready(5)
            await wait_for(lambda: node.session.surface == "pending", 5)
            listed = await operator.request("node.list")
            assert set(listed) == set(REAL["node.list"])
            (entry,) = listed["nodes"]
            assert set(entry) == set(REAL["node.list"]["nodes"][0])
            assert entry["pendingDeclaredCommands"] == ["device.info", "system.notify"]
            described = await operator.request("node.describe", {"nodeId": node.node_id})
            assert set(described) == set(REAL["node.describe"])
            presence = await operator.request("system-presence")
            (mine,) = [p for p in presence if p.get("deviceId") == node.node_id]
            real_node_presence = REAL["system-presence"][1]
            assert set(mine) == set(real_node_presence)
            assert mine["instanceId"] == node.node_id
            assert mine["text"] == "Node: test-node · mode node"
            pairs = await operator.request("node.pair.list")
            assert set(pairs["pending"][0]) == set(REAL["node.pair.list"]["pending"][0])
            request_id = pairs["pending"][0]["requestId"]
            approved = await operator.request("node.pair.approve", {"requestId": request_id})
            assert set(approved) == set(REAL["node.pair.approve"])
            real_node_keys = set(REAL["node.pair.approve"]["node"])
            assert set(approved["node"]) == real_node_keys
            await wait_for(node.surface_resolved, 5)
            after = await operator.request("node.list")
            assert set(after["nodes"][0]) == set(REAL["node.list.after"]["nodes"][0])
            assert after["nodes"][0]["approvalState"] == "approved"
            assert after["nodes"][0]["commands"] == ["device.info", "system.notify"]
            described = await operator.request("node.describe", {"nodeId": node.node_id})
            assert set(described) == set(REAL["node.describe.after"])
            renamed = await operator.request(
                "node.rename", {"nodeId": node.node_id, "displayName": " renamed "}
            )
            real_rename = next(e[2] for e in REAL["errors"] if e[0] == "node.rename")
            assert set(renamed) == set(real_rename)
            assert renamed == {"nodeId": node.node_id, "displayName": "renamed"}
            described = await operator.request("node.describe", {"nodeId": node.node_id})
            assert described["displayName"] == "renamed"
        finally:
            await node.aclose()


def _nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


async def test_result_nested_too_deep_fails_both_sides_at_once(tmp_path: Path) -> None:
    """A node result nested past the frame depth limit, as payload or as payloadJSON text,
    is refused to the node (INVALID_REQUEST) and ends the operator's invoke with a typed
    node error at once, not after the invoke's timeout; one level less goes through."""
    limit = MAX_FRAME_DEPTH
    async with setup(tmp_path, ["probe.echo"]) as (_gw, admin, node, node_id):
        too_deep: list[dict[str, Any]] = [
            {"payload": _nested(limit - 1)},  # the frame is then limit + 1 deep
            {"payload": _nested(300)},  # beyond what JSON encoding goes
            {"payloadJSON": json.dumps(_nested(300))},
            {"payloadJSON": "[" * 1100 + "]" * 1100},  # beyond what the parser reads
        ]
        for k, result in enumerate(too_deep):
            pending = await admin.send_request(
                "node.invoke", invoke(node_id, "probe.echo", f"deep{k}", timeoutMs=60_000)
            )
            request = await next_request(node, "probe.echo", skip=k)
            error = await node.error(
                "node.invoke.result", {"id": request["id"], "nodeId": node_id, "ok": True, **result}
            )
            assert error == {
                "code": "INVALID_REQUEST",
                "message": f"invalid node.invoke.result params: nested deeper than {limit} levels",
            }
            res = await asyncio.wait_for(pending, 5)
            message = f"node result nested deeper than {limit} levels"
            assert res["error"] == {
                "code": "UNAVAILABLE",
                "message": f"INVALID_REQUEST: {message}",
                "details": {
                    "nodeError": {"code": "INVALID_REQUEST", "message": message},
                    "nodeCommandDispatched": True,
                },
            }
        pending = await admin.send_request("node.invoke", invoke(node_id, "probe.echo", "fits"))
        request = await next_request(node, "probe.echo", skip=len(too_deep))
        fits = _nested(limit - 2)  # the node's frame is exactly limit deep
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": True, "payload": fits},
        )
        assert (await asyncio.wait_for(pending, 5))["payload"]["payload"] == fits
        assert node.ws.close_code is None and admin.ws.close_code is None


async def _noop(params: Any) -> Any:
    from openclaw_desktop.node import InvokeResult

    return InvokeResult.success({"ok": True})


async def test_error_shapes_match_the_real_gateway(tmp_path: Path) -> None:
    """Each error the capture recorded for node methods comes back identically."""
    async with (
        bundled_gateway(tmp_path, nodes_allow=["device.info"]) as gw,
        raw_operator(gw.url) as admin,
        approved_node(gw.url, admin, ["device.info", "probe.x", "camera.snap"]) as _node,
    ):
        node_id = next(iter(gw.app.hub.nodes))
        real_id = REAL["node.list"]["nodes"][0]["nodeId"]
        for method, params, expected in REAL["errors"]:
            if method == "node.rename":
                continue
            params = json.loads(json.dumps(params).replace(real_id, node_id))
            res = await admin.call(method, params)
            assert res["ok"] is False, (method, params, res)
            got = res["error"]
            assert got["code"] == expected["code"], (method, got)
            assert got["message"] == expected["message"], (method, got)
            assert got.get("details") == expected.get("details"), (method, got)


async def test_rename_of_an_unapproved_node_is_unknown(tmp_path: Path) -> None:
    """node.rename needs an approved node; a blank name is refused."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        ident = DeviceIdentity.generate()
        async with raw_node(gw.url, ["system.notify"], ident):
            error = await admin.error(
                "node.rename", {"nodeId": ident.device_id, "displayName": "x"}
            )
            assert error["message"] == "unknown nodeId"
            error = await admin.error(
                "node.rename", {"nodeId": ident.device_id, "displayName": "   "}
            )
            assert error["message"] == "displayName required"


# ---------------------------------------------------------------- node.invoke


async def test_invoke_with_payload(tmp_path: Path) -> None:
    """The node gets paramsJSON, timeoutMs and the key (no seq); the operator gets payload."""
    async with setup(tmp_path, ["probe.echo"]) as (_gw, admin, node, node_id):
        pending = await admin.send_request(
            "node.invoke", invoke(node_id, "probe.echo", "k1", params={"a": [1, 2]})
        )
        request = await next_request(node, "probe.echo")
        assert json.loads(request["paramsJSON"]) == {"a": [1, 2]}
        assert request["timeoutMs"] == 30_000
        assert request["idempotencyKey"] == "k1"
        assert request["nodeId"] == node_id
        assert all("seq" not in e for e in node.events_named("node.invoke.request"))
        ack = await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": True, "payload": {"b": 2}},
        )
        assert ack == {"ok": True}
        res = await asyncio.wait_for(pending, 5)
        assert res["payload"] == {
            "ok": True,
            "nodeId": node_id,
            "command": "probe.echo",
            "payload": {"b": 2},
            "payloadJSON": None,
        }


async def test_invoke_with_payload_json(tmp_path: Path) -> None:
    """A payloadJSON result is parsed into payload and echoed as payloadJSON."""
    async with setup(tmp_path, ["probe.echo"]) as (_gw, admin, node, node_id):
        pending = await admin.send_request("node.invoke", invoke(node_id, "probe.echo", "k1"))
        request = await next_request(node, "probe.echo")
        assert "paramsJSON" not in request
        text = '{"viaPayloadJSON": true, "n": 1}'
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": True, "payloadJSON": text},
        )
        res = (await asyncio.wait_for(pending, 5))["payload"]
        assert res["payload"] == {"viaPayloadJSON": True, "n": 1}
        assert res["payloadJSON"] == text


async def test_node_error_becomes_unavailable_with_node_error(tmp_path: Path) -> None:
    """A node error: UNAVAILABLE "CODE: message" with details.nodeError (real shape)."""
    async with setup(tmp_path, ["probe.fail"]) as (_gw, admin, node, node_id):
        pending = await admin.send_request("node.invoke", invoke(node_id, "probe.fail", "k"))
        request = await next_request(node, "probe.fail")
        node_error = {"code": "PROBE_FAILURE", "message": "probe asked to fail"}
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": False, "error": node_error},
        )
        res = await asyncio.wait_for(pending, 5)
        assert res["error"] == {
            "code": "UNAVAILABLE",
            "message": "PROBE_FAILURE: probe asked to fail",
            "details": {"nodeError": node_error, "nodeCommandDispatched": True},
        }


async def test_camera_errors_come_back_like_the_real_linux_node_policy(tmp_path: Path) -> None:
    """camera.* failures: INVALID_REQUEST with the node's bare message and details.code, as
    the real gateway's linux-node invoke policy answers (seen live end to end)."""
    allow = ["camera.snap"]
    async with setup(tmp_path, ["camera.snap"], nodes_allow=allow) as (_gw, admin, node, node_id):
        pending = await admin.send_request("node.invoke", invoke(node_id, "camera.snap", "k"))
        request = await next_request(node, "camera.snap")
        node_error = {"code": "INVALID_REQUEST", "message": "unknown camera deviceId"}
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": False, "error": node_error},
        )
        res = await asyncio.wait_for(pending, 5)
        assert res["error"] == {
            "code": "INVALID_REQUEST",
            "message": "unknown camera deviceId",
            "details": {"nodeError": node_error, "code": "INVALID_REQUEST"},
        }


async def test_invoke_timeout_cancels_on_the_node(tmp_path: Path) -> None:
    """No answer within timeoutMs: the node gets node.invoke.cancel, the operator
    UNAVAILABLE "TIMEOUT: node invoke timed out"; a late result is acked as ignored."""
    async with setup(tmp_path, ["probe.slow"]) as (_gw, admin, node, node_id):
        started = time.monotonic()
        res = await admin.call(
            "node.invoke", invoke(node_id, "probe.slow", "k", timeoutMs=300), timeout=5
        )
        assert 0.25 < time.monotonic() - started < 3
        assert res["error"]["code"] == "UNAVAILABLE"
        assert res["error"]["message"] == "TIMEOUT: node invoke timed out"
        request = await next_request(node, "probe.slow")
        assert request["timeoutMs"] == 300
        cancel = await node.wait_event("node.invoke.cancel")
        assert cancel["payload"] == {"invokeId": request["id"], "nodeId": node_id}
        late = await node.ok(
            "node.invoke.result", {"id": request["id"], "nodeId": node_id, "ok": True}
        )
        assert late == {"ok": True, "ignored": True}


async def test_node_disconnect_fails_the_invoke_at_once(tmp_path: Path) -> None:
    """A node that drops mid-invoke fails the call right away, well before its timeout."""
    async with setup(tmp_path, ["probe.slow"]) as (gw, admin, node, node_id):
        pending = await admin.send_request(
            "node.invoke", invoke(node_id, "probe.slow", "k", timeoutMs=20_000)
        )
        await next_request(node, "probe.slow")
        started = time.monotonic()
        await node.close()
        res = await asyncio.wait_for(pending, 5)
        assert time.monotonic() - started < 2
        assert res["error"]["code"] == "UNAVAILABLE"
        assert res["error"]["message"] == "DISCONNECTED: node disconnected (probe.slow)"
        assert gw.app.router.pending_count == 0


async def test_pending_invoke_bytes_are_bounded_per_node(tmp_path: Path) -> None:
    """A node that never answers: invokes with 20 MiB params wait until their params would
    pass 64 MiB for the node; the next one is refused at once (UNAVAILABLE, retryable, the
    limit in its details), and the bytes are released when the node goes away."""
    from gateway.nodes.invoke import MAX_PENDING_BYTES_PER_NODE

    params = {"blob": "x" * (20 * 1024 * 1024)}
    size = len(json.dumps(params, separators=(",", ":")))
    fits = MAX_PENDING_BYTES_PER_NODE // size
    async with setup(tmp_path, ["probe.slow"]) as (gw, admin, node, node_id):
        waiting = [
            await admin.send_request(
                "node.invoke",
                invoke(node_id, "probe.slow", f"k{i}", params=params, timeoutMs=60_000),
            )
            for i in range(fits)
        ]
        await next_request(node, "probe.slow", skip=fits - 1)
        assert gw.app.router.pending_bytes == fits * size
        started = time.monotonic()
        res = await admin.call(
            "node.invoke",
            invoke(node_id, "probe.slow", "over", params=params, timeoutMs=60_000),
            timeout=10,
        )
        assert time.monotonic() - started < 5, "refused at once, not after a timeout"
        error = res["error"]
        assert error["code"] == "UNAVAILABLE", error
        assert error["retryable"] is True
        assert f"limit of {MAX_PENDING_BYTES_PER_NODE} bytes" in error["message"]
        assert error["details"] == {
            "scope": "node",
            "limitBytes": MAX_PENDING_BYTES_PER_NODE,
            "pendingBytes": fits * size,
            "paramsBytes": size,
        }
        assert all(not f.done() for f in waiting), "the waiting invokes are untouched"
        await node.close()
        for future in waiting:
            assert (await asyncio.wait_for(future, 10))["error"]["code"] == "UNAVAILABLE"
        assert gw.app.router.pending_bytes == 0


async def test_duplicate_idempotency_key_is_dispatched_once(tmp_path: Path) -> None:
    """Two invokes with one idempotencyKey (concurrent and later): one dispatch, same result."""
    async with setup(tmp_path, ["probe.echo"]) as (_gw, admin, node, node_id):
        first = await admin.send_request("node.invoke", invoke(node_id, "probe.echo", "same"))
        second = await admin.send_request("node.invoke", invoke(node_id, "probe.echo", "same"))
        request = await next_request(node, "probe.echo")
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": True, "payload": {"n": 1}},
        )
        a, b = await asyncio.wait_for(asyncio.gather(first, second), 5)
        third = await admin.call("node.invoke", invoke(node_id, "probe.echo", "same"))
        assert a["payload"] == b["payload"] == third["payload"]
        assert a["payload"]["payload"] == {"n": 1}
        await asyncio.sleep(0.1)
        assert len(node.events_named("node.invoke.request")) == 1


async def test_shared_invoke_survives_the_first_caller_leaving(tmp_path: Path) -> None:
    """Two operators invoke with one idempotencyKey; the first disconnects; the second still
    gets the node's answer (the dispatch is not cancelled with the first caller)."""
    async with setup(tmp_path, ["probe.echo"]) as (gw, admin, node, node_id):
        async with raw_operator(gw.url) as first:
            await first.send_request("node.invoke", invoke(node_id, "probe.echo", "shared"))
            request = await next_request(node, "probe.echo")
            second = await admin.send_request(
                "node.invoke", invoke(node_id, "probe.echo", "shared")
            )
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.1)  # the first caller is gone
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": True, "payload": {"v": 1}},
        )
        res = await asyncio.wait_for(second, 5)
        assert res["ok"] is True, res
        assert res["payload"]["payload"] == {"v": 1}
        assert len(node.events_named("node.invoke.request")) == 1


async def test_failed_invoke_is_not_cached_for_its_key(tmp_path: Path) -> None:
    """After a failure the same idempotencyKey dispatches again (a retry may succeed)."""
    async with setup(tmp_path, ["probe.echo"]) as (_gw, admin, node, node_id):
        first = await admin.send_request("node.invoke", invoke(node_id, "probe.echo", "k"))
        request = await next_request(node, "probe.echo")
        await node.ok(
            "node.invoke.result",
            {"id": request["id"], "nodeId": node_id, "ok": False, "error": {"code": "X"}},
        )
        assert (await asyncio.wait_for(first, 5))["ok"] is False
        retry = await admin.send_request("node.invoke", invoke(node_id, "probe.echo", "k"))
        request = await next_request(node, "probe.echo", skip=1)
        await node.ok("node.invoke.result", {"id": request["id"], "nodeId": node_id, "ok": True})
        assert (await asyncio.wait_for(retry, 5))["ok"] is True


async def test_invoke_result_edge_cases(tmp_path: Path) -> None:
    """Unknown invoke id: acked with ignored:true; wrong nodeId: "nodeId mismatch"."""
    async with setup(tmp_path, ["probe.echo"]) as (_gw, _admin, node, node_id):
        ack = await node.ok("node.invoke.result", {"id": "nope", "nodeId": node_id, "ok": True})
        assert ack == {"ok": True, "ignored": True}
        error = await node.error("node.invoke.result", {"id": "x", "nodeId": "other", "ok": True})
        assert error == {"code": "INVALID_REQUEST", "message": "nodeId mismatch"}
        expected = dict(REAL["node_calls"])["node.invoke.result"]
        error = await node.error("node.invoke.result", {"nodeId": node_id, "ok": True})
        assert error["message"] == expected["message"]


async def test_node_event_answer_shape(tmp_path: Path) -> None:
    """node.event returns {ok, event, handled, reason}."""
    async with setup(tmp_path, ["probe.echo"]) as (_gw, _admin, node, _node_id):
        custom = await node.ok("node.event", {"event": "probe.custom", "payload": {"x": 1}})
        assert custom == {
            "ok": True,
            "event": "probe.custom",
            "handled": False,
            "reason": "unsupported_event",
        }
        alive = await node.ok(
            "node.event", {"event": "node.presence.alive", "payloadJSON": '{"trigger":"manual"}'}
        )
        assert alive == {
            "ok": True,
            "event": "node.presence.alive",
            "handled": True,
            "reason": "persisted",
        }


# ---------------------------------------------------------------- command policy


async def test_command_outside_the_linux_allowlist_is_refused(tmp_path: Path) -> None:
    """A declared command not on the Linux allowlist is dropped and refused at invoke."""
    async with setup(tmp_path, ["probe.x", "system.notify"], nodes_allow=[]) as ctx:
        _gw, admin, _node, node_id = ctx
        error = await admin.error("node.invoke", invoke(node_id, "probe.x", "k"))
        assert error == {
            "code": "INVALID_REQUEST",
            "message": 'node command not allowed: "probe.x" is not in the allowlist for '
            'platform "linux"',
            "details": {"reason": "command not allowlisted", "command": "probe.x"},
        }
        listed = await admin.ok("node.describe", {"nodeId": node_id})
        assert listed["commands"] == ["system.notify"]


async def test_nodes_allow_admits_a_custom_command(tmp_path: Path) -> None:
    """With the command in nodes_allow it is declared, approved and invoked."""
    async with setup(tmp_path, ["probe.x"], nodes_allow=["probe.x"]) as ctx:
        _gw, admin, node, node_id = ctx
        pending = await admin.send_request("node.invoke", invoke(node_id, "probe.x", "k"))
        request = await next_request(node, "probe.x")
        await node.ok("node.invoke.result", {"id": request["id"], "nodeId": node_id, "ok": True})
        assert (await asyncio.wait_for(pending, 5))["ok"] is True


async def test_dangerous_command_needs_explicit_allow(tmp_path: Path) -> None:
    """camera.snap is refused by default with the opt-in hint."""
    async with setup(tmp_path, ["camera.snap", "camera.list"], nodes_allow=[]) as ctx:
        _gw, admin, _node, node_id = ctx
        error = await admin.error("node.invoke", invoke(node_id, "camera.snap", "k"))
        assert error["message"] == (
            'node command not allowed: "camera.snap" requires explicit '
            "gateway.nodes.commands.allow opt-in"
        )


async def test_dangerous_command_with_allow_is_invoked(tmp_path: Path) -> None:
    """With camera.snap in nodes_allow it goes through."""
    async with setup(tmp_path, ["camera.snap"], nodes_allow=["camera.snap"]) as ctx:
        _gw, admin, node, node_id = ctx
        pending = await admin.send_request("node.invoke", invoke(node_id, "camera.snap", "k"))
        request = await next_request(node, "camera.snap")
        await node.ok("node.invoke.result", {"id": request["id"], "nodeId": node_id, "ok": True})
        assert (await asyncio.wait_for(pending, 5))["ok"] is True


async def test_deny_wins_over_allow(tmp_path: Path) -> None:
    """A command in both nodes_allow and nodes_deny is refused."""
    async with setup(
        tmp_path, ["camera.snap"], nodes_allow=["camera.snap"], nodes_deny=["camera.snap"]
    ) as ctx:
        _gw, admin, node, node_id = ctx
        error = await admin.error("node.invoke", invoke(node_id, "camera.snap", "k"))
        assert error["code"] == "INVALID_REQUEST"
        assert error["message"] == (
            'node command not allowed: "camera.snap" is blocked by gateway.nodes.commands.deny'
        )
        assert node.events_named("node.invoke.request") == []


async def test_unknown_node_is_pairing_changed(tmp_path: Path) -> None:
    """Invoking a node id nobody knows: UNAVAILABLE PAIRING_CHANGED (retryable)."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as admin:
        error = await admin.error("node.invoke", invoke("nope", "x", "k"))
        assert error["code"] == "UNAVAILABLE"
        assert error["details"] == {"code": "PAIRING_CHANGED"}
        assert error["retryable"] is True


# ---------------------------------------------------------------- an Android-like node


async def test_android_like_node_end_to_end(tmp_path: Path) -> None:
    """openclaw-android / node / protocol 3..4 / platform android, v3-signed: accepted,
    surface approved, device.info invoked (allowed on Android by default)."""
    async with (
        bundled_gateway(tmp_path) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
    ):
        await operator.wait_ready(5)
        client = ClientInfo(
            id=ClientId.ANDROID,
            display_name="Pixel",
            version="2026.9.6",
            platform="android",
            mode=ClientMode.NODE,
        )
        node = start_node(
            gw.url,
            client=client,
            handlers={"device.info": ("device", _android_info)},
            min_protocol=3,
            max_protocol=4,
        )
        try:
            hello = await node.connection.wait_ready(5)
            assert hello.auth.role == "node"
            await wait_for(lambda: node.session.surface == "pending", 5)
            pairs = await operator.request("node.pair.list")
            (pending,) = pairs["pending"]
            assert pending["platform"] == "android"
            assert pending["commands"] == ["device.info"]
            await operator.request("node.pair.approve", {"requestId": pending["requestId"]})
            await wait_for(node.surface_resolved, 5)
            result = await operator.request(
                "node.invoke",
                {"nodeId": node.node_id, "command": "device.info", "idempotencyKey": "i"},
            )
            assert result["payload"] == {"systemName": "Android", "model": "Pixel"}
            assert node.handled == ["device.info"]
        finally:
            await node.aclose()


async def _android_info(params: Any) -> Any:
    from openclaw_desktop.node import InvokeResult

    return InvokeResult.success({"systemName": "Android", "model": "Pixel"})


async def test_raw_android_node_on_protocol_3(tmp_path: Path) -> None:
    """A node offering only protocol 3 is admitted (nodes may use N-1)."""
    async with bundled_gateway(tmp_path) as gw:
        node = await RawClient.open(gw.url)
        res = await node.connect(
            DeviceIdentity.generate(),
            role="node",
            scopes=[],
            client_id="openclaw-android",
            client_mode="node",
            platform="android",
            device_family=None,
            min_protocol=3,
            max_protocol=3,
            commands=["device.info"],
        )
        await node.close()
        assert res["ok"] is True, res
        assert res["payload"]["auth"]["role"] == "node"
