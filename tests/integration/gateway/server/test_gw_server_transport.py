"""The bundled gateway's socket behaviour over real loopback WebSockets: challenge, handshake
timeout, frame size limits, tick/presence/seq events, shutdown and duplicate connects."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path

import pytest
import websockets
from websockets.asyncio.client import connect

from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.bundled_gateway import (
    RawClient,
    bundled_gateway,
    operator_options,
    raw_operator,
    wait_for,
)

pytestmark = pytest.mark.timeout(60)


async def test_challenge_is_the_first_frame(tmp_path: Path) -> None:
    """The server speaks first: a connect.challenge with a nonce and a current ts."""
    async with bundled_gateway(tmp_path) as gw, connect(gw.url) as ws:
        async with asyncio.timeout(5):
            first = json.loads(await ws.recv())
        assert first["type"] == "event"
        assert first["event"] == "connect.challenge"
        assert isinstance(first["payload"]["nonce"], str) and first["payload"]["nonce"]
        assert abs(first["payload"]["ts"] - time.time() * 1000) < 60_000
        assert "seq" not in first


async def test_each_connection_gets_a_fresh_nonce(tmp_path: Path) -> None:
    """Two connections get different challenge nonces."""
    async with bundled_gateway(tmp_path) as gw:
        a, b = await RawClient.open(gw.url), await RawClient.open(gw.url)
        try:
            assert a.nonce["nonce"] != b.nonce["nonce"]
        finally:
            await a.close()
            await b.close()


async def test_handshake_timeout_closes_1008(tmp_path: Path) -> None:
    """A client that never sends connect is closed with 1008 after handshake_timeout_ms."""
    async with bundled_gateway(tmp_path, handshake_timeout_ms=300) as gw:
        client = await RawClient.open(gw.url)
        started = time.monotonic()
        code, reason = await client.wait_closed(5)
        assert code == 1008
        assert reason == "handshake timeout"
        assert 0.2 < time.monotonic() - started < 3


async def test_preauth_frame_over_64k_is_closed(tmp_path: Path) -> None:
    """A first frame above 64 KiB closes the connection without a response."""
    async with bundled_gateway(tmp_path) as gw:
        client = await RawClient.open(gw.url)
        big = json.dumps(
            {"type": "req", "id": "c1", "method": "connect", "params": {"pad": "x" * 70_000}}
        )
        await client.send(big)
        code, _reason = await client.wait_closed(5)
        assert code == 1009
        assert not [f for f in client.frames if f.get("type") == "res"]


async def test_preauth_frame_just_under_64k_is_judged(tmp_path: Path) -> None:
    """A first frame just under 64 KiB is parsed and answered (invalid params), not dropped."""
    async with bundled_gateway(tmp_path) as gw:
        client = await RawClient.open(gw.url)
        frame = {"type": "req", "id": "c1", "method": "connect", "params": {"pad": ""}}
        frame["params"]["pad"] = "x" * (60_000)
        await client.send(json.dumps(frame))
        code, _reason = await client.wait_closed(5)
        assert code == 1008
        res = [f for f in client.frames if f.get("type") == "res"]
        assert res and res[0]["error"]["code"] == "INVALID_REQUEST"
        assert res[0]["error"]["message"].startswith("invalid connect params")


async def test_post_auth_frames_up_to_25_mib_are_accepted(tmp_path: Path) -> None:
    """After hello-ok a request just under 25 MiB is read and answered; the connection stays
    usable."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        blob = "y" * (25 * 1024 * 1024 - 200)
        res = await op.call("health", {"blob": blob}, timeout=30)
        assert res["ok"] is True
        assert (await op.ok("health"))["ok"] is True


async def test_post_auth_frame_over_25_mib_closes_1009(tmp_path: Path) -> None:
    """A post-auth frame above policy.maxPayload (25 MiB) closes the connection with 1009."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        assert op.hello is not None and op.hello["policy"]["maxPayload"] == 25 * 1024 * 1024
        await op.send(
            json.dumps(
                {
                    "type": "req",
                    "id": "big",
                    "method": "health",
                    "params": {"b": "z" * (26 * 1024 * 1024)},
                }
            )
        )
        code, _ = await op.wait_closed(10)
        assert code == 1009
        # The gateway keeps serving others.
        async with raw_operator(gw.url) as other:
            assert (await other.ok("health"))["ok"] is True


async def test_tick_events_every_tick_interval(tmp_path: Path) -> None:
    """tick events arrive about every tick_interval_ms, with {ts}, and the policy says so."""
    async with bundled_gateway(tmp_path, tick_interval_ms=200) as gw, raw_operator(gw.url) as op:
        assert op.hello is not None and op.hello["policy"]["tickIntervalMs"] == 200
        await wait_for(lambda: len(op.events_named("tick")) >= 4, 5)
        ticks = op.events_named("tick")
        stamps = [t["payload"]["ts"] for t in ticks]
        assert stamps == sorted(stamps)
        gaps = [b - a for a, b in itertools_pairwise(stamps)]
        assert all(100 <= g <= 1000 for g in gaps), gaps
        assert set(ticks[0]["payload"]) == {"ts"}


def itertools_pairwise(values: list[int]) -> list[tuple[int, int]]:
    """Adjacent pairs."""
    return list(itertools.pairwise(values))


async def test_presence_events_carry_state_version(tmp_path: Path) -> None:
    """A client connecting and leaving gives presence events with an increasing stateVersion."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        assert op.hello is not None
        start_version = op.hello["snapshot"]["stateVersion"]["presence"]
        other = DeviceIdentity.generate()
        async with raw_operator(gw.url, other):
            joined = await op.wait_event(
                "presence",
                lambda e: any(
                    p.get("deviceId") == other.device_id for p in e["payload"]["presence"]
                ),
            )
        left = await op.wait_event(
            "presence",
            lambda e: e["stateVersion"]["presence"] > joined["stateVersion"]["presence"],
        )
        assert joined["stateVersion"]["presence"] > start_version
        assert set(joined["stateVersion"]) == {"presence", "health"}
        assert not any(p.get("deviceId") == other.device_id for p in left["payload"]["presence"])
        assert joined["payload"]["presence"][0]["mode"] == "gateway"


