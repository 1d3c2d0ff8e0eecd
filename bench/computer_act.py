"""Benchmark: ``computer.act`` click -> next screenshot, under Xvfb against a real X client.

A private Xvfb (1280x800) runs the Tk text window of the tests
(:mod:`tests.helpers.x_text_window`); our node's real InvokeDispatcher (spec table, gates,
handlers; no gateway) takes a v2 ``screen.snapshot`` (JPEG, quality 0.85, maxWidth 1280: what
the gateway's ``computer`` tool asks for), then repeatedly a ``left_click`` on that frame
followed by the next snapshot, as the tool does after each input action. Prints p50/p95 of
the click alone, the snapshot alone, click -> next screenshot, and click -> the window
reporting the press (its own event handler, polled through its state file).

The reference has no Linux node fulfiller to compare with here (its ``cua-computer`` plugin
needs the pinned CUA Driver SDK, not installed), so there is no side-by-side ratio.

Run: ``.venv/bin/python bench/computer_act.py [--clicks 40]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from openclaw_desktop.config.settings import NodeSettings  # noqa: E402
from openclaw_desktop.node import NodeContext, build_dispatcher  # noqa: E402
from tests.helpers.desktop_session import xvfb  # noqa: E402
from tests.helpers.x_text_window import text_window  # noqa: E402


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile, seconds in, milliseconds out."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))] * 1000


def _pressed_more(before: int, state: dict[str, Any]) -> bool:
    return len(state.get("presses", [])) > before


async def measure(display: str, folder: Path, clicks: int) -> dict[str, list[float]]:
    """Run ``clicks`` click + snapshot rounds against the text window on ``display``."""
    settings = NodeSettings(screen=True, computer=True)
    ctx = NodeContext(settings=lambda: settings)
    dispatcher = build_dispatcher(ctx)
    execution = str(uuid.uuid4())
    shot = {"executionId": execution, "maxWidth": 1280, "quality": 0.85, "format": "jpeg"}
    times: dict[str, list[float]] = {"click": [], "snapshot": [], "click_to_shot": [], "seen": []}
    async with text_window(display, folder) as window:
        result = await dispatcher.dispatch("screen.snapshot", shot)
        if not result.ok:
            raise SystemExit(f"screen.snapshot failed: {result.error_message}")
        frame: dict[str, Any] = result.payload
        for n in range(clicks):
            x, y = 20 + (n * 37) % 600, 10 + (n * 53) % 460  # inside the 640x480 window
            presses = len(window.state().get("presses", []))
            started = time.perf_counter()
            clicked = await dispatcher.dispatch(
                "computer.act",
                {
                    "action": "left_click",
                    "executionId": execution,
                    "displayFrameId": frame["displayFrameId"],
                    "refWidth": frame["width"],
                    "x": x,
                    "y": y,
                },
            )
            after_click = time.perf_counter()
            if not clicked.ok:
                raise SystemExit(f"computer.act failed: {clicked.error_message}")
            result = await dispatcher.dispatch("screen.snapshot", shot)
            done = time.perf_counter()
            if not result.ok:
                raise SystemExit(f"screen.snapshot failed: {result.error_message}")
            frame = result.payload
            await window.until(functools.partial(_pressed_more, presses))
            seen = time.perf_counter()
            times["click"].append(after_click - started)
            times["snapshot"].append(done - after_click)
            times["click_to_shot"].append(done - started)
            times["seen"].append(seen - started)
        await ctx.computer.close(None)
    return times


async def main() -> None:
    """Start Xvfb and the window, measure, print the table (and write the JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=40, help="click rounds (default 40)")
    args = parser.parse_args()
    logging.getLogger("openclaw.node").setLevel(logging.ERROR)
    with xvfb(1280, 800) as server, tempfile.TemporaryDirectory(prefix="oc-bench-ca-") as tmp:
        os.environ["DISPLAY"] = server.display
        os.environ.pop("WAYLAND_DISPLAY", None)
        times = await measure(server.display, Path(tmp), args.clicks)
    labels = {
        "click": "computer.act left_click",
        "snapshot": "screen.snapshot jpeg 1280 (v2)",
        "click_to_shot": "click -> next screenshot",
        "seen": "click -> the window reports the press (polled 50 ms)",
    }
    print(f"computer.act under Xvfb 1280x800, Tk text window, n={args.clicks}")
    print()
    print("| step | p50 ms | p95 ms |")
    print("|---|---:|---:|")
    rows = {}
    for key, label in labels.items():
        rows[key] = {"p50_ms": pct(times[key], 50), "p95_ms": pct(times[key], 95)}
        print(f"| {label} | {rows[key]['p50_ms']:.1f} | {rows[key]['p95_ms']:.1f} |")
    out = ROOT / "bench" / "results" / "computer_act.json"  # ignored by git: this machine's
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"n": args.clicks, **rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
