"""Rendering time of chat rows: ordinary replies and hostile Markdown, bounded vs Qt as is.

For each case, the time to build and lay out one row's document at 400 px:

* **ours**: :func:`ui.widgets.chat_delegate.render_document` (Markdown without HTML, input
  bounded by :mod:`ui.widgets.markdown`, code highlighted): the median of ``--repeat`` runs;
* **Qt as is**: what the window did before, ``QTextDocument.setMarkdown`` (GitHub dialect,
  HTML on) and a layout at the same width, in a child process stopped after
  ``--raw-timeout`` seconds (some cases take minutes: word-wrapping a 1 MB run without spaces
  is quadratic).

Also the document each builds: characters, paragraphs and its width (wider than 400 px
means the row overflows its bubble).

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.ui_markdown [--raw-timeout 20]``.
Writes ``bench/results/ui_markdown.json``. No assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

from bench.ui_common import qt_app, write_result

WIDTH = 400

ORDINARY = (
    "# Lobster facts\n\nHere is a **long** answer with `inline code`, *emphasis* and a "
    "[link](https://example.org).\n\n1. Ten legs.\n2. Two claws:\n   - a crusher\n"
    "   - a pincer\n\n> They can live over 100 years.\n\n```python\ndef claw(size: float) -> "
    'float:\n    """Force in newtons."""\n    return 0.42 * size ** 2  # made up\n```\n\n'
    "| species | max weight | region |\n|---|---:|:---:|\n| American | 20 kg | North Atlantic |\n"
    "| European | 6 kg | Eastern Atlantic |\n"
)

CASES: dict[str, str] = {
    "ordinary reply (600 chars)": ORDINARY,
    "ordinary reply x20 (12 KB)": "\n\n".join([ORDINARY] * 20),
    "10,000 nested lists": "- " * 10_000 + "x\n",
    "10,000 nested quotes": ">" * 10_000 + " x\n",
    "table 60 x 3,000": "|"
    + "h|" * 60
    + "\n|"
    + "-|" * 60
    + "\n"
    + ("|" + "c|" * 60 + "\n") * 3_000,
    "1 MB line, no spaces": "x" * 1_000_000,
    "1 MB line of words": "word " * 200_000,
    "1 MB code line": "```\n" + "y" * 1_000_000 + "\n```\n",
    "emphasis bomb (100 KB)": "*a" * 50_000,
    "10,000 list items": "- a\n" * 10_000,
    "25,000 short lines": "a\n" * 25_000,
}


def _describe(doc: Any) -> dict[str, Any]:
    return {
        "chars": doc.characterCount(),
        "paragraphs": doc.blockCount(),
        "width_px": round(doc.size().width()),
    }


def ours(text: str, repeat: int) -> dict[str, Any]:
    """Our renderer: median seconds and the document."""
    from PySide6.QtGui import QPalette

    from openclaw_desktop.chat import ChatItem
    from ui.widgets.chat_delegate import render_document

    times = []
    doc = None
    for _ in range(repeat):
        began = time.perf_counter()
        doc = render_document(ChatItem("b", "assistant", text), WIDTH, QPalette())
        doc.size()
        times.append(time.perf_counter() - began)
    assert doc is not None
    return {"seconds": statistics.median(times), **_describe(doc)}


def raw(name: str) -> dict[str, Any]:
    """Qt as is (run in the child process)."""
    from PySide6.QtGui import QTextDocument

    warm = QTextDocument()  # fonts loaded before the clock starts, as in ours
    warm.setMarkdown(ORDINARY)
    warm.setTextWidth(WIDTH)
    warm.size()
    doc = QTextDocument()
    began = time.perf_counter()
    doc.setMarkdown(CASES[name], QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
    doc.setTextWidth(WIDTH)
    doc.size()
    return {"seconds": time.perf_counter() - began, **_describe(doc)}


def raw_in_child(name: str, timeout: float) -> dict[str, Any]:
    """:func:`raw` in a child process, bounded."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench.ui_markdown", "--raw", name],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return {"seconds": None, "timed_out_after_s": timeout}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def table(result: dict[str, Any]) -> str:
    """The Markdown table of a result."""
    lines = [
        "| case | ours (ms) | Qt as is (ms) | ratio | ours: chars / width px | Qt: width px |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in result["cases"].items():
        mine, theirs = row["ours"], row["qt_as_is"]
        if theirs["seconds"] is None:
            raw_ms, ratio, raw_width = f"> {theirs['timed_out_after_s'] * 1000:.0f}", "—", "—"
        else:
            raw_ms = f"{theirs['seconds'] * 1000:.1f}"
            ratio = f"{theirs['seconds'] / max(mine['seconds'], 1e-9):.1f}x"
            raw_width = str(theirs["width_px"])
        lines.append(
            f"| {name} | {mine['seconds'] * 1000:.1f} | {raw_ms} | {ratio} | "
            f"{mine['chars']:,} / {mine['width_px']} | {raw_width} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of ours per case")
    parser.add_argument("--raw-timeout", type=float, default=20.0, help="seconds per Qt case")
    parser.add_argument("--raw", help=argparse.SUPPRESS)
    args = parser.parse_args()
    qt_app()
    if args.raw:
        print(json.dumps(raw(args.raw)))
        return
    cases = {
        name: {"ours": ours(text, args.repeat), "qt_as_is": raw_in_child(name, args.raw_timeout)}
        for name, text in CASES.items()
    }
    result = {"width_px": WIDTH, "cases": cases}
    write_result("ui_markdown", result)
    print(table(result))
    print(f"\nrow width {WIDTH} px; wider documents overflow their bubble")


if __name__ == "__main__":
    main()
