"""The transcript store survives a writer killed with SIGKILL mid-append."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.chat import TranscriptStore

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX")

REPO = Path(__file__).resolve().parents[4]


def user(text: str) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": text}


def lines_of(path: Path) -> list[dict[str, Any]]:
    """Every JSON line of a transcript file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


WRITER = """
import sys
from pathlib import Path
from gateway.chat import TranscriptStore

t = TranscriptStore(Path(sys.argv[1])).open("main")
i = 0
while True:
    stored = t.append({"role": "user", "content": "x" * (i % 7 * 40000), "n": i})
    print(stored["id"], flush=True)
    i += 1
"""


def test_sigkill_while_appending_loses_nothing_committed(tmp_path: Path) -> None:
    """A writer killed mid-loop keeps every acknowledged line; the store takes more appends."""
    folder = tmp_path / "transcripts"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )
    rounds = 40
    acked: list[str] = []
    out = ""
    try:
        assert proc.stdout is not None
        while len(acked) < rounds:
            line = proc.stdout.readline()
            if not line:
                break
            acked.append(line.strip())
    finally:
        proc.kill()
        out, err = proc.communicate(timeout=10)
    assert len(acked) == rounds, err
    assert proc.returncode == -9
    acked += out.split()  # printed before the kill landed: acknowledged too

    s = TranscriptStore(folder)
    t = s.open("main")
    loaded = [m["id"] for m in t.visible_path()]
    # Everything acknowledged is there; at most the one append in flight was also committed.
    assert loaded[: len(acked)] == acked
    assert len(loaded) - len(acked) <= 1
    new = t.append(user("after the crash"))
    s.close()
    records = lines_of(t.path)[1:]
    assert [r["id"] for r in records] == [*loaded, new["id"]]
    assert records[-1]["parentId"] == loaded[-1]
