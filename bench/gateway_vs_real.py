"""Benchmark: the bundled gateway beside the real OpenClaw gateway, same client, one run.

Measures, on loopback, for each gateway:
* spawn to first ``hello-ok``;
* signed handshake latency (p50/p99) of an already paired device;
* ``node.invoke`` round trip p50/p99, tiny and 1 MiB payloads (our NodeSession as the node);
* invokes per second with 50 in flight;
* resident memory (the process tree) idle and with 50 connected nodes.

Run: ``.venv/bin/python -m bench.gateway_vs_real``. Prints a Markdown table with ratios and
writes JSON to bench/results/. Not part of the tests (no timed assertions anywhere).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import orjson
from websockets.asyncio.client import connect

from bench.common import (
    ECHO,
    echo_node,
    operator,
    operator_options,
    summary,
    throughput,
    time_invokes,
    tree_rss_bytes,
)
from openclaw_desktop.config.client_profile import node_client
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.payload import build_payload_v3, signature_token
from openclaw_desktop.protocol import Role
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection
from tests.helpers.ports import free_port
from tests.helpers.real_openclaw import GatewayFactory, ensure_installed


def _byte_compile() -> None:
    root = Path(__file__).resolve().parent.parent
    for package in ("gateway", "openclaw_desktop"):
        compileall.compile_dir(root / package, quiet=1)


@contextlib.asynccontextmanager
async def ours(allow: Sequence[str] = (ECHO,)) -> AsyncIterator[tuple[str, str, int, float]]:
    """Spawn the bundled gateway; yields (url, token, pid, spawn-to-hello-ok seconds).

    Our packages are byte-compiled first, as ``pip install`` leaves them: with
    ``PYTHONDONTWRITEBYTECODE`` set (this workplace sets it) every spawn would otherwise
    compile ~100 modules from source and measure the compiler, not the gateway.
    """
    _byte_compile()
    home = Path(tempfile.mkdtemp(prefix="bench-gw-"))
    env = {**os.environ, "OPENCLAW_DESKTOP_HOME": str(home)}
    token = subprocess.run(
        [sys.executable, "-m", "gateway", "token"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    port = free_port()
    url = f"ws://127.0.0.1:{port}"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "run", "--port", str(port), "--allow", ",".join(allow)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        startup = await first_hello(url, token, start)
        yield url, token, proc.pid, startup
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.asynccontextmanager
async def real(allow: Sequence[str] = (ECHO,)) -> AsyncIterator[tuple[str, str, int, float]]:
    """Start the real gateway; yields (url, token, pid, spawn-to-hello-ok seconds)."""
    factory = GatewayFactory(ensure_installed())
    start = time.perf_counter()
    try:
        gw = await asyncio.to_thread(factory, allow=list(allow))
        startup = await first_hello(gw.url, gw.token, start)
        yield gw.url, gw.token, gw.pid, startup
    finally:
        await asyncio.to_thread(factory.close)


async def first_hello(url: str, token: str, start: float) -> float:
    """Seconds from ``start`` until a connect gets ``hello-ok`` (retrying quickly)."""
    opts = operator_options(url, token, reconnect=False, open_timeout_s=2)
    while True:
        with contextlib.suppress(Exception):
            async with GatewayConnection(opts) as conn:
                await conn.wait_ready(5)
                return time.perf_counter() - start
        if time.perf_counter() - start > 180:
            raise TimeoutError("gateway never said hello-ok")
        await asyncio.sleep(0.02)


async def handshakes(url: str, token: str, n: int) -> list[float]:
    """Signed handshakes of one paired device using its stored device token."""
    opts = operator_options(url, token, reconnect=False)
    async with GatewayConnection(opts) as conn:  # pairs and stores the device token
        await conn.wait_ready(30)
    opts.shared_token = None
    samples: list[float] = []
    for _ in range(n):
        start = time.perf_counter()
        async with GatewayConnection(opts) as conn:
            await conn.wait_ready(30)
            samples.append(time.perf_counter() - start)
    return samples


async def lean_handshakes(url: str, token: str, n: int) -> list[float]:
    """Signed handshakes of one paired device with a minimal client: a WebSocket, the
    challenge, a signed ``connect`` with the stored device token, ``hello-ok``. The same
    client for both gateways, without the SDK's own machinery (credential store, state
    machine, keepalive), so it measures the gateway's handshake more than the client's."""
    options = operator_options(url, token, reconnect=False)
    async with GatewayConnection(options) as conn:  # pairs and gets the device token
        hello = await conn.wait_ready(30)
    identity = options.signer
    assert isinstance(identity, DeviceIdentity) and hello.auth.device_token
    device_token, scopes = hello.auth.device_token, list(hello.auth.scopes)
    client = options.client.to_wire()
    samples: list[float] = []
    for _ in range(n):
        start = time.perf_counter()
        async with connect(url, compression=None, ping_interval=None, proxy=None) as ws:
            challenge = orjson.loads(await ws.recv(decode=False))["payload"]
            auth = {"deviceToken": device_token}
            signed = build_payload_v3(
                device_id=identity.device_id,
                client_id=client["id"],
                client_mode=client["mode"],
                role="operator",
                scopes=scopes,
                signed_at_ms=challenge["ts"],
                token=signature_token(auth),
                nonce=challenge["nonce"],
                platform=client.get("platform"),
                device_family=client.get("deviceFamily"),
            )
            params = {
                "minProtocol": 4,
                "maxProtocol": 4,
                "client": client,
                "role": "operator",
                "scopes": scopes,
                "auth": auth,
                "device": {
                    "id": identity.device_id,
                    "publicKey": identity.public_key,
                    "signature": identity.sign(signed),
                    "signedAt": challenge["ts"],
                    "nonce": challenge["nonce"],
                },
            }
            frame = {"type": "req", "id": "1", "method": "connect", "params": params}
            await ws.send(orjson.dumps(frame).decode())
            while True:
                reply = orjson.loads(await ws.recv(decode=False))
                if reply.get("type") == "res":
                    break
            samples.append(time.perf_counter() - start)
            assert reply["ok"], reply
    return samples


async def many_nodes(url: str, token: str, count: int) -> list[GatewayConnection]:
    """Connect ``count`` nodes (their surfaces stay pending; they are just connected)."""
    conns = []
    for i in range(count):
        conn = GatewayConnection(
            ConnectionOptions(
                url=url,
                role=Role.NODE,
                client=node_client(f"bench-{i}"),
                signer=DeviceIdentity.generate(),
                credentials=CredentialStore(MemorySecretStore()),
                shared_token=token,
                commands=("system.notify",),
                caps=("system",),
                min_protocol=3,
            )
        )
        conn.start()
        conns.append(conn)
    await asyncio.gather(*(c.wait_ready(60) for c in conns))
    return conns


async def measure(target: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement against one gateway."""
    startups: list[float] = []
    for _ in range(max(0, args.spawns - 1)):  # extra cold starts: one is too noisy to report
        async with target() as (_url, _token, _pid, startup):
            startups.append(startup)
    async with target() as (url, token, pid, startup):
        startups.append(startup)
        result: dict[str, Any] = {"startup_s": statistics.median(startups), "startups": startups}
        await asyncio.sleep(2)
        result["rss_idle_mb"] = tree_rss_bytes(pid) / 1e6
        result["handshake_ms"] = summary(await handshakes(url, token, args.handshakes))
        result["handshake_lean_ms"] = summary(await lean_handshakes(url, token, args.handshakes))
        async with operator(url, token) as op, echo_node(url, token, op) as node_id:
            result["invoke_tiny_ms"] = summary(await time_invokes(op, node_id, args.invokes, 16))
            big = await time_invokes(op, node_id, max(10, args.invokes // 10), 1024 * 1024)
            result["invoke_1mib_ms"] = summary(big)
            result["invoke_1mib_mb_s"] = 2 * 1.048576 / sorted(big)[len(big) // 2]
            result["throughput_50_per_s"] = await throughput(op, node_id, args.throughput, 50)
        nodes = await many_nodes(url, token, 50)
        await asyncio.sleep(1)
        result["rss_50_nodes_mb"] = tree_rss_bytes(pid) / 1e6
        await asyncio.gather(*(n.aclose() for n in nodes))
    return result


def table(o: dict[str, Any], r: dict[str, Any]) -> str:
    """Markdown table, ours beside the real one, with ratios (real / ours: >1 = we are better)."""
    rows = [
        ("spawn -> first hello-ok (median)", "startup_s", None, "s", True),
        ("signed handshake p50 (SDK client)", "handshake_ms", "p50", "ms", True),
        ("signed handshake p50 (minimal client)", "handshake_lean_ms", "p50", "ms", True),
        ("node.invoke tiny p50", "invoke_tiny_ms", "p50", "ms", True),
        ("node.invoke tiny p99", "invoke_tiny_ms", "p99", "ms", True),
        ("node.invoke 1 MiB p50", "invoke_1mib_ms", "p50", "ms", True),
        ("1 MiB payload throughput", "invoke_1mib_mb_s", None, "MB/s", False),
        ("invokes/s, 50 in flight", "throughput_50_per_s", None, "/s", False),
        ("RSS idle", "rss_idle_mb", None, "MB", True),
        ("RSS with 50 nodes", "rss_50_nodes_mb", None, "MB", True),
    ]
    lines = ["| measure | bundled gateway | real gateway 2026.9.6 | ratio |", "|---|---|---|---|"]
    for label, key, sub, unit, lower_better in rows:
        ov = o[key][sub] if sub else o[key]
        rv = r[key][sub] if sub else r[key]
        ratio = (rv / ov) if lower_better else (ov / rv)
        lines.append(f"| {label} | {ov:.2f} {unit} | {rv:.2f} {unit} | {ratio:.1f}x |")
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Measure ours, then the real one."""
    return {"ours": await measure(ours, args), "real": await measure(real, args)}


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spawns", type=int, default=3, help="cold starts (median reported)")
    parser.add_argument("--handshakes", type=int, default=200)
    parser.add_argument("--invokes", type=int, default=300)
    parser.add_argument("--throughput", type=int, default=2000)
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gateway_vs_real.json").write_text(json.dumps(result, indent=2))
    print(table(result["ours"], result["real"]))
    print("\nratio: how many times better the bundled gateway is (higher is better)")


if __name__ == "__main__":
    main()
