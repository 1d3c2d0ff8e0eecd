"""Memory per chat run of a long-running window, through the window's real send path.

The real window (:class:`ui.app.DesktopApp`) connected to our bundled gateway (subprocess on
loopback) whose model is the scripted fake one (a process of its own: it records every
request, each with the whole conversation, which must not count as the window's memory),
chat of ``main`` open. ``--runs`` (1,000) short runs, one after the other, each sent as a
person sends it: ``ChatPresenter.send`` (the message is shown, then ``sessions.send`` →
``chat.send`` over the WebSocket), the fake model streams a short reply (``FAKE-LLM reply
#n: ...``, about 45 characters), the gateway's events come back through the SDK to the
timeline and the view; the next run starts once the reply is shown done and the window is
idle.

Three measurements, each in a process of its own (with its own gateway and model), one
after the other:

* ``plain``: the window as it is used. RSS (after ``gc.collect``) every 50 runs; the growth
  per run is the least-squares slope over the last 500 runs (the machine is shared: a slope
  over 11 samples is steadier than two end points). At the end the growth since run 0 is
  split by what gives memory back: ``malloc_trim(0)`` (freed C/C++ memory glibc kept:
  *allocator*), then dropping the chat the way the window drops it when it leaves a gateway
  (presenter closed, view deleted: its timeline items, rows and laid-out documents:
  *timeline content*) and trimming again; what is left is *other*.
* ``cleared``: the same, but every 100 runs the chat is switched to a new session and the
  old one dropped as above, so what the window shows stays under 200 rows. Its RSS right
  after each switch must plateau: its slope is the growth per run that is not the content.
* ``traced``: ``plain`` with ``tracemalloc`` on (10 frames): Python memory grown from run
  500 to the last, by package and by traceback (the biggest growers, with their block
  counts), so a Python object kept per run would show with the line that made it.

At every sample: live :class:`openclaw_desktop.sdk.run.Run` objects (counted by the garbage
collector, not the SDK's own tables: they must stay bounded, ``FINISHED_KEPT``), the SDK's
tables, the timeline's items, the view's rows, the delegate's cached documents, the number of
objects the garbage collector tracks.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.ui_runs_memory [--runs 1000]``.
Writes ``bench/results/ui_runs_memory.json``. No assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.ui_common import (
    app_home,
    connected_app,
    pin_none,
    reaper,
    rss_mb,
    run_qt,
    settle,
    trimmed_rss_mb,
    write_result,
)

MODES = ("plain", "cleared", "traced")
EVERY = 50  # runs between samples
CLEAR_EVERY = 100  # runs per session in the ``cleared`` measurement
SLOPE_OVER = 500  # the growth per run is the slope over the last this many runs
RUN_TIMEOUT_S = 60.0
TRACE_FRAMES = 10
_GROUPS = (
    ("openclaw_desktop/sdk", "sdk"),
    ("openclaw_desktop/chat", "chat"),
    ("/ui/", "ui"),
    ("PySide6", "qt bindings"),
    ("/asyncio/", "asyncio"),
)


async def one_run(app: Any, index: int) -> None:
    """Send one message the way the window does and wait for its reply to be shown done."""
    presenter = app.presenter
    run_id = await presenter.send(f"hello {index}")
    assert run_id is not None
    async with asyncio.timeout(RUN_TIMEOUT_S):
        while True:
            reply = presenter.timeline.reply(run_id)
            if reply is not None and reply.status == "done" and not presenter.timeline.active_run:
                break
            await asyncio.sleep(0.002)


async def drop_chat(app: Any, then_open: str | None) -> None:
    """Drop the current chat as the window does when it leaves a gateway (presenter closed,
    view removed and deleted); open ``then_open`` first if given."""
    old = app.presenter
    if then_open is not None:
        await app.open_session(then_open)
    app.presenters.pop(old.session_key, None)
    await old.aclose()
    view = app.window._views.pop(old.session_key)
    app.window.stack.removeWidget(view)
    view.deleteLater()
    if then_open is None:
        app.presenter = None
        app.window.chat = None
    await settle(0.2)  # deleteLater runs


def live_runs() -> int:
    """SDK Run objects alive in this process (whoever holds them)."""
    from openclaw_desktop.sdk.run import Run

    return sum(1 for o in gc.get_objects() if type(o) is Run)


def counts(app: Any) -> dict[str, int]:
    """What the SDK, the timeline and the view hold now."""
    client = app.runtime.client
    out = {
        "live_run_objects": live_runs(),
        "sdk_runs_followed": len(client.run_book.running),
        "sdk_finished_kept": len(client.run_book.finished),
        "normalizer_runs": len(client._normalizer._items),
        "gc_objects": len(gc.get_objects()),
    }
    if app.presenter is not None and app.window.chat is not None:
        delegate = app.window.chat.messages.itemDelegate()
        out["timeline_items"] = len(app.presenter.timeline.items)
        out["view_rows"] = app.window.chat.model.rowCount()
        out["delegate_cached_documents"] = len(getattr(delegate, "_cache", ()))
    return out


def slope_kb(samples: dict[int, float], last: int) -> float:
    """Least-squares growth per run (KB) of ``samples`` (run -> MB) over runs >= ``last``."""
    points = [(x, y) for x, y in samples.items() if x >= last]
    if len(points) < 2:
        return 0.0
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return round(sxy / sxx * 1024, 1)


def _group(filename: str) -> str:
    return next((name for part, name in _GROUPS if part in filename), "other")


def _where(frames: tracemalloc.Traceback) -> str:
    """The allocating line and the project's nearest frame above it (``frames`` are oldest
    first)."""
    root = str(Path(__file__).resolve().parent.parent) + "/"
    lines = [f"{f.filename.replace(root, '')}:{f.lineno}" for f in reversed(frames)]
    own = [line for line in lines[1:] if not line.startswith("/")]
    return lines[0] + (f" <- {own[0]}" if own and own[0] != lines[0] else "")


def python_growth(
    before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, runs: int
) -> dict[str, Any]:
    """Python memory grown between two snapshots: by package, and the biggest tracebacks."""
    skip = [tracemalloc.Filter(False, tracemalloc.__file__)]
    before, after = before.filter_traces(skip), after.filter_traces(skip)
    packages: dict[str, float] = {}
    for stat in after.compare_to(before, "filename"):
        name = _group(stat.traceback[0].filename)
        packages[name] = packages.get(name, 0.0) + stat.size_diff / 1024
    top = sorted(after.compare_to(before, "traceback"), key=lambda s: -s.size_diff)[:12]
    total = sum(packages.values())
    return {
        "python_grown_kb_by_package": {k: round(v, 1) for k, v in sorted(packages.items())},
        "python_grown_per_run_kb": round(total / runs, 2),
        "python_top_growers": [
            {
                "where": _where(s.traceback),
                "kb": round(s.size_diff / 1024, 1),
                "blocks": s.count_diff,
                "bytes_per_run": round(s.size_diff / runs),
            }
            for s in top
        ],
    }


async def scenario(url: str, token: str, runs: int, mode: str) -> dict[str, Any]:
    """``runs`` runs through a connected window, measuring as it goes."""
    async with connected_app(url, token) as app:
        await settle(0.5)
        if mode == "traced":
            tracemalloc.start(TRACE_FRAMES)
        gc.collect()
        rss: dict[int, float] = {0: rss_mb()}
        seen: dict[int, dict[str, int]] = {0: counts(app)}
        mark: tracemalloc.Snapshot | None = None
        first = max(0, runs - SLOPE_OVER)
        if mode == "traced" and first == 0:
            mark = tracemalloc.take_snapshot()
        started = time.perf_counter()
        for index in range(1, runs + 1):
            await one_run(app, index)
            if mode == "cleared" and index % CLEAR_EVERY == 0:
                await drop_chat(app, then_open=f"bench-{index // CLEAR_EVERY}")
            if index % EVERY == 0 or index == runs:
                await settle(0.05)
                gc.collect()
                rss[index] = rss_mb()
                seen[index] = counts(app)
                print(f"{mode} run {index}: RSS {rss[index]:.1f} MB {seen[index]}", flush=True)
                if mode == "traced" and index == first:
                    mark = tracemalloc.take_snapshot()
        elapsed = time.perf_counter() - started
        out: dict[str, Any] = {
            "runs": runs,
            "seconds": round(elapsed, 1),
            "runs_per_second": round(runs / elapsed, 1),
            "rss_mb": {str(k): round(v, 2) for k, v in rss.items()},
            f"growth_per_run_kb_last_{min(runs, SLOPE_OVER)}": slope_kb(rss, first),
            "counts": {str(k): v for k, v in seen.items()},
            "max_live_run_objects": max(c["live_run_objects"] for c in seen.values()),
        }
        if mode == "cleared":  # right after each switch: what is left without the content
            switched = {k: v for k, v in rss.items() if k % CLEAR_EVERY == 0}
            out[f"growth_per_run_kb_after_switches_last_{min(runs, SLOPE_OVER)}"] = slope_kb(
                switched, first
            )
            return out
        if mode == "traced" and mark is not None:
            gc.collect()
            out.update(python_growth(mark, tracemalloc.take_snapshot(), runs - first))
            tracemalloc.stop()
            return out
        end = rss[runs]
        trimmed = trimmed_rss_mb()
        await drop_chat(app, then_open=None)
        gc.collect()
        dropped = trimmed_rss_mb()
        out["after_chat_dropped"] = counts(app)
        out["rss_trimmed_mb"] = round(trimmed, 2)
        out["rss_chat_dropped_trimmed_mb"] = round(dropped, 2)
        out["split_per_run_kb_since_run_0"] = {
            "total": round((end - rss[0]) * 1024 / runs, 1),
            "allocator": round((end - trimmed) * 1024 / runs, 1),
            "timeline_content": round((trimmed - dropped) * 1024 / runs, 1),
            "other": round((dropped - rss[0]) * 1024 / runs, 1),
        }
    return out


def split(plain: dict[str, Any], cleared: dict[str, Any]) -> dict[str, float]:
    """The growth per run since run 0 of ``plain``, by what explains it:

    * ``allocator_free``: freed memory glibc kept (handed back by ``malloc_trim``);
    * ``timeline_content``: what dropping the chat handed back (its view, rows, documents);
    * ``allocator_reused``: freed by dropping the chat but not handed back even by
      ``malloc_trim`` (pages shared with live blocks): the ``cleared`` run shows it is
      reused, since its RSS plateaus; it is the content's too;
    * ``other``: what ``cleared`` still grows per run with the chat dropped every 100 runs.
    """
    parts = plain["split_per_run_kb_since_run_0"]
    other = cleared[f"growth_per_run_kb_after_switches_last_{min(cleared['runs'], SLOPE_OVER)}"]
    return {
        "total": parts["total"],
        "allocator_free": parts["allocator"],
        "timeline_content": parts["timeline_content"],
        "allocator_reused": round(parts["other"] - other, 1),
        "other": other,
    }


@contextlib.contextmanager
def gateway_and_model() -> Iterator[tuple[str, str]]:
    """Our gateway (subprocess on a free loopback port) with the fake model as its default
    model, the model in a process of its own. Yields (url, token); both are stopped and their
    folder deleted on exit."""
    from tests.helpers.bundled_gateway import BundledGateway
    from tests.helpers.chat_trace import write_fake_providers

    root = Path(tempfile.mkdtemp(prefix="bench-ui-runs-"))
    model = subprocess.Popen(
        [sys.executable, "-m", "openclaw_desktop.sdk.testing.fake_model", "--port", "0"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        with reaper(model.pid, root):
            assert model.stdout is not None
            ready = model.stdout.readline().split()  # FAKE-LLM READY <port>
            write_fake_providers(root / "state", int(ready[-1]))
            gw = BundledGateway.start(root=root)
            assert gw.proc is not None
            try:
                with reaper(gw.proc.pid, root):
                    yield gw.url, gw.token
            finally:
                gw.cleanup()
    finally:
        model.terminate()
        model.wait(10)
        shutil.rmtree(root, ignore_errors=True)


def measure(runs: int, mode: str) -> dict[str, Any]:
    """One whole measurement (its own gateway, model and app home)."""
    with gateway_and_model() as (url, token), app_home():
        return run_qt(lambda: scenario(url, token, runs, mode))


def main() -> None:
    """Entry point: each measurement in a child process of its own."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--modes", default=",".join(MODES), help="plain,cleared,traced")
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin_none()  # PySide6 6.12.0 on CPython 3.11: see bench.ui_common.none_refcount
    if args.mode is not None and args.to is not None:
        args.to.write_text(json.dumps(measure(args.runs, args.mode)))
        return
    result: dict[str, Any] = {}
    for mode in args.modes.split(","):
        out = Path(f"/tmp/bench-ui-runs-{mode}-{time.time_ns()}.json")
        command = [sys.executable, "-m", "bench.ui_runs_memory", "--runs", str(args.runs)]
        subprocess.run([*command, "--mode", mode, "--to", str(out)], check=True)
        result[mode] = json.loads(out.read_text())
        out.unlink()
    if "plain" in result and "cleared" in result:
        result["split_per_run_kb"] = split(result["plain"], result["cleared"])
    write_result("ui_runs_memory", result)
    key = f"growth_per_run_kb_last_{min(args.runs, SLOPE_OVER)}"
    for mode, r in result.items():
        print(
            f"{mode}: {r[key]} KB/run over the last runs; max live Run objects "
            f"{r['max_live_run_objects']}; {r.get('split_per_run_kb_since_run_0', '')}"
        )
    if "traced" in result:
        print("Python grown per run (KB):", result["traced"].get("python_grown_per_run_kb"))


if __name__ == "__main__":
    main()
