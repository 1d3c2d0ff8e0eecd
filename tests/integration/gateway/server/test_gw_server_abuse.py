"""Bad input against the bundled gateway: garbage frames, connection floods, slowloris, request
floods and huge params. The gateway keeps serving others, its bookkeeping stays bounded and
the SQLite state stays intact."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from gateway import peer as gateway_peer
from gateway.nodes.invoke import IDEMPOTENCY_MAX_BYTES
from gateway.preauth import MAX_WAITING_PER_ADDRESS, SILENT_AFTER_S
from gateway.preauth import PER_ADDRESS as MAX_PREAUTH_PER_ADDRESS
from gateway.server import MAX_INFLIGHT_PER_PEER, GatewayServer
from gateway.state import DB_FILENAME
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.bundled_gateway import (
    RawClient,
    bundled_gateway,
    operator_options,
    raw_node,
    raw_operator,
    wait_for,
)

pytestmark = pytest.mark.timeout(60)


def assert_state_intact(state_dir: Path) -> None:
    """PRAGMA integrity_check of the state database says ok."""
    with closing(sqlite3.connect(state_dir / DB_FILENAME)) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


@asynccontextmanager
async def gateway(tmp_path: Path, **overrides: object) -> AsyncIterator[GatewayServer]:
    """A bundled gateway whose state database is checked after it stops."""
    async with bundled_gateway(tmp_path, **overrides) as gw:
        yield gw
    assert_state_intact(tmp_path)


async def health_ok(url: str, within: float) -> float:
    """Connect a fresh operator and call health; returns the seconds it took."""
    started = time.monotonic()
    async with asyncio.timeout(within), raw_operator(url) as op:
        assert (await op.ok("health"))["ok"] is True
    return time.monotonic() - started


# ---------------------------------------------------------------- garbage frames


async def test_garbage_after_auth_does_not_kill_the_connection(tmp_path: Path) -> None:
    """Non-JSON text, non-UTF-8 binary, unknown frame types and non-objects after hello-ok:
    the socket survives and a later request works."""
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        garbage: list[str | bytes] = [
            "not json at all",
            "{",
            b"\xff\xfe\x00garbage",
            b"\x80",
            "",
            "null",
            "[1, 2, 3]",
            '"string"',
            "12345678901234567890123456789",
            json.dumps({"type": "bogus", "id": "g1"}),
            json.dumps({"type": "event", "event": "tick"}),
            json.dumps({"type": "res", "id": "g2", "ok": True}),
            json.dumps({"type": "cancel", "id": "g3"}),
            json.dumps({"type": "req", "id": "", "method": "health"}),
            json.dumps({"type": "req", "id": "g4", "method": "health", "extra": 1}),
            json.dumps({"type": "req", "id": 7, "method": "health"}),
        ]
        for item in garbage:
            await op.send(item)
        assert (await op.ok("health"))["ok"] is True
        answered = {f["id"]: f for f in op.frames if f.get("type") == "res"}
        assert answered["g1"]["error"]["message"].startswith("invalid request frame: ")
        assert answered["g4"]["error"]["message"] == (
            "invalid request frame: at root: unexpected property 'extra'"
        )
        assert 7 in {f["id"] for f in op.frames if f.get("type") == "res"}
        assert op.ws.close_code is None
        assert await health_ok(gw.url, 5) < 5


async def test_many_unparsable_frames_are_tolerated(tmp_path: Path) -> None:
    """Hundreds of unparsable frames: still connected, still answered."""
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        for i in range(500):
            await op.send(f"garbage {i}" if i % 2 else bytes([0xFF, i % 256]))
        assert (await op.ok("health"))["ok"] is True


# ---------------------------------------------------------------- connection floods


async def health_ok_retrying(url: str, within: float) -> float:
    """:func:`health_ok`, trying again (as clients do) after a 1013 "try again later"."""
    started = time.monotonic()
    async with asyncio.timeout(within):
        while True:
            try:
                await health_ok(url, within)
                return time.monotonic() - started
            except websockets.ConnectionClosedError as exc:
                if exc.rcvd is None or exc.rcvd.code != 1013:
                    raise
                await asyncio.sleep(0.2)


async def test_silent_connection_flood_does_not_lock_out_a_real_client(tmp_path: Path) -> None:
    """200 concurrent connections from the client's own address that never send connect:
    32 hold a pre-auth slot, 32 wait for one, the rest get 1013 at once; the silent ones are
    evicted or time out while a real client (retrying after 1013, as clients do) gets in
    within a couple of silence windows."""
    async with gateway(tmp_path, handshake_timeout_ms=2_000) as gw:
        silent: list[ClientConnection] = []

        async def open_silent() -> None:
            with contextlib.suppress(Exception):
                silent.append(await connect(gw.url, open_timeout=10, ping_interval=None))

        await asyncio.gather(*(open_silent() for _ in range(200)))
        assert gw.preauth.pending <= MAX_PREAUTH_PER_ADDRESS
        assert gw.preauth.waiting <= MAX_WAITING_PER_ADDRESS
        assert await health_ok_retrying(gw.url, 4 * SILENT_AFTER_S + 4) < 4 * SILENT_AFTER_S + 3
        async with GatewayConnection(operator_options(gw.url)) as conn:
            await conn.wait_ready(4 * SILENT_AFTER_S + 3)
            assert (await conn.request("health"))["ok"] is True

        async def closed(ws: ClientConnection) -> int | None:
            with contextlib.suppress(websockets.ConnectionClosed):
                async with asyncio.timeout(8):
                    while True:
                        await ws.recv()
            return ws.close_code

        codes = await asyncio.gather(*(closed(ws) for ws in silent))
        assert all(code is not None for code in codes)
        assert set(codes) <= {1008, 1013, 1006}
        assert 1008 in codes  # the survivors hit the handshake timeout
        await wait_for(lambda: not gw.preauth.pending and not gw.preauth.waiting, 5)
        await asyncio.gather(*(ws.close() for ws in silent))


async def test_slowloris_upgrade_does_not_block_others(tmp_path: Path) -> None:
    """Sockets dribbling their HTTP upgrade byte by byte do not slow anyone else down."""
    async with gateway(tmp_path) as gw:
        request = (
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{gw.port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
        writers: list[asyncio.StreamWriter] = []
        stop = asyncio.Event()

        async def dribble() -> None:
            _reader, writer = await asyncio.open_connection("127.0.0.1", gw.port)
            writers.append(writer)
            for byte in request[:-4]:
                if stop.is_set():
                    return
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)

        tasks = [asyncio.create_task(dribble()) for _ in range(50)]
        try:
            await asyncio.sleep(0.3)
            for _ in range(3):
                assert await health_ok(gw.url, 5) < 1.5
        finally:
            stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for writer in writers:
                writer.close()


# ---------------------------------------------------------------- request floods


async def test_ten_thousand_pending_invokes_are_bounded(tmp_path: Path) -> None:
    """10,000 node.invoke to a node that never answers: at most the in-flight cap is pending,
    the rest get UNAVAILABLE at once, and health keeps answering for another client."""
    async with (
        gateway(tmp_path, nodes_allow=["probe.slow"]) as gw,
        raw_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        async with raw_node(gw.url, ["probe.slow"], ident) as node:
            event = await admin.wait_event("node.pair.requested")
            await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            await node.wait_event("node.pair.resolved")
            futures = []
            for i in range(10_000):
                params = {
                    "nodeId": ident.device_id,
                    "command": "probe.slow",
                    "idempotencyKey": f"k{i}",
                    "timeoutMs": 60_000,
                }
                futures.append(await admin.send_request("node.invoke", params))
                if i == 5_000:
                    assert await health_ok(gw.url, 5) < 2
            await wait_for(lambda: sum(f.done() for f in futures) >= 10_000 - MAX_INFLIGHT_PER_PEER)
            busy = [f.result() for f in futures if f.done()]
            assert len(busy) == 10_000 - MAX_INFLIGHT_PER_PEER
            assert all(r["error"]["code"] == "UNAVAILABLE" for r in busy)
            assert busy[0]["error"]["retryable"] is True
            assert gw.app.router.pending_count <= MAX_INFLIGHT_PER_PEER
            assert await health_ok(gw.url, 5) < 2
            await wait_for(
                lambda: len(node.events_named("node.invoke.request")) == MAX_INFLIGHT_PER_PEER
            )
        # The node left: every pending invoke fails at once.
        await wait_for(lambda: all(f.done() for f in futures), 10)
        assert gw.app.router.pending_count == 0
        assert (await admin.ok("health"))["ok"] is True


async def test_client_that_stops_reading_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client that keeps sending but stops reading is disconnected once its unsent data
    passes the buffer cap; the gateway's memory for it stays bounded and others are served."""
    monkeypatch.setattr(gateway_peer, "SLOW_CONSUMER_CLOSE_S", 0.5)
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        (peer,) = [p for p in gw.app.hub.peers.values()]
        peer.max_buffered_bytes = 256 * 1024  # instead of 50 MiB, to keep the test small
        op.ws.transport.pause_reading()
        sent = 0
        with contextlib.suppress(Exception):
            async with asyncio.timeout(20):
                while peer.conn_id in gw.app.hub.peers and sent < 200_000:
                    await op.send(json.dumps({"type": "req", "id": f"s{sent}", "method": "health"}))
                    sent += 1
                    if sent % 500 == 0:
                        await asyncio.sleep(0)
        await wait_for(lambda: peer.conn_id not in gw.app.hub.peers, 10)
        assert peer._buffered <= peer.max_buffered_bytes
        assert await health_ok(gw.url, 5) < 2


