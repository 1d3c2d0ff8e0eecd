"""Node capability benchmark, side by side through the real OpenClaw gateway and ours.

* no-op ``node.invoke`` round trip (operator -> gateway -> our node -> back): what one invoke
  costs end to end, and the node's own share of it (dispatch of the no-op, measured in the
  node process);
* ``camera.snap`` at 1600 px from a 1920x1080 video source, invoke to result, and the
  payload size.

Run: ``.venv/bin/python -m bench.node_capabilities [--invokes 200] [--snaps 20]``.
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
from openclaw_desktop.node import (
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
    NodeContext,
)
from openclaw_desktop.node.handlers.camera import camera_area
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.video_sources import write_video

NOOP = "bench.noop"
ALLOW = (NOOP, "camera.snap")


async def noop(params: Any) -> InvokeResult:
    """Does nothing."""
    return InvokeResult.success(None)


def dispatcher(video: Path) -> InvokeDispatcher:
    """The no-op plus the real camera area, reading ``video`` as the camera."""
    settings = NodeSettings(camera=True, camera_source=str(video))
    area = camera_area(NodeContext(settings=lambda: settings))
    specs = [CommandSpec(NOOP, "bench"), *(s for s in area.specs if s.name == "camera.snap")]
    handlers = {NOOP: noop, "camera.snap": area.handlers["camera.snap"]}
    return InvokeDispatcher(CommandRegistry(specs), handlers, settings.toggles)


async def timed(
    conn: GatewayConnection, node_id: str, command: str, params: Any, n: int
) -> tuple[list[float], Any]:
    """Sequential invokes after 3 warm-ups; the samples and the last payload."""
    samples: list[float] = []
    payload: Any = None
    for i in range(n + 3):
        start = time.perf_counter()
        result = await conn.request(
            "node.invoke",
            {
                "nodeId": node_id,
                "command": command,
                "params": params,
                "idempotencyKey": uuid.uuid4().hex,
                "timeoutMs": 60_000,
            },
            timeout_s=90,
        )
        if i >= 3:
            samples.append(time.perf_counter() - start)
        payload = result.get("payload")
    return samples, payload


async def one_gateway(starter: Any, video: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Both measurements through one gateway."""
    async with (
        starter() as (url, token, _pid, _startup),
        operator(url, token) as op,
        approved_node(url, token, op, dispatcher(video), ("bench", "camera")) as node_id,
    ):
        noop_s, _ = await timed(op, node_id, NOOP, {}, args.invokes)
        snap_s, snap = await timed(op, node_id, "camera.snap", {"maxWidth": 1600}, args.snaps)
    return {
        "noop_ms": summary(noop_s),
        "snap_ms": {**summary(snap_s), "p95": pct(snap_s, 95)},
        "snap_base64_bytes": len(snap["base64"]),
        "snap_size": [snap["width"], snap["height"]],
    }


async def node_dispatch_us(video: Path, n: int = 2000) -> float:
    """The node's own cost of one no-op invoke (gates + handler), p50 in microseconds."""
    disp = dispatcher(video)
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await disp.dispatch(NOOP, {})
        samples.append(time.perf_counter() - start)
    return pct(samples, 50) * 1000


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Run everything."""
    folder = Path(tempfile.mkdtemp(prefix="bench-cam-"))
    video = write_video(folder / "camera.mp4", width=1920, height=1080, frames=60)
    return {
        "real": await one_gateway(lambda: real_allowing(), video, args),
        "ours": await one_gateway(lambda: ours_allowing(), video, args),
        "node_dispatch_p50_us": await node_dispatch_us(video),
    }


def real_allowing() -> Any:
    """The real gateway with the benchmark's commands allowed."""
    return real(allow=ALLOW)


def ours_allowing() -> Any:
    """Our gateway with the benchmark's commands allowed."""
    return ours(allow=ALLOW)


def main() -> None:
    """Print a table with ratios (ours / real)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--invokes", type=int, default=200)
    parser.add_argument("--snaps", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    r, o = result["real"], result["ours"]
    print("| measure | real gateway | ours | ours / real |")
    print("|---|---|---|---|")
    for label, key, q in (
        ("no-op invoke p50", "noop_ms", "p50"),
        ("no-op invoke p99", "noop_ms", "p99"),
        ("camera.snap 1600 px p50", "snap_ms", "p50"),
        ("camera.snap 1600 px p95", "snap_ms", "p95"),
    ):
        a, b = r[key][q], o[key][q]
        print(f"| {label} | {a:.1f} ms | {b:.1f} ms | {b / a:.2f} |")
    print(
        f"\ncamera.snap payload: {o['snap_base64_bytes'] / 1024:.0f} KiB base64, {o['snap_size']}"
    )
    print(f"node-side cost of a no-op invoke (dispatch): {result['node_dispatch_p50_us']:.0f} µs")


if __name__ == "__main__":
    main()
