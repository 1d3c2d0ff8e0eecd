"""Benchmark: ``camera.snap`` at maxWidth 1600 from a generated 1920x1080 camera, through the
real InvokeDispatcher and camera handler (no gateway; the through-gateway version is separate).

Two sources, the paths a real camera takes: a video file (OpenCV/FFmpeg file decode) and an
MJPEG-over-HTTP stream on 127.0.0.1 (the IP-camera path). Every snap opens the source afresh,
as a real invoke does. Prints p50/p95 latency and the payload (base64) size.

Run: ``.venv/bin/python bench/camera_snap.py [--snaps 30]``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WIDTH, HEIGHT = 1920, 1080


@functools.cache
def _import_project() -> dict[str, Any]:
    """The project and its test helpers, importable when run as ``bench/camera_snap.py``."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from openclaw_desktop.config.settings import NodeSettings
    from openclaw_desktop.devices.camera import CameraConfig
    from openclaw_desktop.node import CommandRegistry, InvokeDispatcher, NodeContext
    from openclaw_desktop.node.handlers.camera import camera_area
    from tests.helpers import video_sources

    return {
        "NodeSettings": NodeSettings,
        "CameraConfig": CameraConfig,
        "CommandRegistry": CommandRegistry,
        "InvokeDispatcher": InvokeDispatcher,
        "NodeContext": NodeContext,
        "camera_area": camera_area,
        "video_sources": video_sources,
    }


def camera_like(index: int, width: int, height: int) -> np.ndarray[Any, Any]:
    """The test pattern plus sensor-like noise, so JPEG sizes resemble a real camera's."""
    project = _import_project()
    base: np.ndarray[Any, Any] = project["video_sources"].pattern_frame(index, width, height)
    noise = np.roll(_noise(height, width), index * 7, axis=1)
    frame: np.ndarray[Any, Any] = np.clip(base.astype(np.int16) + noise, 0, 255)
    return frame.astype(np.uint8)


@functools.cache
def _noise(height: int, width: int) -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).integers(-6, 7, (height, width, 3), dtype=np.int16)


def pct(values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


async def measure(source: str, snaps: int, clips_dir: Path) -> dict[str, Any]:
    """Run ``snaps`` camera.snap invokes against ``source``."""
    p = _import_project()
    settings = p["NodeSettings"](camera=True, camera_source=source)
    ctx = p["NodeContext"](settings=lambda: settings)
    area = p["camera_area"](ctx, p["CameraConfig"](temp_dir=clips_dir))
    dispatcher = p["InvokeDispatcher"](
        p["CommandRegistry"](area.specs), area.handlers, lambda: settings.toggles()
    )
    latencies: list[float] = []
    sizes: list[int] = []
    shape = (0, 0)
    for _ in range(snaps):
        started = time.perf_counter()
        result = await dispatcher.dispatch("camera.snap", {"maxWidth": 1600})
        latencies.append(time.perf_counter() - started)
        if not result.ok:
            raise SystemExit(f"camera.snap failed: {result.error_message}")
        sizes.append(len(result.payload["base64"]))
        shape = (result.payload["width"], result.payload["height"])
    return {
        "n": snaps,
        "p50_ms": pct(latencies, 50) * 1000,
        "p95_ms": pct(latencies, 95) * 1000,
        "payload_kib": statistics.median(sizes) / 1024,
        "size": f"{shape[0]}x{shape[1]}",
    }


async def main() -> None:
    """Generate the sources, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snaps", type=int, default=30, help="snaps per source (default 30)")
    args = parser.parse_args()
    logging.getLogger("openclaw.node").setLevel(logging.ERROR)  # no per-snap capture notices
    video_sources = _import_project()["video_sources"]
    rows: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="openclaw-bench-camera-") as tmp:
        folder = Path(tmp)
        video = video_sources.write_video(
            folder / "camera.mp4", width=WIDTH, height=HEIGHT, frames=60, make=camera_like
        )
        rows.append(("file 1920x1080 mp4", await measure(str(video), args.snaps, folder)))
        frames = [camera_like(i, WIDTH, HEIGHT) for i in range(30)]
        with video_sources.MjpegServer(frames, fps=30) as server:
            rows.append(("MJPEG http 1920x1080", await measure(server.url, args.snaps, folder)))
    print("camera.snap maxWidth=1600 through InvokeDispatcher (each snap opens the camera)")
    print()
    print("| source | n | p50 ms | p95 ms | payload (base64) KiB | photo |")
    print("|---|---:|---:|---:|---:|---|")
    for name, row in rows:
        print(
            f"| {name} | {row['n']} | {row['p50_ms']:.1f} | {row['p95_ms']:.1f} | "
            f"{row['payload_kib']:.0f} | {row['size']} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
