"""Opening a long session in the chat window: merge ``chat.history``, first screen painted,
scroll to the bottom, and the memory it takes.

The real window (:class:`ui.app.DesktopApp`) connected to our bundled gateway (subprocess on
loopback, fake model). For each size (200: what the app asks ``chat.history`` for; 1,000:
the gateway's maximum per call; 5,000) a new session is opened through the app
(``open_session``: presenter, view, ``chat.history`` of the empty session), then the generated
history (user turns, Markdown replies with a code block, a tool call every third turn; see
:func:`bench.ui_common.history_messages`) is handed to the presenter the way its ``reload``
does (``timeline.merge_history`` + ``changed``), and timed:

* merge: ``ChatTimeline.merge_history``;
* view update: the ``changed`` handler (model rows inserted, ``doItemsLayout``, scroll);
* first paint: until the message list's viewport has painted (from the merge's start);
* scroll to top, then ``scrollToBottom()`` until painted again;
* RSS growth of the process; then a second, untimed pass in a fresh session with
  ``tracemalloc`` (Python allocations only: Qt's documents are C++) and counting the
  documents laid out.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.ui_long_session
[--sizes 200,1000,5000]``. Writes ``bench/results/ui_long_session.json``. No assertions.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from typing import Any

from bench.ui_common import (
    PaintWatch,
    app_home,
    connected_app,
    count_delegate_work,
    gateway_with_fake_model,
    history_messages,
    pin_none,
    rss_mb,
    run_qt,
    settle,
    write_result,
)


async def open_timed(app: Any, key: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Open session ``key`` and merge ``messages`` into it, timed."""
    presenter = await app.open_session(key)
    view = app.window.chat
    await settle(0.3)
    gc.collect()
    rss_before = rss_mb()
    watch = PaintWatch(view.messages.viewport())
    start = time.perf_counter()
    presenter.timeline.merge_history(messages)
    merged = time.perf_counter()
    presenter.changed.emit()
    updated = time.perf_counter()
    painted = await watch.next_paint(updated)
    rows = view.model.rowCount()
    await settle(0.5)
    bar = view.messages.verticalScrollBar()
    view.messages.scrollToTop()
    await watch.next_paint(time.perf_counter())
    await settle(0.2)
    scroll_start = time.perf_counter()
    view.messages.scrollToBottom()
    scrolled = time.perf_counter()
    scroll_painted = await watch.next_paint(scrolled)
    at_bottom = bar.value() == bar.maximum()
    await settle(0.3)
    gc.collect()
    return {
        "messages": len(messages),
        "rows": rows,
        "merge_ms": (merged - start) * 1000,
        "view_update_ms": (updated - merged) * 1000,
        "first_paint_ms": (painted - start) * 1000,
        "scroll_to_bottom_ms": (scroll_painted - scroll_start) * 1000,
        "scrolled_to_bottom": at_bottom,
        "rss_growth_mb": rss_mb() - rss_before,
    }


async def open_traced(app: Any, key: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The same in a fresh session, untimed: Python allocation peak, documents laid out."""
    presenter = await app.open_session(key)
    view = app.window.chat
    watch = PaintWatch(view.messages.viewport())
    await settle(0.3)
    with count_delegate_work() as counts:
        tracemalloc.start()
        start = time.perf_counter()
        presenter.timeline.merge_history(messages)
        presenter.changed.emit()
        await watch.next_paint(start)
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {
        "tracemalloc_peak_mb": peak / 1e6,
        "tracemalloc_kept_mb": current / 1e6,
        "documents_laid_out": counts["render_document"],
        "row_lookups": counts["row_lookups"],
    }


async def scenario(url: str, token: str, sizes: list[int]) -> dict[str, Any]:
    """Every size on one connected window."""
    out: dict[str, Any] = {}
    async with connected_app(url, token) as app:
        for size in sizes:
            messages = history_messages(size)
            result = await open_timed(app, f"bench-open-{size}", messages)
            result.update(await open_traced(app, f"bench-traced-{size}", messages))
            out[str(size)] = result
            print(f"{size}: {result}", flush=True)
    return out


def table(result: dict[str, Any]) -> str:
    """Markdown table, one row per size."""
    lines = [
        "| messages | rows | merge | view update | first paint | scroll to bottom | "
        "docs laid out | RSS growth | tracemalloc peak |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["sizes"].values():
        lines.append(
            f"| {r['messages']:,} | {r['rows']:,} | {r['merge_ms']:.0f} ms | "
            f"{r['view_update_ms']:.0f} ms | {r['first_paint_ms']:.0f} ms | "
            f"{r['scroll_to_bottom_ms']:.0f} ms | {r['documents_laid_out']:,} | "
            f"{r['rss_growth_mb']:.0f} MB | {r['tracemalloc_peak_mb']:.1f} MB |"
        )
    return "\n".join(lines)


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="200,1000,5000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    pin_none()  # PySide6 6.12.0 on CPython 3.11: see bench.ui_common.none_refcount
    with gateway_with_fake_model() as (url, token), app_home():
        result = {"sizes": run_qt(lambda: scenario(url, token, sizes))}
    write_result("ui_long_session", result)
    print(table(result))


if __name__ == "__main__":
    main()
