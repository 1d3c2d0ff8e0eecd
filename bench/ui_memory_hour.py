"""Memory of the desktop app after an hour-long chat, compressed in time.

The real window (:class:`ui.app.DesktopApp`) connected to our bundled gateway (subprocess on
loopback, fake model), chat of ``main`` open. An hour of use is simulated as ``--runs`` (120:
one every 30 s) agent runs, each fed through the SDK's event path (gateway frames in the real
gateway's shapes handed to the operator connection's event listeners, see
:mod:`bench.ui_common`): the user's message (shown at once, as ``ChatPresenter.send`` does
before its ``chat.send``), run start, two tool calls with a 2 KB output each, ``--deltas``
(40: what the gateways' 70 ms delta coalescing sends in about 3 s) ``chat`` deltas of a
Markdown reply, the final, run end. Each run is fed, applied and painted before the next.

Reported: RSS of this process after 1, 10, 30, 60, 120 runs, growth per run (runs 20 to the
last), rows, the chat delegate's document cache, RSS after ``malloc_trim`` and again once
that cache is emptied (its share; the view re-renders what it shows); then the same in a
child process with
``tracemalloc`` on (Python allocations: current and peak; Qt's own memory is not traced).

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.ui_memory_hour [--runs 120]``.
Writes ``bench/results/ui_memory_hour.json``. No assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.ui_common import (
    app_home,
    chat_delta,
    chat_final,
    connected_app,
    gateway_with_fake_model,
    inject,
    lifecycle,
    none_refcount,
    pin_none,
    reply_text,
    rss_mb,
    run_qt,
    settle,
    tool_event,
    trimmed_rss_mb,
    write_result,
)

CHECKPOINTS = (1, 10, 30, 60, 120)
TOOL_OUTPUT = "drwxr-xr-x  5 user user 4096 Nov 30 12:00 folder\n" * 40  # about 2 KB
APPLY_TIMEOUT_S = 120.0


async def one_run(app: Any, index: int, deltas: int) -> None:
    """One agent run, fed and applied."""
    client = app.runtime.client
    presenter = app.presenter
    run_id = f"hour-{index:04d}"
    presenter.timeline.send(run_id, f"Task {index}: look at the folder", now_ms=int(time.time()))
    presenter.changed.emit()
    seq = 1
    inject(client, *lifecycle(run_id, seq, "start"))
    for call in range(2):
        call_id = f"call-{index}-{call}"
        inject(client, *tool_event(run_id, seq + 1, call_id, "start"))
        inject(client, *tool_event(run_id, seq + 2, call_id, "result", TOOL_OUTPUT))
        seq += 2
    reply = reply_text(index, 1200)
    step = max(1, len(reply) // deltas)
    for i in range(deltas):
        seq += 1
        end = len(reply) if i == deltas - 1 else (i + 1) * step
        inject(client, *chat_delta(run_id, seq, reply[i * step : end], reply[:end]))
        await asyncio.sleep(0)
    inject(client, *chat_final(run_id, seq + 1, reply))
    inject(client, *lifecycle(run_id, seq + 2, "end"))
    async with asyncio.timeout(APPLY_TIMEOUT_S):
        while True:
            item = presenter.timeline.get(f"{run_id}:assistant")
            if item is not None and item.status == "done":
                break
            await asyncio.sleep(0.005)
    await settle(0.02)


async def scenario(url: str, token: str, runs: int, deltas: int, traced: bool) -> dict[str, Any]:
    """Feed ``runs`` runs into a connected window, measuring as it goes."""
    async with connected_app(url, token) as app:
        await settle(0.5)
        gc.collect()
        if traced:
            tracemalloc.start()
        start_rss = rss_mb()
        nones = none_refcount()
        rss: dict[str, float] = {"0": start_rss}
        started = time.perf_counter()
        for index in range(1, runs + 1):
            await one_run(app, index, deltas)
            if index in CHECKPOINTS or index == runs or index == 20:
                gc.collect()
                rss[str(index)] = rss_mb()
                print(f"run {index}: RSS {rss[str(index)]:.1f} MB", flush=True)
        elapsed = time.perf_counter() - started
        view = app.window.chat
        delegate = view.messages.itemDelegate()
        out: dict[str, Any] = {
            "runs": runs,
            "deltas_per_run": deltas,
            "feed_seconds": elapsed,
            "rss_mb": rss,
            "rows": view.model.rowCount(),
            "delegate_cached_documents": len(getattr(delegate, "_cache", {})),
            "none_refs_lost_per_run": (nones - none_refcount()) / runs,
        }
        first = 20 if runs > 20 else 0
        out["growth_per_run_kb"] = (rss[str(runs)] - rss[str(first)]) * 1024 / (runs - first)
        if traced:
            current, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            out["tracemalloc_current_mb"] = current / 1e6
            out["tracemalloc_peak_mb"] = peak / 1e6
        out["rss_trimmed_mb"] = trimmed_rss_mb()
        cache = getattr(delegate, "_cache", None)
        if isinstance(cache, dict):  # how much of it is the delegate's documents
            cache.clear()
            await settle(0.2)
            gc.collect()
            out["rss_trimmed_cache_emptied_mb"] = trimmed_rss_mb()
    return out


def measure(runs: int, deltas: int, traced: bool) -> dict[str, Any]:
    """One whole measurement (its own gateway and app home)."""
    with gateway_with_fake_model() as (url, token), app_home():
        return run_qt(lambda: scenario(url, token, runs, deltas, traced))


def main() -> None:
    """Entry point: RSS here, tracemalloc in a child process."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=120)
    parser.add_argument("--deltas", type=int, default=40)
    parser.add_argument("--traced-to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin_none()  # PySide6 6.12.0 on CPython 3.11: see bench.ui_common.none_refcount
    if args.traced_to is not None:
        args.traced_to.write_text(json.dumps(measure(args.runs, args.deltas, traced=True)))
        return
    result = {"rss": measure(args.runs, args.deltas, traced=False)}
    traced_file = Path(f"/tmp/bench-ui-memory-traced-{time.time_ns()}.json")
    command = [sys.executable, "-m", "bench.ui_memory_hour", "--runs", str(args.runs)]
    command += ["--deltas", str(args.deltas), "--traced-to", str(traced_file)]
    subprocess.run(command, check=True)
    result["traced"] = json.loads(traced_file.read_text())
    traced_file.unlink()
    write_result("ui_memory_hour", result)
    r, t = result["rss"], result["traced"]
    print(
        "| runs | RSS start | RSS end | growth / run | rows | cached docs | RSS end, trimmed | "
        "same, cache emptied | Python current / peak |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {r['runs']} | {r['rss_mb']['0']:.0f} MB | {r['rss_mb'][str(r['runs'])]:.0f} MB | "
        f"{r['growth_per_run_kb']:.0f} KB | {r['rows']} | {r['delegate_cached_documents']} | "
        f"{r['rss_trimmed_mb']:.0f} MB | {r.get('rss_trimmed_cache_emptied_mb', 0):.0f} MB | "
        f"{t['tracemalloc_current_mb']:.1f} / {t['tracemalloc_peak_mb']:.1f} MB |"
    )


if __name__ == "__main__":
    main()
