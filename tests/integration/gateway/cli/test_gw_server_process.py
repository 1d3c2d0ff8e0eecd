"""`python -m gateway run` as a real process: SIGTERM and SIGINT shutdown with an invoke in flight,
restarts on the same state dir (pairing, tokens, node surfaces persist; our node reconnects by
itself), and the generated shared token."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import time
from pathlib import Path

import pytest

from gateway.state import SHARED_TOKEN_FILENAME
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.transport import ConnectionState
from tests.helpers.bundled_gateway import BundledGateway, RawClient, start_node, wait_for

pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(os.name != "posix", reason="signals are POSIX"),
]


async def _operator(url: str, token: str, identity: DeviceIdentity | None = None) -> RawClient:
    """A raw admin operator (device-less unless ``identity``)."""
    client = await RawClient.open(url)
    scopes = ["operator.admin", "operator.read", "operator.write", "operator.pairing"]
    res = await client.connect(identity, scopes=scopes, auth={"token": token})
    assert res["ok"] is True, res
    return client


def _gateway(state_dir: Path, *args: str) -> BundledGateway:
    """Our gateway in a subprocess on ``state_dir`` (its log and CLI home beside it)."""
    return BundledGateway.start(args=args, root=state_dir.parent / "gw", state_dir=state_dir)


def _stop_with(proc: BundledGateway, sig: signal.Signals) -> tuple[int, float]:
    """Send ``sig`` (SIGTERM through :meth:`BundledGateway.terminate`); returns ``(exit code,
    seconds until the process exited)``. A process still running after 10 s is killed on
    the way out of its ``with``."""
    if sig is signal.SIGTERM:
        return proc.terminate()
    assert proc.proc is not None
    started = time.monotonic()
    proc.proc.send_signal(sig)
    code = proc.proc.wait(10)
    return code, time.monotonic() - started


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_signal_stops_within_2s_and_fails_the_inflight_invoke(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """SIGTERM or SIGINT (Ctrl+C): shutdown event, the pending node.invoke fails with an error
    (no hang), and the process exits 0 within 2 s even with a client that stopped reading,
    without a traceback."""
    with _gateway(tmp_path / "state", "--allow", "probe.slow") as proc:
        token = proc.token
        operator = await _operator(proc.url, token)
        node = await RawClient.open(proc.url)
        ident = DeviceIdentity.generate()
        try:
            res = await node.connect(
                ident,
                role="node",
                scopes=[],
                client_id="node-host",
                client_mode="node",
                commands=["probe.slow"],
                auth={"token": token},
            )
            assert res["ok"] is True, res
            event = await operator.wait_event("node.pair.requested")
            await operator.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            await node.wait_event("node.pair.resolved")
            # A client that stops reading: it will never answer the closing handshake.
            stuck = await _operator(proc.url, token)
            stuck.ws.transport.pause_reading()
            pending = await operator.send_request(
                "node.invoke",
                {
                    "nodeId": ident.device_id,
                    "command": "probe.slow",
                    "idempotencyKey": "k",
                    "timeoutMs": 30_000,
                },
            )
            await node.wait_event("node.invoke.request")
            code, elapsed = await asyncio.to_thread(_stop_with, proc, sig)
            assert code == 0, proc.run_log()
            assert elapsed < 2.0
            res = await asyncio.wait_for(pending, 2)
            assert res["ok"] is False
            assert res["error"]["code"] == "UNAVAILABLE"
            assert "gateway shutting down" in res["error"]["message"]
            shutdown = await operator.wait_event("shutdown", timeout=2)
            assert shutdown["payload"]["reason"] == "gateway stopping"
            await node.wait_event("shutdown", timeout=2)
            await operator.wait_closed(5)
            stuck.ws.transport.abort()
            await stuck.close()
            proc.kill()
            log = proc.run_log()
            assert "Traceback" not in log and "KeyboardInterrupt" not in log, log
        finally:
            await operator.close()
            await node.close()


async def test_generated_token_is_persisted_and_reused(tmp_path: Path) -> None:
    """First start writes a 0600 token file; `token` prints it; a restart keeps it."""
    with _gateway(tmp_path / "state") as proc:
        path = tmp_path / "state" / SHARED_TOKEN_FILENAME
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        token = proc.token
        assert token == path.read_text().strip()
        client = await _operator(proc.url, token)
        await client.close()
        await asyncio.to_thread(proc.restart)
        assert proc.read_token() == token
        client = await _operator(proc.url, token)
        assert (await client.ok("health"))["ok"] is True
        await client.close()


async def test_restart_keeps_pairing_tokens_and_surfaces(tmp_path: Path) -> None:
    """On the same state dir after a restart (SIGTERM, then SIGKILL): the paired operator's
    device token is still valid, our node reconnects by itself and is invokable again."""
    with _gateway(tmp_path / "state", "--manual-pairing", "--allow", "probe.echo") as proc:
        token = proc.token
        admin = await _operator(proc.url, token)
        # A paired operator device with a device token.
        ident = DeviceIdentity.generate()
        first = await RawClient.open(proc.url)
        refused = await first.connect(ident, scopes=["operator.read"], auth={"token": token})
        await first.close()
        await admin.ok(
            "device.pair.approve", {"requestId": refused["error"]["details"]["requestId"]}
        )
        paired = await RawClient.open(proc.url)
        hello = await paired.connect(ident, scopes=["operator.read"], auth={"token": token})
        await paired.close()
        device_token = hello["payload"]["auth"]["deviceToken"]
        # Our node: device approval, then surface approval.
        node = start_node(proc.url, shared_token=token)
        try:
            await wait_for(lambda: node.connection.status.pairing is not None, 10)
            pairing = node.connection.status.pairing
            assert pairing is not None
            await admin.ok("device.pair.approve", {"requestId": pairing.request_id})
            await node.connection.wait_ready(10)
            event = await admin.wait_event(
                "node.pair.requested", lambda e: e["payload"]["nodeId"] == node.node_id
            )
            await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            await wait_for(node.surface_resolved, 10)
            await admin.close()
            for kill in (False, True):
                before = node.connection.hello
                await asyncio.to_thread(proc.restart, kill=kill)

                def reconnected(before: object = before) -> bool:
                    return (
                        node.connection.status.state is ConnectionState.CONNECTED
                        and node.connection.hello is not before
                    )

                await wait_for(reconnected, 20)
                admin = await _operator(proc.url, token)
                started = time.monotonic()
                result = await admin.ok(
                    "node.invoke",
                    {
                        "nodeId": node.node_id,
                        "command": "probe.echo",
                        "params": {"restart": kill},
                        "idempotencyKey": f"after-{kill}",
                    },
                )
                assert result["payload"] == {"echo": {"restart": kill}}
                assert time.monotonic() - started < 5
                listed = await admin.ok("device.pair.list")
                assert {ident.device_id, node.node_id} <= {d["deviceId"] for d in listed["paired"]}
                await admin.close()
                again = await RawClient.open(proc.url)
                res = await again.connect(
                    ident, scopes=["operator.read"], auth={"deviceToken": device_token}
                )
                await again.close()
                assert res["ok"] is True, res
        finally:
            await node.aclose()


async def test_json_log_format_is_one_object_per_line(tmp_path: Path) -> None:
    """``--log-format json``: every stderr line is a JSON record, the ready line included."""
    options = ["-v", "--log-format", "json"]
    with BundledGateway.start(root=tmp_path, options=options) as proc:
        client = await RawClient.open(proc.url)
        res = await client.connect(None, scopes=["operator.read"], auth={"token": "wrong"})
        assert res["ok"] is False
        await client.close()
        proc.stop()
        records = [json.loads(line) for line in proc.run_log().splitlines()]
    assert {"ts", "level", "logger", "msg"} <= set(records[0])
    assert any(r["msg"].startswith("gateway ready on ws://127.0.0.1:") for r in records)
    assert any(r["level"] == "info" and r["logger"].startswith("gateway") for r in records)
