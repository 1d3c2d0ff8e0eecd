"""Real clients against OUR bundled gateway: the real node host, our node, an Android-like node.

Our gateway runs as a subprocess (``python -m gateway run --manual-pairing``) on a free port
with its own state dir; everything is administered with OUR CLI in subprocesses
(``openclaw-desktop devices list|approve``, ``nodes pending|approve|invoke``), which connects
to a loopback gateway with the shared token and no device identity, like the real CLI.

1. The REAL node host (``openclaw node run``): device pairing request, approval, the restart the
   real node host needs after ``PAIRING_REQUIRED``, surface approval, ``system.which``.
2. Our headless node (``openclaw-desktop node``): the same without a restart.
3. A node connecting exactly like the Android app (``openclaw-android``/``node``, protocol
   3..4, v3 signature with platform ``android``), answering ``device.info``.
4. Our gateway restarted (SIGTERM, same port and state dir): pairings and device tokens
   survive; the nodes reconnect by themselves and are invokable again.
5. What the real node host reports after connecting (``node.host.stats`` every 60 s, its
   ``pathEnv``, runner inventory, skills, plugin tools): ``nodes list`` shows it on our gateway
   as on the real one, side by side.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import pytest

from openclaw_desktop.config.client_profile import cli_client
from openclaw_desktop.identity import (
    CredentialStore,
    DeviceIdentity,
    MemorySecretStore,
    gateway_key,
)
from openclaw_desktop.node import (
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
    NodeSession,
)
from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode, Role
from openclaw_desktop.transport import (
    ConnectionOptions,
    ConnectionState,
    GatewayConnection,
    RetryPolicy,
)
from tests.helpers.bundled_gateway import BundledGateway, DesktopNode
from tests.helpers.dbus_notifications import NotificationServer
from tests.helpers.desktop_session import session_bus
from tests.helpers.real_openclaw import GatewayFactory, NodeHostFactory, RealGateway, RealNodeHost

pytestmark = pytest.mark.timeout(300)

T = TypeVar("T")

FAST = RetryPolicy(base_ms=100, early_ceiling_ms=1000, pairing_poll_ms=500)
OPERATOR_SCOPES = ("operator.read", "operator.write", "operator.admin", "operator.pairing")
#: The real node host needs 5-15 s from spawn to its first connect.
NODE_HOST_CONNECT_S = 90.0
ANDROID_INFO = {
    "deviceName": "Pixel 9 (interop)",
    "modelIdentifier": "Pixel 9",
    "systemName": "Android",
    "systemVersion": "16",
    "appVersion": "2026.9.6",
    "appBuild": "2026090601",
    "locale": "en-US",
}


# ---------------------------------------------------------------------------------- helpers
async def eventually(
    probe: Callable[[], T | None], what: str, timeout: float = 60.0, interval: float = 0.5
) -> T:
    """Run the blocking ``probe`` in a thread until it returns something truthy."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await asyncio.to_thread(probe)
        if value:
            return value
        if asyncio.get_running_loop().time() >= deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(interval)


async def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll a cheap in-process ``predicate`` until it is true."""
    try:
        async with asyncio.timeout(timeout):
            while not predicate():
                await asyncio.sleep(0.05)
    except TimeoutError:
        raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}") from None


def device_request(gw: BundledGateway, match: Callable[[dict[str, Any]], bool]) -> Any:
    """The first pending device pairing request matching ``match`` (``devices list``)."""
    pending = gw.cli_json("devices", "list")["pending"]
    return next((r for r in pending if match(r)), None)


def node_request(gw: BundledGateway, node_id: str) -> Any:
    """The pending node-surface request of ``node_id`` (``nodes pending``)."""
    pending = gw.cli_json("nodes", "pending")["pending"]
    return next((r for r in pending if r["nodeId"] == node_id), None)


def node_entry(gw: BundledGateway, node_id: str) -> Any:
    """``node_id``'s entry in ``nodes list``."""
    nodes = gw.cli_json("nodes", "list")["nodes"]
    return next((n for n in nodes if n["nodeId"] == node_id), None)


def connected_and_approved(gw: BundledGateway, node_id: str) -> Any:
    """The ``nodes list`` entry once the node is connected with an approved surface."""
    entry = node_entry(gw, node_id)
    if entry and entry.get("connected") and entry.get("approvalState") == "approved":
        return entry
    return None


def invoke(gw: BundledGateway, node_id: str, command: str, params: Any) -> Any:
    """``openclaw-desktop nodes invoke`` (prints the node.invoke result as JSON)."""
    return gw.cli_json(
        "nodes",
        "invoke",
        "--node",
        node_id,
        "--command",
        command,
        "--params",
        json.dumps(params),
        "--invoke-timeout",
        "15000",
    )


