"""``openclaw-desktop devices reject`` and ``nodes reject`` against our live bundled gateway.

Our gateway runs as a process (``gateway run --manual-pairing``); our CLI runs as a process
too (``--url``/``--token``, no device identity, like the real CLI on loopback). Raw sockets
play the device asking to pair and the node declaring commands, and a device-less admin
watches the events:

* ``devices reject <id>``: ``device.pair.resolved`` (rejected) goes out, the request leaves
  ``devices list`` without the device being paired, and its next attempt opens a new request;
* ``nodes reject <id>``: the live node socket is told (``node.pair.resolved`` rejected), the
  request leaves ``nodes pending`` and its commands stay unavailable to ``nodes invoke``;
* an unknown request id makes either command fail with the gateway's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway, CliError, RawClient

pytestmark = pytest.mark.timeout(120)

ADMIN_SCOPES = ["operator.admin", "operator.read", "operator.write", "operator.pairing"]


@pytest.fixture(scope="module")
def gw() -> Iterator[BundledGateway]:
    """One gateway for the module: token auth, manual pairing."""
    with BundledGateway.start(args=["--manual-pairing"]) as gateway:
        yield gateway


@pytest.fixture
async def admin(gw: BundledGateway) -> AsyncIterator[RawClient]:
    """A device-less admin operator (loopback, shared token) that records events."""
    client = await RawClient.open(gw.url)
    try:
        res = await client.connect(None, scopes=ADMIN_SCOPES, auth={"token": gw.token})
        assert res["ok"] is True, res
        yield client
    finally:
        await client.close()


async def cli(gw: BundledGateway, *args: str) -> str:
    """``openclaw-desktop ARGS`` against ``gw`` (off the event loop); its stdout."""
    result = await asyncio.to_thread(gw.cli, *args)
    return result.stdout


async def cli_json(gw: BundledGateway, *args: str) -> Any:
    return await asyncio.to_thread(gw.cli_json, *args)


async def ask_to_pair(gw: BundledGateway, identity: DeviceIdentity, **kw: Any) -> str:
    """Connect as ``identity`` (refused: not paired); the pairing request id."""
    client = await RawClient.open(gw.url)
    try:
        res = await client.connect(identity, auth={"token": gw.token}, **kw)
    finally:
        await client.close()
    assert res["ok"] is False, res
    assert res["error"]["details"]["code"] == "PAIRING_REQUIRED", res
    request_id: str = res["error"]["details"]["requestId"]
    return request_id


async def test_devices_reject(gw: BundledGateway, admin: RawClient) -> None:
    laptop = DeviceIdentity.generate()
    request_id = await ask_to_pair(gw, laptop, scopes=["operator.read"])
    listed = await cli_json(gw, "devices", "list")
    assert [r["deviceId"] for r in listed["pending"] if r["requestId"] == request_id] == [
        laptop.device_id
    ]

    out = await cli(gw, "devices", "reject", request_id)

    assert out.strip().endswith(request_id), out
    resolved = await admin.wait_event(
        "device.pair.resolved", lambda e: e["payload"]["requestId"] == request_id
    )
    assert resolved["payload"]["decision"] == "rejected"
    assert resolved["payload"]["deviceId"] == laptop.device_id
    listed = await cli_json(gw, "devices", "list")
    assert request_id not in {r["requestId"] for r in listed["pending"]}
    assert laptop.device_id not in {d["deviceId"] for d in listed["paired"]}
    # Still not paired: the next attempt is a new request.
    again = await ask_to_pair(gw, laptop, scopes=["operator.read"])
    assert again != request_id
    await cli(gw, "devices", "reject", again)


async def test_nodes_reject(gw: BundledGateway, admin: RawClient) -> None:
    phone = DeviceIdentity.generate()
    node_kw: dict[str, Any] = {
        "role": "node",
        "scopes": [],
        "client_id": "node-host",
        "client_mode": "node",
        "commands": ["system.notify"],
        "caps": ["system"],
    }
    # The device itself is approved first (with our CLI), so the node can connect.
    device_request = await ask_to_pair(gw, phone, **node_kw)
    await cli(gw, "devices", "approve", device_request)
    node = await RawClient.open(gw.url)
    try:
        res = await node.connect(phone, auth={"token": gw.token}, **node_kw)
        assert res["ok"] is True, res
        requested = await admin.wait_event(
            "node.pair.requested", lambda e: e["payload"]["nodeId"] == phone.device_id
        )
        request_id = requested["payload"]["requestId"]
        pending = await cli_json(gw, "nodes", "pending")
        (entry,) = [r for r in pending["pending"] if r["requestId"] == request_id]
        assert entry["nodeId"] == phone.device_id
        assert entry["commands"] == ["system.notify"]

        out = await cli(gw, "nodes", "reject", request_id)

        assert out.strip().endswith(request_id), out
        # The live node socket is told; no reconnect needed.
        told = await node.wait_event("node.pair.resolved")
        assert told["payload"]["requestId"] == request_id
        assert told["payload"]["decision"] == "rejected"
        resolved = await admin.wait_event(
            "node.pair.resolved", lambda e: e["payload"]["requestId"] == request_id
        )
        assert resolved["payload"]["decision"] == "rejected"
        pending = await cli_json(gw, "nodes", "pending")
        assert request_id not in {r["requestId"] for r in pending["pending"]}
        listed = await cli_json(gw, "nodes", "list")
        (mine,) = [n for n in listed["nodes"] if n["nodeId"] == phone.device_id]
        assert mine["approvalState"] != "approved", mine
        # Its commands stay unavailable.
        with pytest.raises(CliError) as refused:
            await asyncio.to_thread(
                gw.cli_json,
                "nodes",
                "invoke",
                "--node",
                phone.device_id,
                "--command",
                "system.notify",
                "--invoke-timeout",
                "3000",
            )
        assert refused.value.result.returncode != 0
        assert not node.events_named("node.invoke.request")
    finally:
        await node.close()


@pytest.mark.parametrize("what", ["devices", "nodes"])
async def test_reject_of_an_unknown_request_fails(gw: BundledGateway, what: str) -> None:
    result = await asyncio.to_thread(gw.cli, what, "reject", "no-such-request", check=False)
    assert result.returncode != 0
    assert "unknown requestId" in result.stderr + result.stdout


async def test_reject_says_rejected(gw: BundledGateway) -> None:
    request_id = await ask_to_pair(gw, DeviceIdentity.generate(), scopes=["operator.read"])
    out = await cli(gw, "devices", "reject", request_id)
    assert out.strip() == f"rejected {request_id}"
