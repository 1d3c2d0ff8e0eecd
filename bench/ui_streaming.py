"""Streaming responsiveness of the chat window: event-loop stalls while a reply streams.

The real window (:class:`ui.app.DesktopApp` -> ``ChatPresenter`` -> ``ChatView``) connected as
operator to our bundled gateway (a subprocess on loopback) whose default model is the fake
one. A 5 ms Qt timer on the qasync loop measures stalls (actual interval - 5 ms) while:

0. **idle**: nothing streams (the machine's own noise floor);
1. **real run**: ``chat.send`` of a long prompt; the fake model echoes it in 8-character
   chunks 5 ms apart (about 200 chunks/s). The gateway forwards every chunk as an ``agent``
   ``assistant`` event but coalesces ``chat`` deltas (at most one per 70 ms, like the real
   gateway), so the window gets about 14 deltas/s here: reported as measured;
2. **200 deltas/s** through the SDK's event path: ``chat`` ``delta`` frames (real gateway
   shape, 8 characters each, cumulative message) handed to the operator connection's event
   listeners every 5 ms, as its socket reader does: normalizer -> ``client.events()`` ->
   presenter -> model -> view. Done in a short session, after merging the 200 messages the
   app loads (``chat.history`` limit 200), and after merging 5,000 messages.

Then a short counted pass per case: row look-ups of the delegate (one per ``sizeHint`` or
``paint`` of a row) and documents laid out, per delta (counted by wrapping them in this
process; not timed).

The process gives ``None`` extra references first (see :func:`bench.ui_common.pin_none`):
PySide6 6.12.0 on CPython 3.11 loses one per ``void`` Qt call and would abort mid-run;
``none_refs_lost_*`` in the JSON says how fast. ``--no-pin`` runs without it.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.ui_streaming [--seconds 5]``.
Writes ``bench/results/ui_streaming.json``. No assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

from bench.ui_common import (
    StallProbe,
    app_home,
    chat_delta,
    chat_final,
    connected_app,
    count_delegate_work,
    gateway_with_fake_model,
    history_messages,
    inject,
    lifecycle,
    none_refcount,
    pin_none,
    reply_text,
    run_qt,
    settle,
    stall_summary,
    write_result,
)

RATE = 200
TARGET_P99_MS = 16.0
CHUNK = "tokens! "  # 8 characters, like the fake model's chunks
DRAIN_TIMEOUT_S = 120.0


async def idle(seconds: float) -> dict[str, Any]:
    """The probe with nothing streaming: this machine's own noise floor."""
    probe = StallProbe()
    probe.start()
    await asyncio.sleep(seconds)
    return {"stall_ms": stall_summary(probe.stop())}


async def real_run(app: Any, seconds: float) -> dict[str, Any]:
    """A real ``chat.send`` whose reply streams at about 200 model chunks/s."""
    presenter = app.presenter
    client = app.runtime.client
    chunks = int(seconds * RATE)
    prompt = reply_text(0, 8 * chunks)  # echoed back by the fake model
    counts = {"agent_assistant": 0, "assistant.delta": 0}

    def count(received: Any) -> None:
        payload = received.payload if isinstance(received.payload, dict) else {}
        if received.event == "agent" and payload.get("stream") == "assistant":
            counts["agent_assistant"] += 1

    unsubscribe = client.connection.on_event(count)
    changed = 0

    def on_changed() -> None:
        nonlocal changed
        changed += 1

    presenter.changed.connect(on_changed)
    probe = StallProbe()
    nones = none_refcount()
    probe.start()
    start = time.perf_counter()
    run_id = await presenter.send(prompt)
    async with asyncio.timeout(DRAIN_TIMEOUT_S):
        while True:
            item = presenter.timeline.get(f"{run_id}:assistant")
            if item is not None and item.status == "done":
                break
            await asyncio.sleep(0.01)
    elapsed = time.perf_counter() - start
    stalls = probe.stop()
    presenter.changed.disconnect(on_changed)
    unsubscribe()
    counts["assistant.delta"] = changed
    return {
        "stall_ms": stall_summary(stalls),
        "seconds": elapsed,
        "model_chunks_per_s": counts["agent_assistant"] / elapsed,
        "window_updates_per_s": changed / elapsed,
        "rows": len(presenter.timeline.items),
        "none_refs_lost_per_s": (nones - none_refcount()) / elapsed,
    }


async def inject_stream(app: Any, count: int, rate: float) -> tuple[float, float, str]:
    """Start a run and hand ``count`` chat deltas to the connection at ``rate``/s (catching up
    when the loop was late), then its final. Returns (injection s, until applied s, run id)."""
    client = app.runtime.client
    presenter = app.presenter
    run_id = f"bench-{uuid.uuid4()}"
    seq = 1
    inject(client, *lifecycle(run_id, seq, "start"))
    text = ""
    start = time.perf_counter()
    for i in range(count):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        seq += 1
        text += CHUNK
        inject(client, *chat_delta(run_id, seq, CHUNK, text))
    injected = time.perf_counter() - start
    inject(client, *chat_final(run_id, seq + 1, text))
    async with asyncio.timeout(DRAIN_TIMEOUT_S):
        while True:
            item = presenter.timeline.get(f"{run_id}:assistant")
            if item is not None and item.status == "done":
                break
            await asyncio.sleep(0.005)
    return injected, time.perf_counter() - start, run_id