async def test_request_flood_without_awaiting_is_answered(tmp_path: Path) -> None:
    """5,000 health requests fired without waiting all get answers, in bounded time."""
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        futures = [await op.send_request("health") for _ in range(5_000)]
        async with asyncio.timeout(30):
            results = await asyncio.gather(*futures)
        ok = sum(1 for r in results if r["ok"])
        busy = sum(1 for r in results if not r["ok"])
        assert ok + busy == 5_000
        assert ok > 0
        assert (await op.ok("health"))["ok"] is True


async def test_huge_params_are_relayed(tmp_path: Path) -> None:
    """A 20 MiB params object goes to the node as paramsJSON and its 20 MiB answer back."""
    async with (
        gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        async with raw_node(gw.url, ["probe.echo"], ident) as node:
            event = await admin.wait_event("node.pair.requested")
            await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            await node.wait_event("node.pair.resolved")
            blob = "b" * (20 * 1024 * 1024)
            pending = await admin.send_request(
                "node.invoke",
                {
                    "nodeId": ident.device_id,
                    "command": "probe.echo",
                    "params": {"blob": blob},
                    "idempotencyKey": "huge",
                },
            )
            request = (await node.wait_event("node.invoke.request", timeout=20))["payload"]
            assert len(request["paramsJSON"]) > 20 * 1024 * 1024
            await node.ok(
                "node.invoke.result",
                {
                    "id": request["id"],
                    "nodeId": ident.device_id,
                    "ok": True,
                    "payloadJSON": request["paramsJSON"],
                },
                timeout=20,
            )
            res = await asyncio.wait_for(pending, 20)
            assert res["ok"] is True
            assert len(res["payload"]["payload"]["blob"]) == len(blob)
        assert await health_ok(gw.url, 5) < 2


async def test_large_invoke_results_do_not_pile_up_for_dedupe(tmp_path: Path) -> None:
    """40 node.invoke with distinct idempotency keys, each answered with 1 MiB: the results
    the gateway keeps for duplicate keys stay within IDEMPOTENCY_MAX_BYTES (accounted bytes),
    and the latest key is still answered from the cache without a second dispatch."""
    async with (
        gateway(tmp_path, nodes_allow=["probe.echo"]) as gw,
        raw_operator(gw.url) as admin,
    ):
        ident = DeviceIdentity.generate()
        async with raw_node(gw.url, ["probe.echo"], ident) as node:
            event = await admin.wait_event("node.pair.requested")
            await admin.ok("node.pair.approve", {"requestId": event["payload"]["requestId"]})
            await node.wait_event("node.pair.resolved")
            answer = json.dumps({"blob": "m" * (1024 * 1024)})
            router = gw.app.router
            peak = 0

            async def invoke(key: str) -> dict[str, object]:
                params = {"nodeId": ident.device_id, "command": "probe.echo", "idempotencyKey": key}
                result: dict[str, object] = await admin.ok("node.invoke", params, timeout=20)
                return result

            for i in range(40):
                key = f"big-{i}"
                pending = asyncio.ensure_future(invoke(key))

                def for_key(frame: dict[str, Any], key: str = key) -> bool:
                    return bool(frame["payload"]["idempotencyKey"] == key)

                request = await node.wait_event("node.invoke.request", for_key)
                await node.ok(
                    "node.invoke.result",
                    {
                        "id": request["payload"]["id"],
                        "nodeId": ident.device_id,
                        "ok": True,
                        "payloadJSON": answer,
                    },
                    timeout=20,
                )
                assert (await asyncio.wait_for(pending, 20))["payloadJSON"] == answer
                peak = max(peak, router.cached_bytes)
                assert router.cached_bytes <= IDEMPOTENCY_MAX_BYTES
            assert IDEMPOTENCY_MAX_BYTES // 2 < peak <= IDEMPOTENCY_MAX_BYTES
            assert router.cached_count < 40
            again = await invoke("big-39")
            assert again["payloadJSON"] == answer
            assert len(node.events_named("node.invoke.request")) == 40
        assert await health_ok(gw.url, 5) < 2


async def test_oversized_frame_to_one_client_does_not_hurt_others(tmp_path: Path) -> None:
    """A 30 MiB frame closes only its own connection (1009); others keep working."""
    async with gateway(tmp_path) as gw, raw_operator(gw.url) as bystander:
        async with raw_operator(gw.url) as op:
            await op.send(json.dumps({"type": "req", "id": "x", "method": "health"}) + " " * 10)
            await op.send("x" * (30 * 1024 * 1024))
            code, _ = await op.wait_closed(10)
            assert code == 1009
        assert (await bystander.ok("health"))["ok"] is True


async def test_duplicate_connect_and_connect_spam(tmp_path: Path) -> None:
    """Repeated connect frames on an authenticated socket each get an error; the socket stays."""
    async with gateway(tmp_path) as gw:
        client = await RawClient.open(gw.url)
        try:
            ident = DeviceIdentity.generate()
            assert (await client.connect(ident))["ok"]
            for _ in range(20):
                res = await client.connect(ident)
                assert res["ok"] is False
                assert res["error"]["message"] == "connect already completed"
            assert (await client.ok("health"))["ok"] is True
        finally:
            await client.close()
