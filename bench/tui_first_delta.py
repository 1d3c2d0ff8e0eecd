"""TUI benchmark: the real ``openclaw tui`` through the bundled gateway beside the real one.

The real TUI runs in a tmux pane (:mod:`tests.helpers.tmux_tui`) in remote mode against each
gateway, each with its own :class:`tests.helpers.fake_llm.FakeLLM` (same chunking). For
``--runs`` runs per gateway (a fresh TUI each time; the gateway stays up) it measures, from
the TUI's start:

* ``connect_s``: until the pane says ``gateway connected`` (handshake, ``sessions.subscribe``,
  agents, history: everything the TUI loads before it lets you type);
* ``first_delta_s``: from typing ``SLOW:50 ...`` + Enter until the pane shows the first word
  of the reply (``slow0``): the gateway's run start and first delta, seen by the user;
* ``connect_to_first_delta_s``: the sum, the time a user waits from launching the TUI to the
  first words (typing itself excluded).

The pane is polled every 50 ms, so figures carry that granularity. ``connect_s`` is mostly
the TUI's own start (Node.js loading the CLI), which is CPU-bound: on a loaded machine it
swings by seconds between runs, so the result records the load average before and after.
Prints p50 per gateway and the ratio ours / real (below 1: ours is faster); writes
``bench/results/tui_first_delta.json``.
No assertions. Run: ``.venv/bin/python -m bench.tui_first_delta [--runs 5] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall, ensure_installed
from tests.helpers.tmux_tui import TuiPane

#: Each run types this with a fresh tag (the TUI shows the session's earlier runs too).
MESSAGE = "SLOW:50 bench"
TIMEOUT_S = 120.0
METRICS = ("connect_s", "first_delta_s", "connect_to_first_delta_s")


def one_run(install: OpenClawInstall, url: str, token: str) -> dict[str, float]:
    """One fresh TUI: connect, type, first reply word; the timings."""
    message = f"{MESSAGE} {uuid.uuid4().hex[:8]}"
    with TuiPane.start(install, url, token) as tui:
        tui.wait_for("gateway connected", TIMEOUT_S)
        connected = time.monotonic()
        tui.type_line(message)
        typed = time.monotonic()
        tui.wait_for("slow0", TIMEOUT_S, after=message)
        first = time.monotonic()
        tui.wait_for("slow19", TIMEOUT_S, after=message)  # let the run end before closing
    connect = connected - tui.started_at
    delta = first - typed
    return {
        "connect_s": connect,
        "first_delta_s": delta,
        "connect_to_first_delta_s": connect + delta,
    }


def series(install: OpenClawInstall, url: str, token: str, runs: int) -> dict[str, Any]:
    """``runs`` timed runs after one warm-up; p50 of each metric and the samples."""
    one_run(install, url, token)  # warm-up: the first run of a gateway loads its model path
    samples = [one_run(install, url, token) for _ in range(runs)]
    return {
        **{m: statistics.median(s[m] for s in samples) for m in METRICS},
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the JSON result")
    args = parser.parse_args()
    install = ensure_installed()
    result: dict[str, Any] = {"runs": args.runs, "message": MESSAGE}
    result["load_before"] = list(os.getloadavg())
    with FakeLLM(chunk_delay_s=0.03) as llm:
        root = Path(tempfile.mkdtemp(prefix="bench-tui-ours-"))
        write_fake_providers(root / "state", llm.port)
        with BundledGateway.start(root=root) as gw:
            result["ours"] = series(install, gw.url, gw.token, args.runs)
    factory = GatewayFactory(install)
    try:
        with FakeLLM(chunk_delay_s=0.03) as llm:
            real = factory(fake_llm_port=llm.port)
            result["real"] = series(install, real.url, real.token, args.runs)
    finally:
        factory.close()
    result["load_after"] = list(os.getloadavg())
    result["ratio_ours_over_real"] = {
        m: result["ours"][m] / result["real"][m] if result["real"][m] else None for m in METRICS
    }
    out = Path("bench/results")
    out.mkdir(parents=True, exist_ok=True)
    (out / "tui_first_delta.json").write_text(json.dumps(result, indent=2) + "\n")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print("| metric (p50) | ours | real | ours / real |")
    print("|---|---|---|---|")
    for m in METRICS:
        ratio = result["ratio_ours_over_real"][m]
        print(
            f"| {m} | {result['ours'][m]:.2f} s | {result['real'][m]:.2f} s | {ratio:.2f} |"
            if ratio is not None
            else f"| {m} | {result['ours'][m]:.2f} s | {result['real'][m]:.2f} s | - |"
        )


if __name__ == "__main__":
    main()
