"""Crash safety: a gateway process killed with SIGKILL mid-write leaves a clean database."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import IO

import pytest

from gateway.state import DB_FILENAME, GatewayState

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

REPO = Path(__file__).resolve().parents[4]

# Each iteration writes one atomic group (device + token + meta + pending request) and then a
# standalone touch, and only then reports the iteration number on stdout.
WRITER = """
import sys
from pathlib import Path
from gateway.state import GatewayState

KEY = "k" * 43
state = GatewayState.in_state_dir(Path(sys.argv[1]))
i = int(sys.argv[2])
hold = sys.argv[3] == "hold"
while True:
    dev = f"dev-{i:06d}"
    with state.transaction():
        state.devices.approve(dev, KEY, role="node", scopes=[], approved_via="silent", now_ms=i)
        state.tokens.issue(dev, "node", [], i)
        state.meta.set(dev, str(i))
        state.pairing.request(f"req-{i:06d}", KEY, role="node", scopes=[], now_ms=i)
        if hold:
            print("inside", flush=True)
            sys.stdin.read()
    state.devices.touch(dev, i + 1, "127.0.0.1")
    print(i, flush=True)
    i += 1
"""


def _spawn(state_dir: Path, start: int, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(state_dir), str(start), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _read_line(stream: IO[str] | None, proc: subprocess.Popen[str]) -> str:
    assert stream is not None
    line = stream.readline()
    if not line:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"writer exited early: {err}")
    return line.strip()


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.kill()  # SIGKILL: no atexit, no finally, no sqlite3 close
    proc.communicate(timeout=10)  # reap it and close the pipes
    assert proc.returncode == -9


def _check_clean(state_dir: Path) -> list[int]:
    """integrity_check is ok, and every group is whole; returns the committed iterations."""
    with closing(sqlite3.connect(state_dir / DB_FILENAME)) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert raw.execute("PRAGMA foreign_key_check").fetchall() == []
    with GatewayState.in_state_dir(state_dir) as state:
        devices = {device.device_id: device for device in state.devices.list()}
        done = sorted(int(device_id.split("-")[1]) for device_id in devices)
        pending = {request.device_id for request in state.pairing.list_pending(0)}
        for i in done:
            dev = f"dev-{i:06d}"
            assert devices[dev].roles == ("node",)
            assert [token.role for token in state.tokens.list(dev)] == ["node"]
            assert state.meta.get(dev) == str(i)
            assert f"req-{i:06d}" in pending
        assert len(pending) == len(done)
        assert state.meta.get("dev-999999") is None
    return done


def test_sigkill_during_a_write_loop_leaves_only_whole_rows(tmp_path: Path) -> None:
    """Three writers killed at random points: the file checks clean and every group is whole."""
    state_dir = tmp_path / "state"
    rng = random.Random(20260906)
    start = 0
    reported_all: list[int] = []
    for _ in range(3):
        proc = _spawn(state_dir, start, "loop")
        target = start + rng.randint(5, 40)
        reported = -1
        while reported < target:
            reported = int(_read_line(proc.stdout, proc))
            reported_all.append(reported)
        _kill(proc)
        done = _check_clean(state_dir)
        assert done == list(range(done[-1] + 1))  # no gaps: commits are ordered
        assert reported <= done[-1] <= reported + 1  # at most the unreported next group
        with GatewayState.in_state_dir(state_dir) as state:
            for i in reported_all:  # a reported iteration had its touch committed too
                device = state.devices.get(f"dev-{i:06d}")
                assert device is not None
                assert device.last_seen_at_ms == i + 1
        start = done[-1] + 1
    assert oct(os.stat(state_dir / DB_FILENAME).st_mode & 0o777) == oct(0o600)


def test_sigkill_inside_an_open_transaction_loses_only_that_group(tmp_path: Path) -> None:
    """A writer killed while holding an uncommitted group leaves none of that group behind."""
    state_dir = tmp_path / "state"
    proc = _spawn(state_dir, 0, "loop")
    while int(_read_line(proc.stdout, proc)) < 4:
        pass
    _kill(proc)
    committed = _check_clean(state_dir)
    proc = _spawn(state_dir, committed[-1] + 1, "hold")
    assert _read_line(proc.stdout, proc) == "inside"
    _kill(proc)
    assert _check_clean(state_dir) == committed