async def test_health_events_carry_an_increasing_state_version(tmp_path: Path) -> None:
    """Operators get periodic health events whose stateVersion.health goes up each time;
    the event and the hello snapshot carry the ``health`` answer, as on the real gateway."""
    async with bundled_gateway(tmp_path, tick_interval_ms=150) as gw, raw_operator(gw.url) as op:
        assert op.hello is not None
        assert op.hello["snapshot"]["health"]["ok"] is True
        start = op.hello["snapshot"]["stateVersion"]["health"]
        await wait_for(lambda: len(op.events_named("health")) >= 2, 5)
        first, second = op.events_named("health")[:2]
        assert start < first["stateVersion"]["health"] < second["stateVersion"]["health"]
        assert first["payload"]["ok"] is True
        answer = await op.ok("health", {})
        assert set(first["payload"]) == set(answer) == set(op.hello["snapshot"]["health"])
        assert {"defaultAgentId", "agents", "sessions", "channels"} <= set(answer)
        unstable = ("ts", "durationMs")
        assert {k: v for k, v in first["payload"].items() if k not in unstable} == {
            k: v for k, v in answer.items() if k not in unstable
        }


async def test_operator_event_seq_is_per_connection_and_monotonic(tmp_path: Path) -> None:
    """Operator events carry seq 1, 2, 3... per connection; node events carry none."""
    async with bundled_gateway(tmp_path, tick_interval_ms=100) as gw, raw_operator(gw.url) as a:
        await wait_for(lambda: len(a.events) >= 3, 5)
        async with raw_operator(gw.url) as b:
            await wait_for(lambda: len(b.events) >= 3 and len(a.events) >= 6, 5)
            for client in (a, b):
                seqs = [e["seq"] for e in client.events]
                assert seqs == list(range(1, len(seqs) + 1)), seqs
        node = await RawClient.open(gw.url)
        try:
            res = await node.connect(
                DeviceIdentity.generate(),
                role="node",
                scopes=[],
                client_id="node-host",
                client_mode="node",
                commands=["system.notify"],
            )
            assert res["ok"], res
            await wait_for(lambda: len(node.events_named("tick")) >= 2, 5)
            assert all("seq" not in e for e in node.events)
        finally:
            await node.close()


async def test_shutdown_event_on_close(tmp_path: Path) -> None:
    """close() sends every peer a shutdown event, then closes the sockets."""
    gw_cm = bundled_gateway(tmp_path)
    gw = await gw_cm.__aenter__()
    closed = False
    try:
        op = await RawClient.open(gw.url)
        res = await op.connect(DeviceIdentity.generate())
        assert res["ok"]
        started = time.monotonic()
        await gw.close()
        closed = True
        assert time.monotonic() - started < 3
        event = await op.wait_event("shutdown", timeout=5)
        assert event["payload"] == {"reason": "gateway stopping"}
        assert isinstance(event["seq"], int)
        code, _ = await op.wait_closed(5)
        assert code is not None
        await op.close()
    finally:
        if not closed:
            await gw_cm.__aexit__(None, None, None)


async def test_duplicate_connect_is_refused_and_connection_stays(tmp_path: Path) -> None:
    """A second connect on an authenticated socket gets an error res; the socket stays usable."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        error = await op.error("connect", {"minProtocol": 4, "maxProtocol": 4})
        assert error["code"] == "INVALID_REQUEST"
        assert (await op.ok("health"))["ok"] is True


async def test_client_library_round_trip(tmp_path: Path) -> None:
    """Our GatewayConnection connects, stores the device token and calls health/status."""
    async with bundled_gateway(tmp_path) as gw:
        opts = operator_options(gw.url)
        async with GatewayConnection(opts) as conn:
            hello = await conn.wait_ready(5)
            assert hello.protocol == 4
            assert hello.auth.device_token
            assert (await conn.request("health"))["ok"] is True
            status = await conn.request("status")
            assert status["sessions"]["byAgent"][0]["agentId"] == "main"


async def test_server_keeps_serving_after_client_vanishes_mid_handshake(tmp_path: Path) -> None:
    """A TCP connection dropped during the handshake does not disturb the server."""
    async with bundled_gateway(tmp_path) as gw:
        ws = await connect(gw.url)
        await ws.recv()
        ws.transport.abort()
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        async with raw_operator(gw.url) as op:
            assert (await op.ok("health"))["ok"] is True
