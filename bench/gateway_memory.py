"""Benchmark: memory held by pending invokes, the bundled gateway beside the real one.

A node that never answers gets 30 ``node.invoke`` calls with 20 MiB params each (sent at
once, a 2-minute timeout each); the resident memory of the gateway's process tree is read
before, every half second while they wait (the peak is reported), and how many of the calls
the gateway refused at once. The bundled gateway bounds the params bytes waiting for answers
(64 MiB per node, 256 MiB in all), so it refuses most of them; the real one keeps them all.

Run: ``.venv/bin/python -m bench.gateway_memory``. Prints a Markdown table with the ratio and
writes JSON to bench/results/. Not part of the tests (no timed assertions anywhere).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import uuid
from pathlib import Path
from typing import Any

from bench.common import approved_node, operator, tree_rss_bytes
from bench.gateway_vs_real import ours, real
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.node import CommandRegistry, CommandSpec, InvokeDispatcher, InvokeResult

HANG = "bench.hang"
MIB = 1024 * 1024


async def _never(params: Any) -> InvokeResult:
    """The node's handler: never answers (until the node goes away)."""
    await asyncio.Event().wait()
    return InvokeResult.success(None)  # pragma: no cover - never reached


async def measure(target: Any, args: argparse.Namespace) -> dict[str, Any]:
    """RSS growth of one gateway while ``args.invokes`` big invokes wait for a silent node."""
    registry = CommandRegistry([CommandSpec(HANG, "bench")])
    dispatcher = InvokeDispatcher(registry, {HANG: _never}, dict)
    params = {"blob": "x" * (args.mib * MIB)}
    async with (
        target(allow=(HANG,)) as (url, token, pid, _startup),
        operator(url, token) as op,
        approved_node(url, token, op, dispatcher, ("bench",)) as node_id,
    ):
        await asyncio.sleep(2)
        before = tree_rss_bytes(pid)
        refused: list[str] = []

        async def one() -> None:
            request = {
                "nodeId": node_id,
                "command": HANG,
                "params": params,
                "idempotencyKey": uuid.uuid4().hex,
                "timeoutMs": 120_000,
            }
            try:
                await op.request("node.invoke", request, timeout_s=150)
            except GatewayError as exc:
                refused.append(exc.message)

        calls = [asyncio.create_task(one()) for _ in range(args.invokes)]
        samples = [before]
        for _ in range(int(args.settle_s * 2)):
            await asyncio.sleep(0.5)
            samples.append(tree_rss_bytes(pid))
        peak, settled = max(samples), samples[-1]
        for call in calls:
            call.cancel()
        for call in calls:
            with contextlib.suppress(asyncio.CancelledError):
                await call
    return {
        "rss_before_mb": before / 1e6,
        "rss_peak_mb": peak / 1e6,
        "growth_mb": (peak - before) / 1e6,
        "rss_settled_mb": settled / 1e6,
        "settled_growth_mb": (settled - before) / 1e6,
        "samples_mb": [round(sample / 1e6) for sample in samples],
        "refused": len(refused),
        "refusal": refused[0] if refused else None,
        "invokes": args.invokes,
        "params_mib": args.mib,
    }


def table(o: dict[str, Any], r: dict[str, Any]) -> str:
    """Markdown table, ours beside the real one (ratio real / ours: >1 = we hold less)."""
    lines = ["| measure | bundled gateway | real gateway 2026.9.6 | ratio |", "|---|---|---|---|"]
    for label, key in (
        ("RSS before", "rss_before_mb"),
        ("RSS peak while waiting", "rss_peak_mb"),
        ("RSS growth (peak)", "growth_mb"),
        ("RSS growth after the settle time", "settled_growth_mb"),
    ):
        ratio = r[key] / o[key] if o[key] > 0 else float("inf")
        lines.append(f"| {label} | {o[key]:,.0f} MB | {r[key]:,.0f} MB | {ratio:.1f}x |")
    lines.append(
        f"| invokes refused at once | {o['refused']} of {o['invokes']} | "
        f"{r['refused']} of {r['invokes']} | |"
    )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Measure ours, then the real one."""
    result = {"ours": await measure(ours, args)}
    if args.only_ours:
        print(json.dumps(result, indent=2))
        raise SystemExit(0)
    result["real"] = await measure(real, args)
    return result


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--invokes", type=int, default=30)
    parser.add_argument("--mib", type=int, default=20, help="params size of each invoke")
    parser.add_argument("--settle-s", type=float, default=15, help="how long to watch RSS")
    parser.add_argument("--only-ours", action="store_true", help="skip the real gateway")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gateway_memory.json").write_text(json.dumps(result, indent=2))
    print(table(result["ours"], result["real"]))
    print(f"\nours refused with: {result['ours']['refusal']}")


if __name__ == "__main__":
    main()
