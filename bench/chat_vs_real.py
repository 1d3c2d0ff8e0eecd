"""Chat benchmark: the bundled gateway beside the real OpenClaw gateway, same fake model.

Each gateway gets its own :class:`tests.helpers.fake_llm.FakeLLM` (1 ms between
chunks) and, on loopback, is measured for:

* ``chat.send`` to the first ``chat`` delta and to ``final`` (p50 over ``--runs`` runs after
  warm-up), with the fake's ``SLOW:1`` script: the same 20-chunk reply on both gateways
  whatever prompt decoration the gateway adds;
* fan-out: 20 operator clients connected, one sends; time until all 20 have seen the
  final, and whether every client got every delta (same delta seqs, text adding up);
* ``chat.history {limit: 1000}`` of a session holding ``--notes`` (10,000) injected
  assistant notes (``chat.inject``, admin scope; the real gateway's transcript can only be
  filled through its API), p50.

Run: ``.venv/bin/python -m bench.chat_vs_real [--runs 20] [--notes 10000] [--json]``.
Prints a Markdown table with ratios ours / real (times: below 1 = ours is faster; rates:
above 1 = ours is faster). No assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bench.common import pct
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import (
    ChatRecorder,
    chat_operator,
    concatenated_deltas,
    final_text,
    write_fake_providers,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, ensure_installed

PROMPT = "SLOW:1"
#: ``chat.history`` limits timed (1000 is the schema maximum).
HISTORY_LIMITS = (1000, 500)
RUN_TIMEOUT_S = 120.0
FANOUT_CLIENTS = 20
Target = Callable[[int], contextlib.AbstractAsyncContextManager[tuple[str, str]]]


@contextlib.asynccontextmanager
async def ours(llm_port: int) -> AsyncIterator[tuple[str, str]]:
    """Our gateway in a subprocess with the fake model as default; yields (url, token)."""
    root = Path(tempfile.mkdtemp(prefix="bench-chat-ours-"))
    write_fake_providers(root / "state", llm_port)
    gw = await asyncio.to_thread(BundledGateway.start, root=root)
    try:
        yield gw.url, gw.token
    finally:
        await asyncio.to_thread(gw.cleanup)
        await asyncio.to_thread(_rmtree, root)


def _rmtree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


@contextlib.asynccontextmanager
async def real(llm_port: int) -> AsyncIterator[tuple[str, str]]:
    """The real gateway with provider ``fake`` as default; yields (url, token)."""
    factory = GatewayFactory(ensure_installed())
    try:
        gw = await asyncio.to_thread(factory, fake_llm_port=llm_port)
        yield gw.url, gw.token
    finally:
        await asyncio.to_thread(factory.close)


async def one_run(
    conn: GatewayConnection, recorder: ChatRecorder, session: str
) -> tuple[float, float, str, float]:
    """One ``chat.send``: (s to first delta, s to final, run id, start perf_counter)."""
    key = str(uuid.uuid4())
    start = time.perf_counter()
    ack = await conn.request(
        "chat.send", {"sessionKey": session, "message": PROMPT, "idempotencyKey": key}, timeout_s=30
    )
    if ack.get("status") != "started":
        raise RuntimeError(f"chat.send ack {ack}")
    events = await recorder.wait_terminal(key, RUN_TIMEOUT_S)
    terminal = recorder.terminal(key)
    assert terminal is not None
    if terminal.state != "final":
        raise RuntimeError(f"run ended {terminal.state}: {terminal.payload}")
    deltas = [e.at for e in events if e.event == "chat" and e.state == "delta"]
    first = (deltas[0] if deltas else terminal.at) - start
    return first, terminal.at - start, key, start


async def latency(url: str, token: str, runs: int) -> dict[str, float]:
    """send -> first delta and send -> final, p50 (ms) after 2 warm-up runs."""
    recorder = ChatRecorder()
    firsts: list[float] = []
    finals: list[float] = []
    async with chat_operator(url, token) as conn:
        conn.on_event(recorder)
        for i in range(runs + 2):
            first, done, _key, _start = await one_run(conn, recorder, "bench-latency")
            if i >= 2:
                firsts.append(first)
                finals.append(done)
    return {"first_delta_p50": pct(firsts, 50), "final_p50": pct(finals, 50)}


async def fanout(url: str, token: str, rounds: int) -> dict[str, Any]:
    """20 watchers; one sends. Time until all have the final; did all get every delta?"""
    async with contextlib.AsyncExitStack() as stack:
        watchers: list[ChatRecorder] = []
        conns = await asyncio.gather(
            *(stack.enter_async_context(chat_operator(url, token)) for _ in range(FANOUT_CLIENTS))
        )
        for conn in conns:
            recorder = ChatRecorder()
            conn.on_event(recorder)
            watchers.append(recorder)
        sender_rec = ChatRecorder()
        sender = await stack.enter_async_context(chat_operator(url, token))
        sender.on_event(sender_rec)
        await one_run(sender, sender_rec, "bench-fanout")  # warm-up
        samples: list[float] = []
        complete = True
        deltas_per_client: list[int] = []
        for _ in range(rounds):
            _first, _done, key, start = await one_run(sender, sender_rec, "bench-fanout")
            await asyncio.gather(*(w.wait_terminal(key, RUN_TIMEOUT_S) for w in watchers))
            ends = [w.terminal(key) for w in watchers]
            samples.append(max(e.at for e in ends if e is not None) - start)
            reference = [e.payload["seq"] for e in sender_rec.run(key) if e.state == "delta"]
            for w in watchers:
                events = w.run(key)
                seqs = [e.payload["seq"] for e in events if e.state == "delta"]
                deltas_per_client.append(len(seqs))
                if seqs != reference or concatenated_deltas(events) != final_text(events):
                    complete = False
    return {
        "all_final_p50": pct(samples, 50),
        "every_delta": complete,
        "deltas_per_client": statistics.median(deltas_per_client),
    }


async def history(url: str, token: str, notes: int, reads: int) -> dict[str, Any]:
    """Inject ``notes`` notes (16 in flight), then time ``chat.history {limit: 1000}``."""
    session = "bench-latency"  # exists by now (the real gateway injects only into one)
    async with chat_operator(url, token) as conn:
        semaphore = asyncio.Semaphore(16)

        async def inject(i: int) -> None:
            async with semaphore:
                await conn.request(
                    "chat.inject", {"sessionKey": session, "message": f"note {i}"}, timeout_s=60
                )

        start = time.perf_counter()
        await asyncio.gather(*(inject(i) for i in range(notes)))
        fill_s = time.perf_counter() - start
        out: dict[str, Any] = {"inject_per_s": notes / fill_s}
        for limit in HISTORY_LIMITS:
            out.update(await _time_history(conn, session, limit, reads))
    return out


async def _time_history(
    conn: GatewayConnection, session: str, limit: int, reads: int
) -> dict[str, Any]:
    """p50 of ``chat.history {limit}`` (first read not counted), or the error it gave."""
    samples: list[float] = []
    count = 0
    for _ in range(reads + 1):
        start = time.perf_counter()
        try:
            result = await conn.request(
                "chat.history", {"sessionKey": session, "limit": limit}, timeout_s=120
            )
        except GatewayError as exc:
            return {f"history_{limit}_p50": None, f"history_{limit}_error": str(exc)}
        samples.append(time.perf_counter() - start)
        count = len(result.get("messages", []))
    return {f"history_{limit}_p50": pct(samples[1:], 50), f"history_{limit}_messages": count}


async def measure(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement against one gateway."""
    with FakeLLM(chunk_delay_s=0.001) as llm:
        async with target(llm.port) as (url, token):
            result: dict[str, Any] = {}
            result.update(await latency(url, token, args.runs))
            result.update(await fanout(url, token, args.fanout_rounds))
            result.update(await history(url, token, args.notes, args.reads))
    return result