async def injected_case(app: Any, deltas: int, history: int | None) -> dict[str, Any]:
    """Optionally merge ``history`` messages, then stream ``deltas`` at 200/s, probed."""
    presenter = app.presenter
    if history is not None:
        presenter.timeline.merge_history(history_messages(history))
        presenter.changed.emit()
        await settle(0.5)
    rows_before = len(presenter.timeline.items)
    applied = 0

    def on_changed() -> None:
        nonlocal applied
        applied += 1

    presenter.changed.connect(on_changed)
    probe = StallProbe()
    nones = none_refcount()
    probe.start()
    injected, done, _run = await inject_stream(app, deltas, RATE)
    lost = nones - none_refcount()
    stalls = probe.stop()
    presenter.changed.disconnect(on_changed)
    await settle(0.2)
    counted = min(20, deltas)
    with count_delegate_work() as counts:
        await inject_stream(app, counted, RATE)
        await settle(0.2)
    return {
        "rows": rows_before,
        "deltas": deltas,
        "stall_ms": stall_summary(stalls),
        "injected_per_s": deltas / injected,
        "applied_per_s": applied / done,
        "stream_to_last_applied_s": done,
        "loop_busy_ms_per_delta": sum(stalls) * 1000 / deltas,
        "per_delta_row_lookups": counts["row_lookups"] / counted,
        "per_delta_documents_laid_out": counts["render_document"] / counted,
        "none_refs_lost_per_delta": lost / deltas,
    }


async def scenario(url: str, token: str, args: argparse.Namespace) -> dict[str, Any]:
    """All cases on one connected window."""
    async with connected_app(url, token) as app:
        result: dict[str, Any] = {"none_refcount_connected": none_refcount()}
        result["idle"] = await idle(args.seconds)
        result["real_run"] = await real_run(app, args.seconds)
        print("real run:", result["real_run"], flush=True)
        deltas = int(args.seconds * RATE)
        cases = (
            ("short_session", deltas, None),
            ("session_200", deltas, 200),
            ("session_5000", args.long_deltas, 5000),
        )
        for name, count, history in cases:
            result[name] = await injected_case(app, count, history)
            print(f"{name}:", result[name], flush=True)
    return result


def table(r: dict[str, Any]) -> str:
    """Markdown table of the cases."""
    lines = [
        "| case | rows | deltas/s applied | stall p50 | stall p99 | stall max | "
        "loop busy / delta | row look-ups / delta | docs laid out / delta |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    s = r["idle"]["stall_ms"]
    lines.append(
        f"| idle (nothing streaming) | | | {s['p50']:.1f} ms | {s['p99']:.1f} ms | "
        f"{s['max']:.1f} ms | | | |"
    )
    real = r["real_run"]
    s = real["stall_ms"]
    lines.append(
        f"| real run, fake model {real['model_chunks_per_s']:.0f} chunks/s | {real['rows']} | "
        f"{real['window_updates_per_s']:.0f} | {s['p50']:.1f} ms | {s['p99']:.1f} ms | "
        f"{s['max']:.1f} ms | | | |"
    )
    for key, label in (
        ("short_session", "200 deltas/s, short session"),
        ("session_200", "200 deltas/s, 200-message session"),
        ("session_5000", "200 deltas/s, 5,000-message session"),
    ):
        c = r[key]
        s = c["stall_ms"]
        lines.append(
            f"| {label} | {c['rows']} | {c['applied_per_s']:.0f} | {s['p50']:.1f} ms | "
            f"{s['p99']:.1f} ms | {s['max']:.1f} ms | {c['loop_busy_ms_per_delta']:.1f} ms | "
            f"{c['per_delta_row_lookups']:.0f} | "
            f"{c['per_delta_documents_laid_out']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="stream length per case")
    parser.add_argument(
        "--long-deltas", type=int, default=200, help="deltas streamed in the 5,000-row case"
    )
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="do not work around the PySide6 6.12.0 None refcount bug (the run may abort)",
    )
    args = parser.parse_args()
    if not args.no_pin:
        pin_none()
    with gateway_with_fake_model(chunk_delay_s=1 / RATE) as (url, token), app_home():
        result = run_qt(lambda: scenario(url, token, args))
    result["target_p99_ms"] = TARGET_P99_MS
    write_result("ui_streaming", result)
    print(table(result))
    print(f"\nstall = 5 ms Qt timer interval - 5 ms; target p99 < {TARGET_P99_MS:g} ms")


if __name__ == "__main__":
    main()
