"""Runs one command for the agent: no shell, its own process group, bounded output.

As the real node host: stdin is empty, stdout and stderr together keep their first
:data:`OUTPUT_CAP` bytes (the rest is read and dropped, so the command never blocks on a
full pipe), a timeout or a cancel ends the whole process group (SIGTERM, then SIGKILL after
:data:`KILL_GRACE_S`), and a command that cannot start gives ``error`` rather than an
exception.

``on_output`` hears the kept bytes of each stream as they are read (the progress stream of
:mod:`openclaw_desktop.node.exec.chunker`), so what it hears is always a prefix of the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["OUTPUT_CAP", "OutputListener", "RunResult", "run_command"]

#: Hears ``(stream, kept bytes)`` while a command runs (``stream`` is stdout or stderr).
OutputListener = Callable[[str, bytes], None]

#: Bytes of stdout+stderr kept (the reference's cap).
OUTPUT_CAP = 200_000
#: Seconds between SIGTERM and SIGKILL of the process group.
KILL_GRACE_S = 1.0
#: The exit code reported for a command ended by its timeout (as ``timeout(1)``, and the
#: reference).
TIMEOUT_EXIT_CODE = 124
_READ = 65536
TRUNCATED_SUFFIX = "... (truncated)"


@dataclass
class RunResult:
    """What a run produced (``system.run``'s payload via :meth:`payload`)."""

    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    error: str | None
    truncated: bool

    @property
    def success(self) -> bool:
        """Exit code 0 and no timeout."""
        return self.exit_code == 0 and not self.timed_out

    def payload(self) -> dict[str, Any]:
        """``{exitCode, timedOut, success, stdout, stderr, error}``; ``exitCode`` is 124
        after a timeout and absent when the process was killed by a signal or never
        started, and a truncation is marked at the end of stderr (or of stdout when stderr
        is empty)."""
        stdout, stderr = self.stdout, self.stderr
        if self.truncated:
            if stderr.strip():
                stderr = f"{stderr}\n{TRUNCATED_SUFFIX}"
            else:
                stdout = f"{stdout}\n{TRUNCATED_SUFFIX}"
        payload: dict[str, Any] = {}
        if self.exit_code is not None:
            payload["exitCode"] = self.exit_code
        payload.update(
            timedOut=self.timed_out,
            success=self.success,
            stdout=stdout,
            stderr=stderr,
            error=self.error,
        )
        return payload


class _Capture:
    """The shared head-capture budget of both streams."""

    def __init__(self, cap: int, on_output: OutputListener | None = None) -> None:
        self.on_output = on_output
        self.left = cap
        self.truncated = False
        self.parts: dict[str, list[bytes]] = {"stdout": [], "stderr": []}

    async def drain(self, name: str, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_READ):
            kept = chunk[: self.left]
            if len(kept) < len(chunk):
                self.truncated = True
            if kept:
                self.parts[name].append(kept)
                self.left -= len(kept)
                if self.on_output is not None:
                    self.on_output(name, kept)

    def text(self, name: str) -> str:
        return b"".join(self.parts[name]).decode("utf-8", errors="replace")


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _end_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the whole group, SIGKILL what is left after the grace period."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(KILL_GRACE_S):
            await proc.wait()
    _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


def _cwd_error(exc: OSError, cwd: str | None) -> str:
    name = errno.errorcode.get(exc.errno or 0, "EIO")
    text = f"Command failed during launch or output capture ({name})"
    if cwd is None or Path(cwd).is_dir():
        return text
    reason = "is not a directory" if Path(cwd).exists() else "does not exist"
    return f"node exec working directory {reason} on the node host: {cwd} (os reported: {text})"


async def run_command(
    argv: list[str],
    *,
    cwd: str | None,
    env: dict[str, str],
    timeout_ms: int | None,
    cap: int = OUTPUT_CAP,
    on_output: OutputListener | None = None,
) -> RunResult:
    """Run ``argv`` (never through a shell) and collect its bounded output.

    Cancelling the calling task ends the process group before the cancellation propagates.
    """
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return RunResult(None, False, "", "", _cwd_error(exc, cwd), False)
    capture = _Capture(cap, on_output)
    assert proc.stdout is not None and proc.stderr is not None
    readers = [
        asyncio.create_task(capture.drain("stdout", proc.stdout)),
        asyncio.create_task(capture.drain("stderr", proc.stderr)),
    ]
    timed_out = False
    try:
        async with asyncio.timeout(timeout_ms / 1000 if timeout_ms and timeout_ms > 0 else None):
            await asyncio.wait(readers)
            await proc.wait()
    except TimeoutError:
        timed_out = True
        await _end_group(proc)
        await asyncio.wait(readers, timeout=KILL_GRACE_S)
    except BaseException:
        await asyncio.shield(_end_group(proc))
        raise
    finally:
        for reader in readers:
            reader.cancel()
    code = proc.returncode
    exit_code = code if code is not None and code >= 0 else None
    if timed_out:
        exit_code = TIMEOUT_EXIT_CODE
    return RunResult(
        exit_code,
        timed_out,
        capture.text("stdout"),
        capture.text("stderr"),
        None,
        capture.truncated,
    )