def approve_device(gw: BundledGateway, request_id: str) -> None:
    """``openclaw-desktop devices approve <id>``."""
    out = gw.cli("devices", "approve", request_id)
    assert out.stdout.strip() == f"approved {request_id}", out.stdout


def approve_surface(gw: BundledGateway, request_id: str) -> None:
    """``openclaw-desktop nodes approve <id>``."""
    out = gw.cli("nodes", "approve", request_id)
    assert out.stdout.strip() == f"approved {request_id}", out.stdout


def assert_which_ls(result: dict[str, Any], node_id: str) -> None:
    """The real node host's ``system.which {"bins":["ls"]}`` answer."""
    assert result["ok"] is True, result
    assert result["nodeId"] == node_id
    assert result["command"] == "system.which"
    ls = result["payload"]["bins"]["ls"]
    assert os.path.isabs(ls) and Path(ls).name == "ls", result
    assert Path(ls).exists()
    # The real node host answers with payloadJSON; the gateway parses it and echoes it.
    assert json.loads(result["payloadJSON"]) == result["payload"]


async def pair_real_node_host(
    gw: BundledGateway, factory: NodeHostFactory, display_name: str = "real-node-host"
) -> tuple[RealNodeHost, str]:
    """Start the real node host against ``gw`` and take it through both approvals."""
    host = factory(port=gw.port, token=gw.token, display_name=display_name)
    request = await eventually(
        lambda: device_request(gw, lambda r: r.get("displayName") == display_name),
        "the real node host's device pairing request",
        NODE_HOST_CONNECT_S,
    )
    node_id = request["deviceId"]
    assert request["clientId"] == "node-host"
    assert request["clientMode"] == "node"
    assert request["role"] == "node"
    assert request["platform"] == "linux"
    assert request["deviceFamily"] == "Linux"
    # Real node-host behaviour: after PAIRING_REQUIRED it pauses until restarted.
    line = await asyncio.to_thread(
        host.wait_for_log, r"reconnect paused.*PAIRING_REQUIRED|waiting for operator", 30
    )
    assert request["requestId"] in line or "waiting for operator" in line

    await asyncio.to_thread(approve_device, gw, request["requestId"])
    paired = await asyncio.to_thread(gw.cli_json, "devices", "list")
    assert any(d["deviceId"] == node_id and "node" in d["roles"] for d in paired["paired"]), paired
    await asyncio.to_thread(host.restart)

    surface = await eventually(
        lambda: node_request(gw, node_id),
        "the real node host's node-surface request",
        NODE_HOST_CONNECT_S,
    )
    assert "system.which" in surface["commands"]
    assert surface["requiredApproveScopes"] == ["operator.pairing", "operator.admin"]
    await asyncio.to_thread(approve_surface, gw, surface["requestId"])
    await eventually(
        lambda: connected_and_approved(gw, node_id), "the real node host to be active", 30
    )
    return host, node_id


async def pair_desktop_node(
    gw: BundledGateway, home: Path, started: list[DesktopNode], env: Mapping[str, str]
) -> tuple[DesktopNode, str]:
    """Start our headless node against ``gw`` (added to ``started`` at once, for teardown)
    and take it through both approvals."""
    node = DesktopNode.start(home, url=gw.url, token=gw.token, display_name="desktop-node", env=env)
    started.append(node)
    node_id = await asyncio.to_thread(lambda: node.device_id)
    request = await eventually(
        lambda: device_request(gw, lambda r: r["deviceId"] == node_id),
        "our node's device pairing request",
    )
    assert request["clientMode"] == "node"
    assert request["role"] == "node"
    await asyncio.to_thread(node.wait_for_log, "pairing required", 30)

    await asyncio.to_thread(approve_device, gw, request["requestId"])
    # It goes on by itself: no restart.
    await asyncio.to_thread(node.wait_for_log, r"connected to .* as node", 30)
    surface = await eventually(lambda: node_request(gw, node_id), "our node's node-surface request")
    assert "system.notify" in surface["commands"]
    await asyncio.to_thread(approve_surface, gw, surface["requestId"])
    await asyncio.to_thread(node.wait_for_log, "node commands approved and active", 30)
    await eventually(lambda: connected_and_approved(gw, node_id), "our node to be active", 30)
    return node, node_id


