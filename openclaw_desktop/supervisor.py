"""Supervision of the bundled gateway: the child process the app started, restarted when it
exits or is killed.

The gateway runs as a child process (``python -m gateway run``) so that its crash cannot take
the window down. :class:`GatewaySupervisor` starts it (or attaches to one already listening on
the port, which it then leaves alone), keeps its last log lines, and when it exits restarts it
after a backoff (:class:`RestartPolicy`). More than ``max_per_minute`` exits in a minute and
it gives up: the status says ``failed`` with the exit code and the last log lines, and only
:meth:`GatewaySupervisor.restart_now` (the user's *Try again*) starts it again.

Plain asyncio, no Qt; the status goes to listeners as immutable :class:`SupervisorStatus`
snapshots.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from openclaw_desktop.errors import ConfigError

__all__ = [
    "GatewaySupervisor",
    "RestartPolicy",
    "SupervisorState",
    "SupervisorStatus",
    "listening",
]

log = logging.getLogger("openclaw.supervisor")

SupervisorListener = Callable[["SupervisorStatus"], None]


def listening(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``host:port`` right now."""
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2):
        return True
    return False


def _to_stderr(line: bytes) -> None:
    """Copy a gateway log line to the app's stderr (as when it inherited it)."""
    buffer = getattr(sys.stderr, "buffer", None)
    if buffer is not None:
        buffer.write(line)
        buffer.flush()


class SupervisorState(StrEnum):
    """What the supervised gateway is doing."""

    STARTING = "starting"
    RUNNING = "running"
    #: Another process already listened on the port: used, not supervised.
    ATTACHED = "attached"
    #: It exited; it is started again in ``retry_in_s`` seconds.
    RESTARTING = "restarting"
    #: It kept stopping (the per-minute cap): it waits for the user.
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class SupervisorStatus:
    """An immutable snapshot for the window.

    Attributes:
        state: see :class:`SupervisorState`.
        restarts: restarts made since the supervisor started.
        exit_code: how the last run ended (negative: killed by that signal).
        retry_in_s: seconds until the next start, while restarting.
        last_lines: the last lines the gateway logged (for the "keeps stopping" card).
        reason: what went wrong, in words, when it did.
    """

    state: SupervisorState
    restarts: int = 0
    exit_code: int | None = None
    retry_in_s: float | None = None
    last_lines: tuple[str, ...] = ()
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    """When to start the gateway again after it exited.

    The n-th consecutive exit waits ``backoff_s[n]`` (the last entry repeats); a run that
    lasted ``stable_after_s`` resets the count. The ``max_per_minute + 1``-th exit within
    ``window_s`` gives up.
    """

    backoff_s: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0)
    max_per_minute: int = 5
    window_s: float = 60.0
    stable_after_s: float = 30.0

    def delay_s(self, exits: Sequence[float], consecutive: int, now: float) -> float | None:
        """Seconds to wait before the next start, or None to give up.

        Args:
            exits: the monotonic times of earlier exits (this one included).
            consecutive: exits in a row without a stable run (this one included, >= 1).
            now: the current monotonic time.
        """
        recent = sum(1 for t in exits if now - t <= self.window_s)
        if recent > self.max_per_minute:
            return None
        index = min(max(consecutive, 1), len(self.backoff_s)) - 1
        return self.backoff_s[index]


@dataclass
class _Run:
    process: asyncio.subprocess.Process
    started: float
    reader: asyncio.Task[None] | None = field(default=None)


