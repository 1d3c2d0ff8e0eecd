"""Memory per chat run of a long-running window, through the window's real send path.

The real window (:class:`ui.app.DesktopApp`) connected to our bundled gateway (subprocess on
loopback) whose model is the scripted fake one (a process of its own: it records every
request, each with the whole conversation), chat of ``main`` open. ``--runs`` (1,000) short runs,
one after the other, each sent as a person sends it: ``ChatPresenter.send`` (the message is
shown, then ``sessions.send`` → ``chat.send`` over the WebSocket), the fake model streams a
short reply (``FAKE-LLM reply #n: ...``, about 45 characters), the gateway's events come
back through the SDK to the timeline and the view; the next run starts once the reply is
shown done and the window is idle.

Reported: RSS after 1, 100, 250, 500, 1,000 runs and the growth per run from run 100 to the
last (the first 100 warm caches up), what the SDK still holds at the end (runs being
followed, finished runs kept findable), the timeline's items and the view's rows (one user
and one assistant row per run: what the window shows, kept on purpose), RSS after
``malloc_trim``, and again once the chat delegate's cache of laid-out documents (one per row
and width, up to 2,000) is emptied: the growth left per run without the view's documents;
then the same in a child process with ``tracemalloc`` on: Python memory
grown from run 100 to the last, by package (``openclaw_desktop/sdk``, ``openclaw_desktop/chat``,
``ui``, the rest), so the SDK's share is visible.

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

CHECKPOINTS = (1, 100, 250, 500, 1000)
WARM = 100
RUN_TIMEOUT_S = 60.0
_GROUPS = (
    ("openclaw_desktop/sdk", "sdk"),
    ("openclaw_desktop/chat", "chat"),
    ("/ui/", "ui"),
    ("PySide6", "qt bindings"),
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


def _group(filename: str) -> str:
    return next((name for part, name in _GROUPS if part in filename), "other")


def by_package(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> dict[str, float]:
    """Python memory grown between two snapshots, in KB, by package."""
    out: dict[str, float] = {}
    for stat in after.compare_to(before, "filename"):
        name = _group(stat.traceback[0].filename)
        out[name] = out.get(name, 0.0) + stat.size_diff / 1024
    return {k: round(v, 1) for k, v in sorted(out.items())}


async def scenario(url: str, token: str, runs: int, traced: bool) -> dict[str, Any]:
    """``runs`` runs through a connected window, measuring as it goes."""
    async with connected_app(url, token) as app:
        await settle(0.5)
        if traced:
            tracemalloc.start()
        gc.collect()
        rss: dict[str, float] = {"0": rss_mb()}
        warm: tracemalloc.Snapshot | None = None
        started = time.perf_counter()
        for index in range(1, runs + 1):
            await one_run(app, index)
            if index in CHECKPOINTS or index == runs:
                await settle(0.05)
                gc.collect()
                rss[str(index)] = rss_mb()
                print(f"run {index}: RSS {rss[str(index)]:.1f} MB", flush=True)
                if traced and index == WARM:
                    warm = tracemalloc.take_snapshot()
        elapsed = time.perf_counter() - started
        client = app.runtime.client
        timeline = app.presenter.timeline
        first = WARM if runs > WARM else 0
        out: dict[str, Any] = {
            "runs": runs,
            "seconds": round(elapsed, 1),
            "runs_per_second": round(runs / elapsed, 1),
            "rss_mb": rss,
            "growth_per_run_kb": round(
                (rss[str(runs)] - rss[str(first)]) * 1024 / (runs - first), 1
            ),
            "sdk_runs_followed": len(client._runs),
            "sdk_finished_kept": len(client._finished),
            "normalizer_runs": len(client._normalizer._items),
            "timeline_items": len(timeline.items),
            "view_rows": app.window.chat.model.rowCount(),
            "rss_trimmed_mb": trimmed_rss_mb(),
        }
        delegate = app.window.chat.messages.itemDelegate()
        cache = getattr(delegate, "_cache", None)
        if isinstance(cache, dict):  # the view's share: one laid-out document per row
            out["delegate_cached_documents"] = len(cache)
            cache.clear()
            await settle(0.2)
            gc.collect()
            out["rss_trimmed_cache_emptied_mb"] = trimmed_rss_mb()
            kept = out["rss_trimmed_cache_emptied_mb"] - rss["0"]
            out["growth_per_run_without_documents_kb"] = round(kept * 1024 / runs, 1)
        if traced and warm is not None:
            gc.collect()
            grown = by_package(warm, tracemalloc.take_snapshot())
            out["python_grown_kb_by_package"] = grown
            out["python_grown_per_run_kb"] = round(sum(grown.values()) / (runs - WARM), 2)
            tracemalloc.stop()
    return out


@contextlib.contextmanager
def gateway_and_model() -> Iterator[tuple[str, str]]:
    """Our gateway (subprocess on a free loopback port) with the fake model as its default
    model, the model in a process of its own: it records every request it gets (each with
    the whole conversation), which must not count as the window's memory. Yields (url,
    token); both are stopped and their folder deleted on exit."""
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


def measure(runs: int, traced: bool) -> dict[str, Any]:
    """One whole measurement (its own gateway, model and app home)."""
    with gateway_and_model() as (url, token), app_home():
        return run_qt(lambda: scenario(url, token, runs, traced))


def main() -> None:
    """Entry point: RSS here, tracemalloc in a child process."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run")
    parser.add_argument("--traced-to", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin_none()  # PySide6 6.12.0 on CPython 3.11: see bench.ui_common.none_refcount
    if args.traced_to is not None:
        args.traced_to.write_text(json.dumps(measure(args.runs, traced=True)))
        return
    result: dict[str, Any] = {"rss": measure(args.runs, traced=False)}
    if not args.no_trace:
        traced_file = Path(f"/tmp/bench-ui-runs-traced-{time.time_ns()}.json")
        command = [sys.executable, "-m", "bench.ui_runs_memory", "--runs", str(args.runs)]
        subprocess.run([*command, "--traced-to", str(traced_file)], check=True)
        result["traced"] = json.loads(traced_file.read_text())
        traced_file.unlink()
    write_result("ui_runs_memory", result)
    r = result["rss"]
    print(
        "| runs | RSS start | RSS end | growth / run | SDK runs held | rows | cached documents "
        "| RSS, documents dropped | growth / run without them |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print(
        f"| {r['runs']} | {r['rss_mb']['0']:.0f} MB | {r['rss_mb'][str(r['runs'])]:.0f} MB | "
        f"{r['growth_per_run_kb']:.0f} KB | {r['sdk_runs_followed']} + "
        f"{r['sdk_finished_kept']} kept | {r['view_rows']} | "
        f"{r.get('delegate_cached_documents')} | {r.get('rss_trimmed_cache_emptied_mb', 0):.0f} MB "
        f"| {r.get('growth_per_run_without_documents_kb')} KB |"
    )
    if "traced" in result:
        print(
            "Python memory grown per package (KB):",
            result["traced"].get("python_grown_kb_by_package"),
        )


if __name__ == "__main__":
    main()
