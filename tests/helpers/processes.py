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

__all__ = ["GroupTimeout", "communicate_group", "stop_group", "wait_for_log"]


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


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class GroupTimeout(TimeoutError):
    """A process did not finish in time; its group was killed. Holds what it printed."""

    def __init__(self, timeout: float, stdout: str, stderr: str) -> None:
        super().__init__(f"still running after {timeout:g} s")
        self.stdout = stdout
        self.stderr = stderr


def communicate_group(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """``(stdout, stderr)`` of a text-mode process started with ``start_new_session`` and
    both streams piped. After ``timeout`` its whole group is SIGKILLed and
    :class:`GroupTimeout` raised with the output so far; interrupted (KeyboardInterrupt
    and the like), the group is killed and the leader reaped too."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        stdout, stderr = proc.communicate()
        raise GroupTimeout(timeout, stdout, stderr) from None
    finally:
        if proc.poll() is None:
            _kill_group(proc.pid)
            proc.wait()