class GatewaySupervisor:
    """Starts the bundled gateway and keeps it running.

    Args:
        argv: the full command that runs the gateway.
        port: the loopback port it listens on (a listener already there is attached to).
        env: its environment (the app's by default).
        policy: the restart policy.
        start_timeout_s: how long a start may take before it counts as failed.
        log_lines: how many of its last log lines to keep.
        echo: where its output is copied (the app's stderr by default; None: nowhere).
    """

    def __init__(
        self,
        argv: Sequence[str],
        port: int,
        *,
        env: Mapping[str, str] | None = None,
        policy: RestartPolicy | None = None,
        start_timeout_s: float = 20.0,
        log_lines: int = 40,
        echo: Callable[[bytes], object] | None = _to_stderr,
    ) -> None:
        self.argv = list(argv)
        self.port = port
        self.env = dict(os.environ if env is None else env)
        self.policy = policy or RestartPolicy()
        self.start_timeout_s = start_timeout_s
        self._echo = echo
        self._lines: collections.deque[str] = collections.deque(maxlen=log_lines)
        self._status = SupervisorStatus(SupervisorState.STOPPED)
        self._listeners: list[SupervisorListener] = []
        self._run: _Run | None = None
        self._watch: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._exits: list[float] = []
        self._consecutive = 0
        self._restarts = 0
        self._closing = False

    # ------------------------------------------------------------------ queries
    @property
    def status(self) -> SupervisorStatus:
        """The current snapshot."""
        return self._status

    @property
    def pid(self) -> int | None:
        """The running child's pid (None when attached or not running)."""
        run = self._run
        return run.process.pid if run is not None and run.process.returncode is None else None

    @property
    def last_lines(self) -> tuple[str, ...]:
        """The gateway's last log lines."""
        return tuple(self._lines)

    def on_status(self, listener: SupervisorListener) -> Callable[[], None]:
        """Call ``listener`` on every status change; returns the unsubscribe callable."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self._listeners.remove(listener)

        return unsubscribe

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Start the gateway (or attach to the one on the port) and wait until it listens.

        Raises:
            ConfigError: it exited at once or did not listen in time (with its last lines).
        """
        self._closing = False
        if listening(self.port):
            log.warning("using the gateway already running on 127.0.0.1:%d", self.port)
            self._set(SupervisorStatus(SupervisorState.ATTACHED))
            return
        self._set(SupervisorStatus(SupervisorState.STARTING))
        problem = await self._spawn()
        if problem is not None:
            self._set(self._failed(problem))
            raise ConfigError(f"{problem}{self._tail_text()}")
        self._watch = asyncio.create_task(self._supervise(), name="gateway-supervisor")

    async def restart_now(self) -> None:
        """Start again at once (the user's *Try again* / *Reconnect now*): forgets the
        exits counted so far. Does nothing while the gateway runs or is attached."""
        if self._status.state in (SupervisorState.RUNNING, SupervisorState.ATTACHED):
            return
        self._exits.clear()
        self._consecutive = 0
        if self._watch is not None and not self._watch.done():
            self._wake.set()  # cut the backoff short
            return
        self._watch = asyncio.create_task(self._supervise(spawn_first=True), name="gateway-sup")

    async def aclose(self) -> None:
        """Stop supervising and terminate the gateway this supervisor started."""
        self._closing = True
        self._wake.set()
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        run, self._run = self._run, None
        if run is not None:
            await _terminate(run.process)
            if run.reader is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await run.reader
        self._set(SupervisorStatus(SupervisorState.STOPPED, restarts=self._restarts))

    # ------------------------------------------------------------------ internals
    async def _supervise(self, *, spawn_first: bool = False) -> None:
        loop = asyncio.get_running_loop()
        if spawn_first and not await self._start_again():
            return
        while not self._closing:
            run = self._run
            if run is None:
                return
            code = await run.process.wait()
            if run.reader is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await run.reader  # its last lines, before they are shown
            if self._stopping():
                return
            now = loop.time()
            self._consecutive = (
                1 if now - run.started >= self.policy.stable_after_s else self._consecutive + 1
            )
            self._exits = [t for t in self._exits if now - t <= self.policy.window_s] + [now]
            log.warning("the bundled gateway exited (code %s)", code)
            delay = self.policy.delay_s(self._exits, self._consecutive, now)
            if delay is None:
                self._set(self._failed(f"the gateway stopped {len(self._exits)} times in a minute"))
                log.error("the bundled gateway keeps stopping; not restarting it by itself")
                return
            self._set(
                SupervisorStatus(
                    SupervisorState.RESTARTING,
                    restarts=self._restarts,
                    exit_code=code,
                    retry_in_s=delay,
                    last_lines=self.last_lines,
                    reason=_exit_words(code),
                )
            )
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wake.wait()
            if self._stopping() or not await self._start_again():
                return

    async def _start_again(self) -> bool:
        """One restart; False when it failed for good (the status says why)."""
        if listening(self.port):
            log.warning("another gateway now listens on 127.0.0.1:%d; using it", self.port)
            self._run = None
            self._set(SupervisorStatus(SupervisorState.ATTACHED, restarts=self._restarts))
            return False
        self._restarts += 1
        self._set(SupervisorStatus(SupervisorState.STARTING, restarts=self._restarts))
        problem = await self._spawn()
        if problem is None:
            log.info("the bundled gateway was restarted (restart %d)", self._restarts)
            return True
        # A start that failed counts as an exit: loop through the policy again.
        now = asyncio.get_running_loop().time()
        self._exits.append(now)
        self._consecutive += 1
        delay = self.policy.delay_s(self._exits, self._consecutive, now)
        if delay is None:
            self._set(self._failed(problem))
            return False
        self._set(
            SupervisorStatus(
                SupervisorState.RESTARTING,
                restarts=self._restarts,
                retry_in_s=delay,
                last_lines=self.last_lines,
                reason=problem,
            )
        )
        await asyncio.sleep(delay)
        return not self._stopping() and await self._start_again()

    async def _spawn(self) -> str | None:
        """Start one run and wait until it listens; None, or what went wrong."""
        loop = asyncio.get_running_loop()
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        run = _Run(process, loop.time())
        run.reader = asyncio.create_task(self._read(process), name="gateway-log")
        self._run = run
        deadline = loop.time() + self.start_timeout_s
        while not listening(self.port):
            if process.returncode is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await run.reader
                return f"the gateway exited at start ({_exit_words(process.returncode)})"
            if loop.time() > deadline:
                await _terminate(process)
                return f"the gateway did not start within {self.start_timeout_s:g} s"
            await asyncio.sleep(0.05)
        self._set(SupervisorStatus(SupervisorState.RUNNING, restarts=self._restarts))
        return None

    async def _read(self, process: asyncio.subprocess.Process) -> None:
        stream = process.stdout
        if stream is None:
            return
        while line := await stream.readline():
            self._lines.append(line.decode("utf-8", "replace").rstrip())
            if self._echo is not None:
                with contextlib.suppress(OSError, ValueError):
                    self._echo(line)

    def _stopping(self) -> bool:
        return self._closing

    def _failed(self, reason: str) -> SupervisorStatus:
        code = self._run.process.returncode if self._run is not None else None
        return SupervisorStatus(
            SupervisorState.FAILED,
            restarts=self._restarts,
            exit_code=code,
            last_lines=self.last_lines,
            reason=reason,
        )

    def _tail_text(self) -> str:
        tail = self.last_lines[-5:]
        return ("\n" + "\n".join(tail)) if tail else ""

    def _set(self, status: SupervisorStatus) -> None:
        self._status = status
        for listener in list(self._listeners):
            try:
                listener(status)
            except Exception:
                log.exception("supervisor listener %r failed", listener)


def _exit_words(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit code {code}"


async def _terminate(process: asyncio.subprocess.Process, timeout_s: float = 5.0) -> None:
    if process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        async with asyncio.timeout(timeout_s):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
