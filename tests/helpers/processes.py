"""Child processes of tests: waiting for a line in their log, and stopping their whole
process group (gateways start children of their own)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["stop_group", "wait_for_log"]


def wait_for_log(
    log: Path, text: str, proc: subprocess.Popen[bytes], timeout: float, poll: float = 0.05
) -> float:
    """Seconds until ``text`` appears in ``log``; fails (showing the log) if the process
    exits first or ``timeout`` passes."""
    started = time.monotonic()
    while text not in log.read_text(errors="replace"):
        assert proc.poll() is None, log.read_text(errors="replace")
        assert time.monotonic() - started < timeout, log.read_text(errors="replace")
        time.sleep(poll)
    return time.monotonic() - started


def stop_group(proc: subprocess.Popen[Any], timeout: float = 15.0) -> int | None:
    """SIGTERM the process group started with ``start_new_session``, SIGKILL it after
    ``timeout`` s, and reap the leader; its exit code. A group already gone is no error."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    return proc.returncode
