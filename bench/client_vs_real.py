"""Benchmark: our client against the real OpenClaw gateway.

Measures, on loopback:
* connect to ``hello-ok`` latency of a fresh operator connection (TCP + WebSocket upgrade +
  challenge + signed connect), p50/p99 over N connections;
* ``node.invoke`` round trip through the gateway to our node and back (operator -> gateway
  -> node -> gateway -> operator), p50/p99, with a tiny payload and a 1 MiB payload.

Run: ``.venv/bin/python -m bench.client_vs_real [--connects 30] [--invokes 200]``.
The 1 MiB case always takes at least 100 samples, so that its p99 is not just the maximum.
Prints a Markdown table (and writes JSON under bench/results/). Not part of the tests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
import uuid
from pathlib import Path
from typing import Any

from openclaw_desktop.config.client_profile import cli_client, node_client
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.node import (
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
    NodeSession,
)
from openclaw_desktop.protocol import Role
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection
from tests.helpers.real_openclaw import GatewayFactory, RealGateway, ensure_installed

ECHO = "bench.echo"
MIN_BIG_SAMPLES = 100
"""Fewest 1 MiB round trips measured: with fewer samples, p99 is merely the slowest one."""


def pct(values: list[float], q: float) -> float:
    """Percentile (nearest rank) in milliseconds."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))
    return ordered[index] * 1000


async def bench_connect(gw: RealGateway, n: int) -> list[float]:
    """Fresh operator connections, each timed from start to hello-ok."""
    ident, creds = DeviceIdentity.generate(), CredentialStore(MemorySecretStore())
    samples: list[float] = []
    for _ in range(n):
        opts = ConnectionOptions(
            url=gw.url,
            role=Role.OPERATOR,
            client=cli_client(),
            signer=ident,
            credentials=creds,
            scopes=("operator.read", "operator.write"),
            shared_token=gw.token,
            reconnect=False,
        )
        start = time.perf_counter()
        async with GatewayConnection(opts) as conn:
            await conn.wait_ready(30)
            samples.append(time.perf_counter() - start)
    return samples


async def echo(params: Any) -> InvokeResult:
    """Return the params unchanged."""
    return InvokeResult.success(params)


async def bench_invoke(gw: RealGateway, n: int, size: int) -> list[float]:
    """node.invoke round trips through the real gateway to our node."""
    registry = CommandRegistry([CommandSpec(ECHO, "bench")])
    node_ident = DeviceIdentity.generate()
    node_conn = GatewayConnection(
        ConnectionOptions(
            url=gw.url,
            role=Role.NODE,
            client=node_client("bench-node"),
            signer=node_ident,
            credentials=CredentialStore(MemorySecretStore()),
            shared_token=gw.token,
            commands=(ECHO,),
            caps=("bench",),
            min_protocol=3,
        )
    )
    node = NodeSession(node_conn, InvokeDispatcher(registry, {ECHO: echo}, dict))
    node_conn.start()
    operator = GatewayConnection(
        ConnectionOptions(
            url=gw.url,
            role=Role.OPERATOR,
            client=cli_client(),
            signer=DeviceIdentity.generate(),
            credentials=CredentialStore(MemorySecretStore()),
            scopes=("operator.read", "operator.write", "operator.admin", "operator.pairing"),
            shared_token=gw.token,
        )
    )
    operator.start()
    try:
        await node_conn.wait_ready(30)
        await operator.wait_ready(30)
        pending = await asyncio.to_thread(gw.cli_json, "nodes", "pending")
        for item in pending:
            if item["nodeId"] == node_ident.device_id:
                await operator.request("node.pair.approve", {"requestId": item["requestId"]})
        payload = {"blob": "x" * size}
        samples: list[float] = []
        for i in range(n + 5):
            start = time.perf_counter()
            result = await operator.request(
                "node.invoke",
                {
                    "nodeId": node_ident.device_id,
                    "command": ECHO,
                    "params": payload,
                    "idempotencyKey": uuid.uuid4().hex,
                },
                timeout_s=60,
            )
            if i >= 5:  # warm-up
                samples.append(time.perf_counter() - start)
            assert len(result["payload"]["blob"]) == size
        return samples
    finally:
        await node.aclose()
        await node_conn.aclose()
        await operator.aclose()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Run every measurement against one real gateway."""
    factory = GatewayFactory(ensure_installed())
    try:
        gw = factory(allow=[ECHO])
        connect = await bench_connect(gw, args.connects)
        tiny = await bench_invoke(gw, args.invokes, 16)
        big = await bench_invoke(gw, max(MIN_BIG_SAMPLES, args.invokes // 2), 1024 * 1024)
    finally:
        factory.close()
    big_mb_s = 2 * 1.0 / statistics.median(big)  # 1 MiB each way per round trip

    def summary(samples: list[float]) -> dict[str, float]:
        return {"p50": pct(samples, 50), "p99": pct(samples, 99), "n": len(samples)}

    return {
        "connect_hello_ok_ms": summary(connect),
        "invoke_tiny_ms": summary(tiny),
        "invoke_1mib_ms": summary(big),
        "invoke_1mib_mib_per_s": big_mb_s,
    }


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connects", type=int, default=30)
    parser.add_argument("--invokes", type=int, default=200)
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "client_vs_real.json").write_text(json.dumps(result, indent=2))
    c, t, b = result["connect_hello_ok_ms"], result["invoke_tiny_ms"], result["invoke_1mib_ms"]
    print("| our client vs real gateway 2026.9.6 | p50 | p99 |")
    print("|---|---|---|")
    print(f"| connect -> hello-ok | {c['p50']:.1f} ms | {c['p99']:.1f} ms |")
    print(f"| node.invoke round trip, tiny | {t['p50']:.1f} ms | {t['p99']:.1f} ms |")
    print(f"| node.invoke round trip, 1 MiB each way | {b['p50']:.1f} ms | {b['p99']:.1f} ms |")
    rate = result["invoke_1mib_mib_per_s"]
    print(f"\n1 MiB invoke throughput: {rate:.1f} MiB/s (both directions)")


if __name__ == "__main__":
    main()
