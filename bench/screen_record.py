"""Benchmark: ``screen.record`` of a 1920x1080 Xvfb screen whose content changes every frame,
through the real InvokeDispatcher and screen.record handler (no gateway; the reference's
Linux node host has no screen.record to compare with, so there is no real-gateway column).

For each fps: the frames kept of those asked for (the rest were skipped because the machine
fell behind), the process CPU time per recorded second, the wall time, and the mp4 size.

Run: ``.venv/bin/python bench/screen_record.py [--seconds 5] [--fps 10,30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import logging
import os
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import av  # noqa: E402

from openclaw_desktop.config.settings import NodeSettings  # noqa: E402
from openclaw_desktop.node import CommandRegistry, InvokeDispatcher, NodeContext  # noqa: E402
from openclaw_desktop.node.handlers.screen_record import screen_record_area  # noqa: E402
from tests.helpers.desktop_session import XPainter, xvfb  # noqa: E402

WIDTH, HEIGHT = 1920, 1080


def busy_screen(display: str, stop: threading.Event) -> None:
    """New coloured windows every 50 ms: the screen changes between any two frames."""
    rng = random.Random(0)
    with XPainter(display) as paint:
        while not stop.wait(0.05):
            w, h = rng.randint(40, 600), rng.randint(40, 400)
            colour = (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255))
            paint.add_window(rng.randint(0, WIDTH - w), rng.randint(0, HEIGHT - h), w, h, colour)


async def measure(seconds: float, fps: int) -> dict[str, Any]:
    """One recording; what it kept and what it cost."""
    settings = NodeSettings(screen=True)
    area = screen_record_area(NodeContext(settings=lambda: settings))
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: settings.toggles()
    )
    cpu, wall = time.process_time(), time.perf_counter()
    params = {"durationMs": round(seconds * 1000), "fps": fps, "includeAudio": False}
    result = await dispatcher.dispatch("screen.record", params)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if not result.ok:
        raise SystemExit(f"screen.record failed: {result.error_message}")
    data = base64.b64decode(result.payload["base64"])
    with av.open(io.BytesIO(data), mode="r") as container:
        frames = sum(1 for _ in container.decode(video=0))
    return {
        "fps": fps,
        "kept": frames,
        "asked": round(seconds * fps),
        "cpu_per_s": cpu / seconds,
        "wall_s": wall,
        "mib": len(data) / 2**20,
    }


async def main() -> None:
    """Start Xvfb, make it busy, record at each fps, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--fps", default="10,30", help="comma-separated rates (default 10,30)")
    args = parser.parse_args()
    logging.getLogger("openclaw.node").setLevel(logging.ERROR)
    rows = []
    with xvfb(WIDTH, HEIGHT) as server:
        os.environ["DISPLAY"] = server.display
        stop = threading.Event()
        painter = threading.Thread(target=busy_screen, args=(server.display, stop), daemon=True)
        painter.start()
        try:
            for fps in (int(f) for f in args.fps.split(",")):
                rows.append(await measure(args.seconds, fps))
        finally:
            stop.set()
            painter.join(timeout=5)
    where = f"{args.seconds:g} s, changing screen, {os.cpu_count()} CPUs"
    print(f"screen.record {WIDTH}x{HEIGHT}, {where}")
    print()
    print("| fps | frames kept / asked | CPU s per recorded s | wall s | mp4 MiB |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['fps']} | {r['kept']} / {r['asked']} | {r['cpu_per_s']:.2f} | "
            f"{r['wall_s']:.2f} | {r['mib']:.2f} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
