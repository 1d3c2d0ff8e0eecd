"""``system.run`` benchmark: our node beside the real node host (``openclaw node run``).

Through the real OpenClaw gateway and through our bundled gateway, both nodes paired with
each (the real node host pairs with ours the same way), sequential invokes from one
operator:

* ``system.run`` of ``true``: what one command costs end to end (spawn, wait, answer);
* ``system.run`` of a command writing 10 MiB to stdout: the node reads it all and keeps the
  first 200,000 bytes (the reference's cap), so this measures draining a chatty command.

Run: ``.venv/bin/python -m bench.node_exec [--runs 50] [--big 10]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common import approved_node, operator, pct, summary
from bench.gateway_vs_real import ours, real
from openclaw_desktop.config import NodeSettings
from openclaw_desktop.node import CommandRegistry, InvokeDispatcher, NodeContext
from openclaw_desktop.node.handlers.exec import EXEC_COMMANDS, exec_area
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.real_openclaw import NodeHostFactory, ensure_installed

TRUE = {"command": ["true"]}
BIG = {"command": ["head", "-c", str(10 * 1024 * 1024), "/dev/zero"]}


def dispatcher(folder: Path) -> InvokeDispatcher:
    """Our exec area (enabled, its approvals document in ``folder``)."""
    settings = NodeSettings(exec=True)
    ctx = NodeContext(settings=lambda: settings, exec_approvals_path=folder / "approvals.json")
    area = exec_area(ctx)
    return InvokeDispatcher(CommandRegistry(area.specs), area.handlers, settings.toggles)


async def timed(conn: GatewayConnection, node_id: str, params: Any, n: int) -> list[float]:
    """Sequential ``system.run`` invokes after 2 warm-ups; seconds each."""
    samples: list[float] = []
    for i in range(n + 2):
        start = time.perf_counter()
        result = await conn.request(
            "node.invoke",
            {
                "nodeId": node_id,
                "command": "system.run",
                "params": params,
                "idempotencyKey": uuid.uuid4().hex,
                "timeoutMs": 60_000,
            },
            timeout_s=90,
        )
        assert result["payload"]["exitCode"] == 0, result
        if i >= 2:
            samples.append(time.perf_counter() - start)
    return samples


async def measure(conn: GatewayConnection, node_id: str, args: argparse.Namespace) -> Any:
    """Both measurements against one node."""
    small = await timed(conn, node_id, TRUE, args.runs)
    big = await timed(conn, node_id, BIG, args.big)
    return {"true_ms": summary(small), "big_ms": {**summary(big), "p95": pct(big, 95)}}


async def real_node_id(op: GatewayConnection, url: str, token: str, factory: Any) -> str:
    """Start the real node host against ``url`` and approve its surface; its id."""
    port = int(url.rsplit(":", 1)[1])
    await asyncio.to_thread(factory, port=port, token=token)
    async with asyncio.timeout(120):
        while True:
            pending = (await op.request("node.pair.list", {}))["pending"]
            if pending:
                await op.request("node.pair.approve", {"requestId": pending[0]["requestId"]})
                node_id: str = pending[0]["nodeId"]
                break
            await asyncio.sleep(0.5)
        while True:
            nodes = (await op.request("node.list", {}))["nodes"]
            entry: dict[str, Any] = next((n for n in nodes if n["nodeId"] == node_id), {})
            if entry.get("connected") and "system.run" in (entry.get("commands") or []):
                return node_id
            await asyncio.sleep(0.5)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Run everything."""
    folder = Path(tempfile.mkdtemp(prefix="bench-exec-"))
    results: dict[str, Any] = {}
    hosts = NodeHostFactory(ensure_installed())
    try:
        async with real(allow=()) as (url, token, _pid, _startup), operator(url, token) as op:
            host_id = await real_node_id(op, url, token, hosts)
            results["real_gateway_real_node"] = await measure(op, host_id, args)
            async with approved_node(url, token, op, dispatcher(folder), ("system",)) as mine:
                results["real_gateway_our_node"] = await measure(op, mine, args)
    finally:
        await asyncio.to_thread(hosts.close)
    hosts = NodeHostFactory(ensure_installed())
    try:
        async with (
            ours(allow=EXEC_COMMANDS) as (url, token, _pid, _startup),
            operator(url, token) as op,
        ):
            host_id = await real_node_id(op, url, token, hosts)
            results["our_gateway_real_node"] = await measure(op, host_id, args)
            async with approved_node(url, token, op, dispatcher(folder), ("system",)) as mine:
                results["our_gateway_our_node"] = await measure(op, mine, args)
    finally:
        await asyncio.to_thread(hosts.close)
    return results


def main() -> None:
    """Print a table with ratios: our node / the real node host through each gateway, and
    our gateway / the real one for each node."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--big", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    rr, ro = result["real_gateway_real_node"], result["real_gateway_our_node"]
    br, bo = result["our_gateway_real_node"], result["our_gateway_our_node"]
    print(
        "| measure | real gw + real node | real gw + our node | ours/real node"
        " | our gw + real node | our gw + our node | ours/real node"
        " | our gw / real gw (real node) | our gw / real gw (our node) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, key, q in (
        ("system.run true p50", "true_ms", "p50"),
        ("system.run true p99", "true_ms", "p99"),
        ("system.run 10 MiB output p50", "big_ms", "p50"),
        ("system.run 10 MiB output p95", "big_ms", "p95"),
    ):
        a, b, c, d = rr[key][q], ro[key][q], br[key][q], bo[key][q]
        print(
            f"| {label} | {a:.1f} ms | {b:.1f} ms | {b / a:.2f} | {c:.1f} ms | {d:.1f} ms"
            f" | {d / c:.2f} | {c / a:.2f} | {d / b:.2f} |"
        )


if __name__ == "__main__":
    main()
