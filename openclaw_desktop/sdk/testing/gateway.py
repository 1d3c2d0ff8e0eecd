"""A real gateway with a scripted fake model, for the tests of apps built on the SDK.

``TestGateway`` starts a :class:`~openclaw_desktop.sdk.testing.fake_model.FakeLLM` and the
bundled OpenClaw gateway on a free 127.0.0.1 port, with a state folder whose
``providers.json`` makes the fake the default model (``fake/fake-model``)::

    async with TestGateway() as gw:
        ...  # connect to gw.url with gw.token; gw.model.requests is what the model saw

The gateway runs as a **child process** (``python -m gateway --state-dir DIR run --port N
--bind loopback``), not in-process: the ``openclaw_desktop`` package never imports the
bundled gateway (a layering rule of this project), and a child process is also what an app
meets in real life. The fake model runs in a thread of the calling process, so an app's test
can read what the gateway sent it.

Startup is bounded (``startup_timeout_s``; the error carries the tail of the gateway's
output). Stopping sends SIGTERM (terminate on Windows), then kills after ``stop_timeout_s``;
it also stops the fake model if this object started it, and removes the state folder if
this object created it. Model provider settings of the environment (``OPENAI_*``,
``ANTHROPIC_*``) are not passed on, so a test never reaches a real provider.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from openclaw_desktop.errors import InvalidState, OpenClawError
from openclaw_desktop.protocol.version import loopback_url
from openclaw_desktop.sdk.testing.fake_model import FakeLLM

__all__ = ["MODEL_REF", "TestGateway", "TestGatewayError"]

#: The default model of a test gateway (``<provider>/<model id>``).
MODEL_REF = "fake/fake-model"
Api = Literal["openai-completions", "anthropic-messages"]

_READY_RE = re.compile(r"gateway ready on wss?://\S+:(\d+)")
_PORT_TAKEN_RE = re.compile(
    r"cannot serve on port|address already in use|EADDRINUSE|Errno 98|WinError 10048", re.I
)
#: Environment variables never passed to the gateway: real model providers, and the state
#: folder (always given with ``--state-dir``).
_DROPPED_ENV = frozenset(
    {
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_MODEL",
        "OPENCLAW_DESKTOP_GATEWAY_STATE",
    }
)
_TAIL_LINES = 200
_PORT_ATTEMPTS = 3
_TOKEN_FILE = "gateway-token"
_POLL_S = 0.05


class TestGatewayError(OpenClawError):
    """The test gateway could not start: why, its exit code (None while it was running or
    when it never ran) and the tail of what it printed."""

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(self, message: str, *, returncode: int | None = None, output: str = "") -> None:
        self.message = message
        self.returncode = returncode
        self.output = output
        super().__init__(message)

    def __str__(self) -> str:
        text = self.message
        if self.returncode is not None:
            text += f" (exit code {self.returncode})"
        if self.output.strip():
            text += f"\n--- gateway output (last lines) ---\n{self.output.rstrip()}"
        return text


def _free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _gateway_root() -> Path | None:
    """The folder the bundled gateway package is imported from (None: not importable)."""
    spec = importlib.util.find_spec("gateway")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).resolve().parent.parent


class TestGateway:
    """The bundled gateway on a free loopback port, its default model a :class:`FakeLLM`.

    Use ``async with TestGateway() as gw`` (or ``with``, or :meth:`start` / :meth:`stop`).
    While it runs: :attr:`url` (``ws://127.0.0.1:<port>``), :attr:`token` (the shared
    token), :attr:`model` (the fake model: ``gw.model.requests``), :attr:`state_dir`.

    Args:
        state_dir: The gateway's state folder (created when missing; its ``providers.json``
            is overwritten). None: a temporary folder, removed on stop.
        allow: Node commands the gateway allows beyond its defaults (``--allow``).
        env: Environment variables for the gateway process, on top of this process's
            (model provider variables excluded).
        model: A fake model of your own (e.g. with ``key_status``); started if it is not
            running, and then stopped on exit. None: a new :class:`FakeLLM`.
        api: The wire format the gateway uses with the fake model.
        args: More ``gateway run`` arguments (``--manual-pairing``...).
        startup_timeout_s: Bound on the gateway's startup.
        stop_timeout_s: How long a stopping gateway gets before it is killed.
    """

    __test__ = False  # not a test class, whatever pytest's name patterns say

    def __init__(
        self,
        state_dir: str | os.PathLike[str] | None = None,
        allow: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        *,
        model: FakeLLM | None = None,
        api: Api = "openai-completions",
        args: Sequence[str] = (),
        startup_timeout_s: float = 30.0,
        stop_timeout_s: float = 10.0,
    ) -> None:
        self.model = model if model is not None else FakeLLM()
        self.allow = (allow,) if isinstance(allow, str) else tuple(allow)
        self.env = dict(env or {})
        self.api: Api = api
        self.args = tuple(args)
        self.startup_timeout_s = startup_timeout_s
        self.stop_timeout_s = stop_timeout_s
        self.token = ""
        #: The last gateway process id and port (kept after :meth:`stop`).
        self.pid: int | None = None
        self.port: int | None = None
        self._given_state_dir = Path(state_dir) if state_dir is not None else None
        self._state_dir: Path | None = None
        self._owns_state_dir = False
        self._owns_model = False
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._output: collections.deque[str] = collections.deque(maxlen=_TAIL_LINES)
        self._ready = threading.Event()
        self._abort = threading.Event()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ queries
    @property
    def url(self) -> str:
        """``ws://127.0.0.1:<port>`` of the gateway."""
        if self.port is None:
            raise InvalidState("the test gateway has not been started")
        return loopback_url(self.port)

    @property
    def state_dir(self) -> Path:
        """The gateway's state folder."""
        if self._state_dir is None:
            raise InvalidState("the test gateway is not running")
        return self._state_dir

    @property
    def running(self) -> bool:
        """Whether the gateway process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def output(self) -> str:
        """The last lines the gateway printed (stdout and stderr)."""
        return "".join(self._output)

    def __repr__(self) -> str:
        where = loopback_url(self.port) if self.port is not None else "not started"
        return f"TestGateway({where}, running={self.running})"

    # ------------------------------------------------------------------ sync lifecycle
    def start(self) -> Self:
        """Start the fake model and the gateway; returns once the gateway is ready.

        Raises:
            TestGatewayError: the gateway could not start (with its output tail).
            InvalidState: already started.
        """
        self._abort.clear()
        self._start()
        return self

    def stop(self) -> None:
        """Stop the gateway (SIGTERM, then kill after a bound), the fake model if this object
        started it, and remove the state folder if this object created it. Idempotent."""
        self._abort.set()
        with self._lock:
            self._stop_locked()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ async lifecycle
    async def __aenter__(self) -> Self:
        """Start in a worker thread (the event loop keeps running meanwhile)."""
        self._abort.clear()
        try:
            await asyncio.to_thread(self._start)
        except BaseException:
            # Cancelled or failed: make a start still running in its thread give up, and
            # clean up after it (stop waits for it).
            self._abort.set()
            await asyncio.to_thread(self.stop)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.to_thread(self.stop)

    # ------------------------------------------------------------------ internals
    def _start(self) -> None:
        with self._lock:
            if self._proc is not None or self._state_dir is not None:
                raise InvalidState("the test gateway is already started")
            try:
                self._start_locked()
            except BaseException:
                self._stop_locked()
                raise

    def _start_locked(self) -> None:
        if self._abort.is_set():
            raise TestGatewayError("the test gateway start was cancelled")
        root = _gateway_root()
        if root is None:
            raise TestGatewayError(
                "the bundled gateway (the 'gateway' package of openclaw-desktop) is not "
                "importable from this Python"
            )
        if not self.model.running:
            self.model.start()
            self._owns_model = True
        state_dir = self._prepare_state_dir()
        env = self._child_env(root)
        for attempt in range(1, _PORT_ATTEMPTS + 1):
            try:
                self._spawn(state_dir, _free_port(), env)
                self._wait_ready()
                break
            except TestGatewayError as exc:
                taken = exc.returncode is not None and _PORT_TAKEN_RE.search(exc.output)
                if not taken or attempt == _PORT_ATTEMPTS:
                    raise
                self._terminate()
        self.token = self._read_token(state_dir, env)

    def _prepare_state_dir(self) -> Path:
        """Create (or reuse) the state folder and point ``providers.json`` at the model."""
        base_url = self.model.openai_base_url
        if self.api == "anthropic-messages":
            base_url = self.model.base_url
        document = {
            "defaultModel": MODEL_REF,
            "providers": {
                "fake": {
                    "api": self.api,
                    "baseUrl": base_url,
                    "models": [
                        {
                            "id": MODEL_REF.split("/", 1)[1],
                            "name": "Fake Model",
                            "contextWindow": 128_000,
                            "maxTokens": 4096,
                        }
                    ],
                }
            },
        }
        path = self._given_state_dir
        try:
            if path is None:
                path = Path(tempfile.mkdtemp(prefix="openclaw-test-gateway-"))
                self._owns_state_dir = True
            else:
                path.mkdir(parents=True, exist_ok=True)
            self._state_dir = path
            (path / "providers.json").write_text(json.dumps(document, indent=2), "utf-8")
        except OSError as exc:
            raise TestGatewayError(
                f"cannot prepare the gateway state folder {path}: {exc}"
            ) from exc
        return path

    def _child_env(self, root: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
        env["PYTHONUNBUFFERED"] = "1"
        # The child imports the gateway from where this process found it (an installed
        # package is found anyway; a source checkout may only be on this process's path).
        if root.name not in ("site-packages", "dist-packages"):
            paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
            if str(root) not in paths:
                env["PYTHONPATH"] = os.pathsep.join([str(root), *paths])
        env.update(self.env)
        return env

    def _spawn(self, state_dir: Path, port: int, env: dict[str, str]) -> None:
        argv = [sys.executable, "-m", "gateway", "-v", "--state-dir", str(state_dir), "run"]
        argv += ["--port", str(port), "--bind", "loopback", "--mdns", "off"]
        if self.allow:
            argv += ["--allow", ",".join(self.allow)]
        argv += self.args
        self._ready.clear()
        self._output.clear()
        self.port = port
        self._proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=env,
        )
        self.pid = self._proc.pid
        self._reader = threading.Thread(
            target=self._read_output,
            args=(self._proc, port),
            name=f"test-gateway-{port}-output",
            daemon=True,
        )
        self._reader.start()

    def _read_output(self, proc: subprocess.Popen[str], port: int) -> None:
        """Keep the gateway's output pipe drained; spot its ready line."""
        assert proc.stdout is not None
        with contextlib.suppress(OSError, ValueError):
            for line in proc.stdout:
                self._output.append(line)
                match = _READY_RE.search(line)
                if match and int(match.group(1)) == port:
                    self._ready.set()

    def _wait_ready(self) -> None:
        proc = self._proc
        assert proc is not None
        deadline = time.monotonic() + self.startup_timeout_s
        while not self._ready.wait(_POLL_S):
            if proc.poll() is not None:
                self._join_reader(2.0)
                raise TestGatewayError(
                    "the bundled gateway exited during startup",
                    returncode=proc.returncode,
                    output=self.output,
                )
            if self._abort.is_set():
                raise TestGatewayError("the test gateway start was cancelled", output=self.output)
            if time.monotonic() > deadline:
                raise TestGatewayError(
                    f"the bundled gateway was not ready within {self.startup_timeout_s:g} s",
                    output=self.output,
                )

    def _read_token(self, state_dir: Path, env: dict[str, str]) -> str:
        """The shared token: the gateway writes it to its state folder before it listens."""
        with contextlib.suppress(OSError):
            token = (state_dir / _TOKEN_FILE).read_text("utf-8").strip()
            if token:
                return token
        try:
            result = subprocess.run(
                [sys.executable, "-m", "gateway", "--state-dir", str(state_dir), "token"],
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TestGatewayError(f"cannot read the gateway's token: {exc}") from exc
        if result.returncode != 0 or not result.stdout.strip():
            raise TestGatewayError(
                "cannot read the gateway's token",
                returncode=result.returncode,
                output=result.stderr[-4000:],
            )
        return result.stdout.strip()

    def _terminate(self) -> None:
        """Stop the gateway process (SIGTERM, then kill) and reap it."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                proc.wait(self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(10)
        self._join_reader(5.0)
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()

    def _join_reader(self, timeout: float) -> None:
        reader = self._reader
        if reader is not None:
            reader.join(timeout)
            if not reader.is_alive():
                self._reader = None

    def _stop_locked(self) -> None:
        errors: list[BaseException] = []
        for step in (self._terminate, self._stop_model, self._remove_state_dir):
            try:
                step()
            except Exception as exc:  # every step runs; the first failure is raised
                errors.append(exc)
        if errors:
            raise errors[0]

    def _stop_model(self) -> None:
        if self._owns_model:
            self._owns_model = False
            self.model.stop()

    def _remove_state_dir(self) -> None:
        path, self._state_dir = self._state_dir, None
        if path is not None and self._owns_state_dir:
            self._owns_state_dir = False
            shutil.rmtree(path, ignore_errors=True)