def operator_options(gw: BundledGateway, creds: CredentialStore, **kw: Any) -> ConnectionOptions:
    """An in-process operator session with a device identity."""
    base: dict[str, Any] = {
        "url": gw.url,
        "role": Role.OPERATOR,
        "client": cli_client(),
        "signer": DeviceIdentity.generate(),
        "credentials": creds,
        "scopes": OPERATOR_SCOPES,
        "shared_token": gw.token,
        "wait_for_pairing": True,
        "retry": FAST,
    }
    base.update(kw)
    return ConnectionOptions(**base)


# ---------------------------------------------------------------------------------- fixtures
@pytest.fixture
def ours() -> Iterator[BundledGateway]:
    """Our gateway: token auth, ``--manual-pairing``, own state dir, free port."""
    with BundledGateway.start(args=["--manual-pairing"]) as gw:
        yield gw


@pytest.fixture
async def notifications() -> AsyncIterator[NotificationServer]:
    """A private session bus with a recording notification server, for our node's
    ``system.notify`` (the node gets the bus through :func:`node_env`)."""
    with session_bus() as address:
        async with NotificationServer.running(address) as server:
            yield server


def node_env(server: NotificationServer) -> dict[str, str]:
    """The environment that points our node at the test's session bus."""
    return {"DBUS_SESSION_BUS_ADDRESS": server.address}


@pytest.fixture
def desktop_nodes() -> Iterator[list[DesktopNode]]:
    """Our node subprocesses started by a test, stopped at teardown."""
    started: list[DesktopNode] = []
    yield started
    for node in started:
        node.stop()


# ------------------------------------------------------------------------------------- tests
async def test_real_node_host_pairs_and_answers_system_which(
    ours: BundledGateway, real_node_host: NodeHostFactory
) -> None:
    """The real ``openclaw node run`` pairs with our gateway and runs ``system.which``."""
    host, node_id = await pair_real_node_host(ours, real_node_host)

    result = await asyncio.to_thread(invoke, ours, node_id, "system.which", {"bins": ["ls"]})

    assert_which_ls(result, node_id)
    entry = await asyncio.to_thread(node_entry, ours, node_id)
    assert entry["clientId"] == "node-host"
    assert entry["displayName"] == "real-node-host"
    assert "system.which" in entry["commands"]
    assert host.running