def _cell(value: Any, unit: str) -> str:
    return f"{value:.1f} {unit}" if isinstance(value, int | float) else "failed"


def table(r: dict[str, Any], o: dict[str, Any]) -> str:
    """Markdown table, real beside ours, ratio ours / real."""
    lines = [
        "| measure | real gateway 2026.9.6 | bundled gateway | ours / real |",
        "|---|---|---|---|",
    ]
    rows = [
        ("chat.send -> first delta p50", "first_delta_p50", "ms"),
        ("chat.send -> final p50", "final_p50", "ms"),
        (f"send -> all {FANOUT_CLIENTS} clients have final p50", "all_final_p50", "ms"),
        *(
            (f"chat.history limit {n}, 10k-note session, p50", f"history_{n}_p50", "ms")
            for n in HISTORY_LIMITS
        ),
        ("chat.inject throughput (16 in flight)", "inject_per_s", "/s"),
    ]
    for label, key, unit in rows:
        a, b = r.get(key), o.get(key)
        ratio = f"{b / a:.2f}" if a and b else "-"
        lines.append(f"| {label} | {_cell(a, unit)} | {_cell(b, unit)} | {ratio} |")
    lines.append(f"| every client got every delta | {r['every_delta']} | {o['every_delta']} | |")
    lines.append(
        f"| chat deltas per run (median) | {r['deltas_per_client']:g} | "
        f"{o['deltas_per_client']:g} | |"
    )
    for n in HISTORY_LIMITS:
        lines.append(
            f"| messages returned by chat.history limit {n} | "
            f"{r.get(f'history_{n}_messages', '-')} | {o.get(f'history_{n}_messages', '-')} | |"
        )
    errors = [
        f"{side}: chat.history limit {n}: {res[f'history_{n}_error']}"
        for side, res in (("real", r), ("ours", o))
        for n in HISTORY_LIMITS
        if f"history_{n}_error" in res
    ]
    return "\n".join(lines + (["", *errors] if errors else []))


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """The real gateway, then ours."""
    return {"real": await measure(real, args), "ours": await measure(ours, args)}


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--fanout-rounds", type=int, default=5)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--reads", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print the raw numbers as JSON")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(result, indent=2))
    print(table(result["real"], result["ours"]))
    print("\nours / real: below 1 = ours faster for times; above 1 = ours faster for rates (/s)")


if __name__ == "__main__":
    main()