def _self_reported(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a node.list entry the node reported itself, comparable across gateways
    and hosts: the keys, ``hostStats``' keys and sanity, ``pathEnv``, tools, session host."""
    stats = entry["hostStats"]
    assert isinstance(stats["updatedAtMs"], int) and stats["updatedAtMs"] > 0, entry
    assert 1 <= stats["cpuCount"] <= 4096
    assert 0 <= stats["memoryFreeBytes"] <= stats["memoryTotalBytes"]
    return {
        "keys": sorted(entry),
        "hostStatsKeys": sorted(stats),
        "cpuCount": stats["cpuCount"],
        "memoryTotalBytes": stats["memoryTotalBytes"],
        "pathEnv": entry["pathEnv"],
        "nodePluginTools": entry["nodePluginTools"],
        "sessionHost": entry["sessionHost"],
        "approvalState": entry["approvalState"],
    }


def _with_host_stats(entry: Any) -> Any:
    return entry if entry and entry.get("connected") and "hostStats" in entry else None


async def _real_node_host_on_the_real_gateway(
    real_gateway: GatewayFactory, real_node_host: NodeHostFactory
) -> dict[str, Any]:
    """The real node host on the real gateway (loopback device approved, surface approved
    with the real CLI): its node.list entry once it carries hostStats."""
    gw: RealGateway = await asyncio.to_thread(real_gateway)
    host = real_node_host(gw, display_name="real-node-host")

    def pending() -> Any:
        requests = gw.cli_json("nodes", "pending")
        rows = requests if isinstance(requests, list) else requests.get("pending", [])
        return next((r for r in rows if r.get("displayName") == "real-node-host"), None)

    request = await eventually(pending, "the surface request (real)", NODE_HOST_CONNECT_S)
    await asyncio.to_thread(gw.cli, "nodes", "approve", request["requestId"])
    # Its first snapshot went out while the surface awaited approval (refused); a reconnect
    # sends the next one at once instead of 60 s later.
    await asyncio.to_thread(host.restart)

    def listed() -> Any:
        nodes = gw.cli_json("gateway", "call", "node.list", "--params", "{}")["nodes"]
        return _with_host_stats(next((n for n in nodes if n["nodeId"] == request["nodeId"]), None))

    entry = await eventually(listed, "hostStats on the real gateway", 120, interval=3)
    assert host.running
    return dict(entry)


async def test_real_node_host_reports_show_like_on_the_real_gateway(
    ours: BundledGateway, real_gateway: GatewayFactory, real_node_host: NodeHostFactory
) -> None:
    """The real node host's stats (sent on connecting, then every 60 s), ``pathEnv``,
    plugin tools and runner inventory reach ``nodes list`` on our gateway with the same
    fields as on the real gateway, where it runs at the same time."""
    theirs_task = asyncio.create_task(
        _real_node_host_on_the_real_gateway(real_gateway, real_node_host)
    )
    try:
        host, node_id = await pair_real_node_host(ours, real_node_host, "real-node-host")
        await asyncio.to_thread(host.restart)  # as on the real gateway: a snapshot at once
        entry = await eventually(
            lambda: _with_host_stats(node_entry(ours, node_id)), "hostStats on ours", 120, 3
        )
        theirs = await theirs_task
    finally:
        if not theirs_task.done():
            theirs_task.cancel()
    assert _self_reported(entry) == _self_reported(theirs)
    assert os.pathsep in entry["pathEnv"]
    assert host.running


async def test_our_headless_node_pairs_without_restart(
    ours: BundledGateway,
    desktop_nodes: list[DesktopNode],
    tmp_path: Path,
    notifications: NotificationServer,
) -> None:
    """Our ``openclaw-desktop node`` waits for approval, goes on by itself, is invoked."""
    node, node_id = await pair_desktop_node(
        ours, tmp_path / "node", desktop_nodes, node_env(notifications)
    )

    result = await asyncio.to_thread(
        invoke, ours, node_id, "system.notify", {"title": "interop", "body": "hello"}
    )

    assert result["ok"] is True, result
    assert result["payload"] == {"sent": True}
    (shown,) = await notifications.wait_for(1)
    assert (shown.summary, shown.body) == ("interop", "hello")
    assert node.running


async def test_android_like_node_is_accepted_and_invoked(ours: BundledGateway) -> None:
    """A node connecting exactly like the Android app is paired, approved and invoked."""
    frames: list[dict[str, Any]] = []
    identity = DeviceIdentity.generate()
    client = ClientInfo(
        id=ClientId.ANDROID,
        display_name="Pixel 9 (interop)",
        version="2026.9.6",
        platform="android",
        device_family="Android",
        model_identifier="Pixel 9",
        mode=ClientMode.NODE,
        instance_id=uuid.uuid4().hex,
    )
    registry = CommandRegistry([CommandSpec("device.info", "device")])

    async def device_info(params: Any) -> InvokeResult:
        frames.append({"params": params})
        return InvokeResult.success(dict(ANDROID_INFO))

    options = ConnectionOptions(
        url=ours.url,
        role=Role.NODE,
        client=client,
        signer=identity,
        credentials=CredentialStore(MemorySecretStore()),
        shared_token=ours.token,
        commands=("device.info",),
        caps=("device",),
        min_protocol=3,
        max_protocol=4,
        wait_for_pairing=True,
        retry=FAST,
    )
    conn = GatewayConnection(options)
    node = NodeSession(conn, InvokeDispatcher(registry, {"device.info": device_info}, dict))
    conn.start()
    try:
        await wait_for(lambda: conn.status.pairing is not None, "PAIRING_REQUIRED")
        pairing = conn.status.pairing
        assert pairing is not None and pairing.request_id
        assert conn.status.state is ConnectionState.AWAITING_APPROVAL
        request = await eventually(
            lambda: device_request(ours, lambda r: r["deviceId"] == identity.device_id),
            "the Android node's device request",
        )
        assert request["requestId"] == pairing.request_id
        assert request["clientId"] == "openclaw-android"
        assert request["clientMode"] == "node"
        assert request["platform"] == "android"
        assert request["deviceFamily"] == "Android"

        await asyncio.to_thread(approve_device, ours, pairing.request_id)
        hello = await conn.wait_ready(30)
        assert hello.protocol == 4
        assert hello.auth.role == "node"
        assert hello.auth.scopes == []
        assert hello.auth.device_token
        await wait_for(lambda: node.surface == "pending", "the surface to be pending")

        surface = await eventually(
            lambda: node_request(ours, identity.device_id), "the Android node's surface"
        )
        assert surface["commands"] == ["device.info"]
        assert surface["platform"] == "android"
        await asyncio.to_thread(approve_surface, ours, surface["requestId"])
        await wait_for(lambda: node.surface == "approved", "the surface to be approved")

        result = await asyncio.to_thread(invoke, ours, identity.device_id, "device.info", {})

        assert result["ok"] is True, result
        assert result["payload"] == ANDROID_INFO
        assert frames == [{"params": {}}]
        entry = await asyncio.to_thread(node_entry, ours, identity.device_id)
        assert entry["clientId"] == "openclaw-android"
        assert entry["platform"] == "android"
        assert entry["modelIdentifier"] == "Pixel 9"  # shown as the real gateway shows it
        assert entry["commands"] == ["device.info"]
    finally:
        await node.aclose()
        await conn.aclose()


async def test_gateway_restart_keeps_pairings_and_nodes_come_back(
    ours: BundledGateway,
    real_node_host: NodeHostFactory,
    desktop_nodes: list[DesktopNode],
    tmp_path: Path,
    notifications: NotificationServer,
) -> None:
    """After SIGTERM and a start on the same port and state dir, pairings and device tokens
    survive; our operator reconnects with its stored device token only; both nodes come back
    by themselves and are invokable."""
    # An operator device, paired and holding a device token.
    creds = CredentialStore(MemorySecretStore())
    options = operator_options(ours, creds)
    assert options.signer is not None
    operator_id = options.signer.device_id
    operator = GatewayConnection(options)
    operator.start()
    try:
        await wait_for(lambda: operator.status.pairing is not None, "operator PAIRING_REQUIRED")
        pairing = operator.status.pairing
        assert pairing is not None and pairing.request_id
        await asyncio.to_thread(approve_device, ours, pairing.request_id)
        first_hello = await operator.wait_ready(30)
        assert first_hello.auth.device_token
        stored = creds.device_token(gateway_key(ours.url), operator_id, "operator")
        assert stored is not None and stored.token == first_hello.auth.device_token

        # Both nodes paired and active.
        node, node_id = await pair_desktop_node(
            ours, tmp_path / "node", desktop_nodes, node_env(notifications)
        )
        host, host_id = await pair_real_node_host(ours, real_node_host)
        before = await asyncio.to_thread(ours.cli_json, "devices", "list")
        paired_before = {d["deviceId"]: sorted(d["roles"]) for d in before["paired"]}
        assert paired_before == {operator_id: ["operator"], node_id: ["node"], host_id: ["node"]}

        # Restart: SIGTERM (clean exit), then the same port and state dir.
        states: list[ConnectionState] = []
        operator.on_status(lambda s: states.append(s.state))
        exit_code = await asyncio.to_thread(ours.stop)
        assert exit_code == 0, ours.log_tail()
        await asyncio.to_thread(ours.restart)

        after = await asyncio.to_thread(ours.cli_json, "devices", "list")
        assert {d["deviceId"]: sorted(d["roles"]) for d in after["paired"]} == paired_before
        assert after["pending"] == []

        # The live operator session came back by itself, with its device token.
        await wait_for(
            lambda: (
                operator.status.state is ConnectionState.CONNECTED
                and operator.hello is not None
                and operator.hello is not first_hello
            ),
            "the operator to reconnect",
        )
        assert ConnectionState.RECONNECTING in states
        assert (await operator.request("health"))["ok"] is True

        # A fresh session with the stored device token only (no shared token at all).
        token_only = operator_options(ours, creds, signer=options.signer, shared_token=None)
        async with GatewayConnection(token_only) as again:
            hello = await again.wait_ready(30)
            assert hello.auth.role == "operator"
            assert set(OPERATOR_SCOPES) <= set(hello.auth.scopes)
            assert hello.auth.device_token == stored.token
            listed = await again.request("device.pair.list", {})
            assert {d["deviceId"] for d in listed["paired"]} == set(paired_before)

        # Both nodes reconnect by themselves and answer again.
        await eventually(lambda: connected_and_approved(ours, node_id), "our node to reconnect", 60)
        await eventually(
            lambda: connected_and_approved(ours, host_id),
            "the real node host to reconnect",
            NODE_HOST_CONNECT_S,
        )
        assert host.running and node.running
        run_log = ours.run_log()
        # Our CLI node was started with an explicit --token, which goes first (the stored
        # device token is its fallback); the operator reconnects on its stored device token.
        assert re.search(rf"node {node_id[:12]} connected from 127\.0\.0\.1 \(token\)", run_log)
        assert re.search(
            rf"operator {operator_id[:12]} connected from .* \(device-token\)", run_log
        )

        notified = await asyncio.to_thread(
            invoke, ours, node_id, "system.notify", {"title": "after", "body": "restart"}
        )
        assert notified["payload"] == {"sent": True}
        assert [(n.summary, n.body) for n in notifications.received] == [("after", "restart")]
        which = await asyncio.to_thread(invoke, ours, host_id, "system.which", {"bins": ["ls"]})
        assert_which_ls(which, host_id)
    finally:
        await operator.aclose()
