"""Run OUR bundled gateway (``python -m gateway run``) and OUR CLI as subprocesses.

The counterpart of :mod:`tests.helpers.real_openclaw` for the Python gateway: every gateway
gets its own state dir (its SQLite state, shared token and TLS key), listens on a free port,
logs to a file, and is stopped with SIGTERM (SIGKILL after a bound) by :meth:`stop` /
:meth:`cleanup`. :meth:`BundledGateway.restart` stops it (SIGTERM, or SIGKILL) and starts it
again on the same port and state dir; :meth:`BundledGateway.terminate` times a SIGTERM stop.
:meth:`BundledGateway.cli` runs ``openclaw-desktop`` (``devices``, ``nodes``,
``call``) against it with ``--url`` and ``--token``, in a CLI home of its own.

Typical use::

    with BundledGateway.start(args=["--manual-pairing"]) as gw:
        pending = gw.cli_json("devices", "list")["pending"]

For integration tests, the second half of this module has :func:`bundled_gateway` (an async
context manager running :class:`gateway.server.GatewayServer` in-process on 127.0.0.1 port 0
with a temporary state dir and the known token :data:`TOKEN`), :class:`RawClient` (raw
frames: challenge, signed ``connect``, requests, events) and :func:`start_node` /
:func:`operator_options` (our client library as node and operator).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import websockets
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect

from gateway.config import GatewayConfig
from gateway.server import GatewayServer
from openclaw_desktop.identity import (
    CredentialStore,
    DeviceIdentity,
    MemorySecretStore,
    build_payload_v3,
    signature_token,
)
from openclaw_desktop.node import (
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
    NodeSession,
)
from openclaw_desktop.node import Handler as NodeHandler
from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode, Role
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection, RetryPolicy
from tests.helpers.ports import free_port
from tests.helpers.processes import stop_group

__all__ = [
    "ALL_OPERATOR_SCOPES",
    "ANDROID_PHONE",
    "DEFAULT_NODE_COMMANDS",
    "FAST",
    "TOKEN",
    "BundledGateway",
    "CliError",
    "NodeHarness",
    "RawClient",
    "bundled_gateway",
    "clean_env",
    "connect_params",
    "gateway_config",
    "node_options",
    "operator_options",
    "raw_node",
    "raw_operator",
    "run_desktop_cli",
    "run_gateway_cli",
    "start_node",
    "wait_for",
]

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
_READY_RE = re.compile(r"gateway ready on (wss?)://\S+:(\d+)")
_IN_USE_RE = re.compile(r"address already in use|Errno 98|EADDRINUSE", re.IGNORECASE)
_ENV_DROP_PREFIXES = ("OPENCLAW_",)


class CliError(RuntimeError):
    """``openclaw-desktop`` exited non-zero (carries the completed process)."""

    def __init__(self, result: subprocess.CompletedProcess[str]) -> None:
        super().__init__(
            f"{' '.join(result.args)} exited {result.returncode}\n"
            f"--- stdout ---\n{result.stdout[-3000:]}\n--- stderr ---\n{result.stderr[-3000:]}"
        )
        self.result = result


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's env without OpenClaw settings, with the repo importable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP_PREFIXES)}
    # Never the developer's desktop: no real notifications, screenshots or session bus.
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        env.pop(name, None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def run_desktop_cli(
    home: Path, *args: str, timeout: float = 60, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m openclaw_desktop.cli ARGS`` with ``OPENCLAW_DESKTOP_HOME=home``."""
    result = subprocess.run(
        [sys.executable, "-m", "openclaw_desktop.cli", *args],
        env=clean_env({"OPENCLAW_DESKTOP_HOME": str(home)}),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if check and result.returncode != 0:
        raise CliError(result)
    return result


class BundledGateway:
    """Our gateway in a subprocess on ``127.0.0.1:<port>`` with its own state dir: the one
    way tests run ``python -m gateway run`` (:func:`bundled_gateway` is the in-process one).

    Layout of :attr:`root` (a fresh temp dir unless given): ``state/`` (``--state-dir``,
    unless ``state_dir`` is given), ``cli/`` (``OPENCLAW_DESKTOP_HOME`` of :meth:`cli`) and
    ``gateway.log`` (stdout+stderr of every run, appended; :meth:`run_log` is this run's).
    """

    def __init__(
        self,
        root: Path,
        port: int,
        args: Sequence[str],
        owns_root: bool,
        env: Mapping[str, str] | None = None,
        *,
        state_dir: Path | None = None,
        options: Sequence[str] = ("-v",),
    ) -> None:
        self.root = root
        self.port = port
        self.args = list(args)
        self.options = list(options)
        self.env = dict(env or {})
        self._owns_root = owns_root
        self.state_dir = state_dir if state_dir is not None else root / "state"
        self.cli_home = root / "cli"
        self.log_path = root / "gateway.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.token = ""
        self.tls = "--tls" in self.args
        self._log_offset = 0

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def start(
        cls,
        *,
        args: Sequence[str] = (),
        port: int | None = None,
        root: Path | None = None,
        env: Mapping[str, str] | None = None,
        ready_timeout: float = 30,
        state_dir: Path | None = None,
        options: Sequence[str] = ("-v",),
    ) -> BundledGateway:
        """Start a gateway and wait for ``gateway ready``; a free port unless ``port``.

        ``args`` go to ``gateway run``, ``options`` before it (``-vv``, ``--log-format
        json``); ``env`` is added to the (OpenClaw-free) environment.
        """
        owns = root is None
        base = Path(tempfile.mkdtemp(prefix="openclaw-ours-")) if root is None else root
        attempts = 3 if port is None else 1
        for attempt in range(1, attempts + 1):
            port_now = free_port() if port is None else port
            gw = cls(base, port_now, args, owns, env, state_dir=state_dir, options=options)
            try:
                gw._spawn_and_wait(ready_timeout)
                gw.token = gw.read_token()
            except RuntimeError:
                gw.stop()
                if attempt < attempts and _IN_USE_RE.search(gw.run_log()):
                    continue
                gw.cleanup()
                raise
            except BaseException:
                gw.cleanup()
                raise
            return gw
        raise AssertionError("unreachable")  # pragma: no cover

    def _spawn_and_wait(self, ready_timeout: float) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.cli_home.mkdir(parents=True, exist_ok=True)
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        argv = [sys.executable, "-m", "gateway", *self.options, "--state-dir", str(self.state_dir)]
        argv += ["run", "--port", str(self.port), *self.args]
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                argv,
                cwd=REPO,
                env=clean_env(self.env),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if _READY_RE.search(self.run_log()):
                return
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"our gateway exited with {self.proc.returncode}:\n{self.run_log()}"
                )
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"our gateway not ready in {ready_timeout}s:\n{self.run_log()}")

    def read_token(self) -> str:
        """The shared token as ``python -m gateway token`` prints it now."""
        return self._read_token()

    def _read_token(self) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "gateway", "--state-dir", str(self.state_dir), "token"],
            cwd=REPO,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            stdin=subprocess.DEVNULL,
        )
        return out.stdout.strip()

    def stop(self, timeout: float = 10) -> int | None:
        """SIGTERM the gateway (SIGKILL after ``timeout`` s); returns its exit code."""
        proc, self.proc = self.proc, None
        return None if proc is None else stop_group(proc, timeout)

    def terminate(self, timeout: float = 10) -> tuple[int, float]:
        """SIGTERM the gateway alone; returns ``(exit code, seconds until it exited)``
        (killed, and TimeoutError, when it is still running after ``timeout``)."""
        proc = self.proc
        assert proc is not None, "not running"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TimeoutError(f"our gateway still ran {timeout:g} s after SIGTERM") from None
        elapsed = time.monotonic() - started
        self.proc = None
        return code, elapsed

    def kill(self) -> int | None:
        """SIGKILL the gateway's process group (when running) and reap it; its exit code."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait(10)

    def restart(self, ready_timeout: float = 30, *, kill: bool = False) -> None:
        """Stop (SIGTERM, or SIGKILL with ``kill``), then start again on the same port and
        state dir."""
        if kill:
            self.kill()
        else:
            self.stop()
        self._spawn_and_wait(ready_timeout)

    def cleanup(self) -> None:
        """Stop and remove the temp dir (kept with ``OPENCLAW_INTEROP_KEEP=1``)."""
        self.stop()
        keep = os.environ.get("OPENCLAW_INTEROP_KEEP", "").strip() not in ("", "0", "false")
        if self._owns_root and not keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.cleanup()

    # ------------------------------------------------------------------ queries
    @property
    def url(self) -> str:
        """``ws://127.0.0.1:<port>`` (``wss://`` with ``--tls``)."""
        return f"{'wss' if self.tls else 'ws'}://{LOOPBACK}:{self.port}"

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        """Everything logged by every run so far."""
        try:
            return self.log_path.read_text("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def run_log(self) -> str:
        """What the current (most recent) run logged."""
        return self.log()[self._log_offset :] if self.log_path.exists() else ""

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` lines of :meth:`log`."""
        return "\n".join(self.log().splitlines()[-lines:])

    # ------------------------------------------------------------------ our CLI
    def cli(
        self, *args: str, timeout: float = 60, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """``openclaw-desktop ARGS --url <url> --token <token>`` against this gateway."""
        return run_desktop_cli(
            self.cli_home,
            *args,
            "--url",
            self.url,
            f"--token={self.token}",  # "=" form: a token may begin with "-"
            timeout=timeout,
            check=check,
        )

    def cli_json(self, *args: str, timeout: float = 60) -> Any:
        """:meth:`cli` with ``--json`` (``nodes invoke`` prints JSON anyway), parsed."""
        argv = list(args)
        if "--json" not in argv and "invoke" not in argv:
            argv.append("--json")
        result = self.cli(*argv, timeout=timeout)
        try:
            return json.loads(result.stdout)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not JSON ({exc}):\n{result.stdout}\n{result.stderr}") from None

    def __repr__(self) -> str:
        return f"BundledGateway(url={self.url!r}, root={str(self.root)!r})"


# =========================================================================== in-process
# The in-process server, a raw-frame client, our client library's operator/node harness,
# and a plain subprocess runner for SIGTERM/kill/restart tests (integration tests).

TOKEN = "bundled-test-token"
FAST = RetryPolicy(base_ms=50, early_ceiling_ms=500, pairing_poll_ms=200)
ALL_OPERATOR_SCOPES = (
    "operator.read",
    "operator.write",
    "operator.admin",
    "operator.approvals",
    "operator.pairing",
    "operator.talk",
    "operator.talk.secrets",
    "operator.questions",
)


def gateway_config(state_dir: Path, **overrides: Any) -> GatewayConfig:
    """A loopback test configuration: port 0, token :data:`TOKEN`, no mDNS."""
    base: dict[str, Any] = {
        "state_dir": state_dir,
        "port": 0,
        "hosts": [LOOPBACK],
        "auth_mode": "token",
        "token": TOKEN,
        "mdns_mode": "off",
        "probe_ollama": False,
    }
    base.update(overrides)
    if base.get("auth_mode") != "token" and "token" not in overrides:
        base["token"] = None
    return GatewayConfig(**base)


#: How the OpenClaw Android app connects as a node (``RawClient.connect`` keywords): the
#: client a setup code approves silently, as on the real gateway.
ANDROID_PHONE: dict[str, Any] = {
    "role": "node",
    "scopes": [],
    "client_id": "openclaw-android",
    "client_mode": "node",
    "platform": "android",
    "device_family": "Android",
    "min_protocol": 3,
    "commands": ["device.info"],
}


@contextlib.asynccontextmanager
async def bundled_gateway(state_dir: Path, **overrides: Any) -> AsyncIterator[GatewayServer]:
    """Start a :class:`GatewayServer` in-process on 127.0.0.1 (port 0) with ``state_dir`` and
    the token :data:`TOKEN` (``overrides`` are :class:`GatewayConfig` fields); yields the
    started server and closes it afterwards."""
    server = GatewayServer(gateway_config(state_dir, **overrides))
    await server.start()
    try:
        yield server
    finally:
        await server.close()


@dataclass(frozen=True)
class UpgradeAnswer:
    """The HTTP answer to a raw WebSocket upgrade request (:func:`http_upgrade`)."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


async def http_upgrade(
    port: int,
    headers: Sequence[tuple[str, str]] = (),
    *,
    source: str = LOOPBACK,
    timeout: float = 5.0,
) -> UpgradeAnswer:
    """Send a WebSocket upgrade request for ``/`` on 127.0.0.1:``port`` from ``source`` with
    extra ``headers``; returns the status line, headers and body of the answer (what a 101
    is followed by is not read). The socket is closed before returning."""
    reader, writer = await asyncio.open_connection(LOOPBACK, port, local_addr=(source, 0))
    try:
        lines = [
            "GET / HTTP/1.1",
            f"Host: {LOOPBACK}:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
            *(f"{name}: {value}" for name, value in headers),
        ]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        await writer.drain()
        async with asyncio.timeout(timeout):
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            status_line, *header_lines = head.rstrip("\r\n").split("\r\n")
            _version, status, reason = status_line.split(" ", 2)
            pairs = [(k, v) for k, _, v in (h.partition(": ") for h in header_lines)]
            length = next((int(v) for k, v in pairs if k.lower() == "content-length"), 0)
            body = await reader.readexactly(length) if int(status) != 101 else b""
        return UpgradeAnswer(int(status), reason, pairs, body)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    """Poll ``predicate()`` every 20 ms until it is truthy (TimeoutError after ``timeout``)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def connect_params(
    challenge: Mapping[str, Any],
    identity: DeviceIdentity | None,
    *,
    role: str = "operator",
    scopes: Sequence[str] = ("operator.read",),
    auth: Mapping[str, Any] | None = None,
    client_id: str = "cli",
    client_mode: str = "cli",
    platform: str = "linux",
    device_family: str | None = "Linux",
    display_name: str | None = None,
    commands: Sequence[str] | None = None,
    caps: Sequence[str] | None = None,
    min_protocol: int = 4,
    max_protocol: int = 4,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``connect`` params signed (v3) for the challenge payload ``{nonce, ts}``."""
    client: dict[str, Any] = {
        "id": client_id,
        "version": "0.0.1-test",
        "platform": platform,
        "mode": client_mode,
        "instanceId": uuid.uuid4().hex,
    }
    if device_family is not None:
        client["deviceFamily"] = device_family
    if display_name is not None:
        client["displayName"] = display_name
    params: dict[str, Any] = {
        "minProtocol": min_protocol,
        "maxProtocol": max_protocol,
        "client": client,
        "role": role,
        "scopes": list(scopes),
        "caps": list(caps or []),
    }
    if commands is not None:
        params["commands"] = list(commands)
    if auth is not None:
        params["auth"] = dict(auth)
    if identity is not None:
        nonce, ts = challenge["nonce"], challenge["ts"]
        payload = build_payload_v3(
            device_id=identity.device_id,
            client_id=client_id,
            client_mode=client_mode,
            role=role,
            scopes=list(scopes),
            signed_at_ms=ts,
            token=signature_token(params.get("auth")),
            nonce=nonce,
            platform=platform,
            device_family=device_family,
        )
        params["device"] = {
            "id": identity.device_id,
            "publicKey": identity.public_key,
            "signature": identity.sign(payload),
            "signedAt": ts,
            "nonce": nonce,
        }
    if extra:
        params.update(extra)
    return params


class RawClient:
    """One raw WebSocket connection: a reader task sorts responses and events."""

    def __init__(self, ws: ClientConnection, challenge: dict[str, Any]) -> None:
        self.ws = ws
        self.challenge = challenge
        self.events: list[dict[str, Any]] = []
        self.frames: list[dict[str, Any]] = []
        self.hello: dict[str, Any] | None = None
        self._pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read(), name="raw-client-reader")

    @classmethod
    async def open(cls, url: str, *, max_size: int | None = 2**26, **kw: Any) -> RawClient:
        """Open a connection and read the ``connect.challenge`` (5 s); ``kw`` goes to
        websockets' ``connect`` (``additional_headers=``, ``local_addr=("127.0.0.2", 0)``)."""
        ws = await ws_connect(
            url, max_size=max_size, open_timeout=10, close_timeout=2, ping_interval=None, **kw
        )
        async with asyncio.timeout(5):
            first = json.loads(await ws.recv())
        assert first["event"] == "connect.challenge", first
        return cls(ws, first)

    @property
    def nonce(self) -> dict[str, Any]:
        """The challenge payload ``{nonce, ts}``."""
        payload: dict[str, Any] = self.challenge["payload"]
        return payload

    async def _read(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed, asyncio.CancelledError):
            async for message in self.ws:
                try:
                    frame = json.loads(message)
                except ValueError:
                    continue
                self.frames.append(frame)
                if not isinstance(frame, dict):
                    continue
                if frame.get("type") == "res":
                    rid = frame.get("id")
                    future = self._pending.pop(rid, None) if isinstance(rid, str) else None
                    if future is not None and not future.done():
                        future.set_result(frame)
                elif frame.get("type") == "event":
                    self.events.append(frame)
                self._changed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("connection closed"))
                future.exception()
        self._changed.set()

    async def send(self, frame: Mapping[str, Any] | str | bytes) -> None:
        """Send a frame (mappings are JSON-encoded; str/bytes go out raw)."""
        data = json.dumps(frame) if isinstance(frame, Mapping) else frame
        await self.ws.send(data)

    def next_id(self) -> str:
        """A fresh request id."""
        return f"r{next(self._ids)}"

    async def send_request(self, method: str, params: Any = None) -> asyncio.Future[dict[str, Any]]:
        """Send a request; returns the future of its ``res`` frame."""
        request_id = self.next_id()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        frame: dict[str, Any] = {"type": "req", "id": request_id, "method": method}
        if params is not None:
            frame["params"] = params
        await self.send(frame)
        return future

    async def call(self, method: str, params: Any = None, timeout: float = 10) -> dict[str, Any]:
        """Send a request and wait for its ``res`` frame."""
        future = await self.send_request(method, params)
        async with asyncio.timeout(timeout):
            return await future

    async def ok(self, method: str, params: Any = None, timeout: float = 10) -> Any:
        """:meth:`call` that asserts ``ok`` and returns the payload."""
        res = await self.call(method, params, timeout)
        assert res["ok"] is True, res
        return res.get("payload")

    async def error(self, method: str, params: Any = None, timeout: float = 10) -> dict[str, Any]:
        """:meth:`call` that asserts ``ok: false`` and returns the error."""
        res = await self.call(method, params, timeout)
        assert res["ok"] is False, res
        error: dict[str, Any] = res["error"]
        return error

    async def connect(
        self, identity: DeviceIdentity | None, timeout: float = 10, **kw: Any
    ) -> dict[str, Any]:
        """Send a signed ``connect`` (auth defaults to :data:`TOKEN`); returns its ``res``."""
        kw.setdefault("auth", {"token": TOKEN})
        res = await self.call("connect", connect_params(self.nonce, identity, **kw), timeout)
        if res["ok"]:
            self.hello = res["payload"]
        return res

    async def wait_event(
        self,
        name: str,
        predicate: Callable[[dict[str, Any]], bool] | None = None,
        timeout: float = 10,
    ) -> dict[str, Any]:
        """The first event ``name`` (already received or arriving) matching ``predicate``."""
        seen = 0
        async with asyncio.timeout(timeout):
            while True:
                for frame in self.events[seen:]:
                    if frame.get("event") == name and (predicate is None or predicate(frame)):
                        return frame
                seen = len(self.events)
                if self._reader.done():
                    raise ConnectionError(f"closed before event {name}")
                self._changed.clear()
                await self._changed.wait()

    def events_named(self, name: str) -> list[dict[str, Any]]:
        """Events received so far with this name."""
        return [e for e in self.events if e.get("event") == name]

    async def wait_closed(self, timeout: float = 10) -> tuple[int | None, str | None]:
        """Wait for the server to close; returns ``(code, reason)``."""
        async with asyncio.timeout(timeout):
            await self.ws.wait_closed()
            await self._reader
        return self.ws.close_code, self.ws.close_reason

    async def close(self) -> None:
        """Close the socket and stop the reader."""
        with contextlib.suppress(Exception):
            await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reader


@contextlib.asynccontextmanager
async def raw_operator(
    url: str,
    identity: DeviceIdentity | None = None,
    scopes: Sequence[str] = ALL_OPERATOR_SCOPES,
    **kw: Any,
) -> AsyncIterator[RawClient]:
    """A connected raw operator (asserts hello-ok); closed on exit."""
    client = await RawClient.open(url)
    try:
        res = await client.connect(identity or DeviceIdentity.generate(), scopes=scopes, **kw)
        assert res["ok"] is True, res
        yield client
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def raw_node(
    url: str,
    commands: Sequence[str],
    identity: DeviceIdentity | None = None,
    **kw: Any,
) -> AsyncIterator[RawClient]:
    """A connected raw node (``node-host``, linux), asserting hello-ok; closed on exit."""
    client = await RawClient.open(url)
    kw.setdefault("client_id", "node-host")
    kw.setdefault("caps", ["system"])
    try:
        res = await client.connect(
            identity or DeviceIdentity.generate(),
            role="node",
            scopes=[],
            client_mode="node",
            commands=commands,
            **kw,
        )
        assert res["ok"] is True, res
        yield client
    finally:
        await client.close()


def operator_options(
    url: str,
    *,
    identity: DeviceIdentity | None = None,
    credentials: CredentialStore | None = None,
    scopes: Sequence[str] = ALL_OPERATOR_SCOPES,
    shared_token: str | None = TOKEN,
    **kw: Any,
) -> ConnectionOptions:
    """Operator options for our :class:`GatewayConnection` (fast retries)."""
    base: dict[str, Any] = {
        "url": url,
        "role": Role.OPERATOR,
        "client": ClientInfo(
            id=ClientId.CLI,
            version="0.0.1-test",
            platform="linux",
            device_family="Linux",
            mode=ClientMode.CLI,
        ),
        "signer": identity or DeviceIdentity.generate(),
        "credentials": credentials or CredentialStore(MemorySecretStore()),
        "scopes": tuple(scopes),
        "shared_token": shared_token,
        "retry": FAST,
    }
    base.update(kw)
    return ConnectionOptions(**base)


async def _echo(params: Any) -> InvokeResult:
    return InvokeResult.success({"echo": params})


async def _fail(params: Any) -> InvokeResult:
    return InvokeResult.error("PROBE_FAILURE", "probe asked to fail")


async def _notify(params: Any) -> InvokeResult:
    return InvokeResult.success({"delivered": True, "echo": params})


async def _info(params: Any) -> InvokeResult:
    return InvokeResult.success({"systemName": "TestOS", "model": "test"})


#: The default command table of :func:`start_node`: name -> (cap, handler).
DEFAULT_NODE_COMMANDS: dict[str, tuple[str, NodeHandler]] = {
    "system.notify": ("system", _notify),
    "probe.echo": ("probe", _echo),
    "probe.fail": ("probe", _fail),
    "device.info": ("device", _info),
}


@dataclass
class NodeHarness:
    """A node on our client library (:class:`GatewayConnection` + :class:`NodeSession`)."""

    connection: GatewayConnection
    session: NodeSession
    identity: DeviceIdentity
    credentials: CredentialStore
    handled: list[str] = field(default_factory=list)
    #: Every event the node received, in order.
    events: list[EventReceived] = field(default_factory=list)

    @property
    def node_id(self) -> str:
        """The node id (= device id)."""
        return self.identity.device_id

    def surface_resolved(self, decision: str = "approved") -> bool:
        """Whether the node received ``node.pair.resolved`` with ``decision``.

        Tests wait on this rather than on ``session.surface``: NodeSession's initial
        ``node.pending.pull`` answer can land after the event and overwrite it (a client race).
        """
        return any(
            e.event == "node.pair.resolved"
            and isinstance(e.payload, dict)
            and e.payload.get("decision") == decision
            for e in self.events
        )

    async def aclose(self) -> None:
        """Stop the session and close the connection."""
        await self.session.aclose()
        await self.connection.aclose()


def node_options(
    url: str,
    commands: Sequence[str],
    caps: Sequence[str],
    *,
    identity: DeviceIdentity,
    credentials: CredentialStore,
    shared_token: str | None = TOKEN,
    client: ClientInfo | None = None,
    **kw: Any,
) -> ConnectionOptions:
    """Node options for our :class:`GatewayConnection` (waits through pairing)."""
    base: dict[str, Any] = {
        "url": url,
        "role": Role.NODE,
        "client": client
        or ClientInfo(
            id=ClientId.LINUX,
            display_name="test-node",
            version="0.0.1-test",
            platform="linux",
            device_family="Linux",
            mode=ClientMode.NODE,
        ),
        "signer": identity,
        "credentials": credentials,
        "shared_token": shared_token,
        "commands": tuple(commands),
        "caps": tuple(caps),
        "min_protocol": 3,
        "wait_for_pairing": True,
        "retry": FAST,
    }
    base.update(kw)
    return ConnectionOptions(**base)


def start_node(
    url: str,
    *,
    handlers: Mapping[str, tuple[str, NodeHandler]] | None = None,
    identity: DeviceIdentity | None = None,
    credentials: CredentialStore | None = None,
    **kw: Any,
) -> NodeHarness:
    """A started node declaring ``handlers``' commands (:data:`DEFAULT_NODE_COMMANDS`)."""
    table = dict(DEFAULT_NODE_COMMANDS if handlers is None else handlers)
    identity = identity or DeviceIdentity.generate()
    credentials = credentials or CredentialStore(MemorySecretStore())
    handled: list[str] = []

    def recording(name: str, handler: NodeHandler) -> NodeHandler:
        async def run(params: Any) -> InvokeResult:
            handled.append(name)
            return await handler(params)

        return run

    registry = CommandRegistry(CommandSpec(name, cap) for name, (cap, _h) in table.items())
    caps: list[str] = []
    for cap, _handler in table.values():
        if cap not in caps:
            caps.append(cap)
    dispatcher = InvokeDispatcher(
        registry, {name: recording(name, h) for name, (_c, h) in table.items()}, dict
    )
    options = node_options(url, list(table), caps, identity=identity, credentials=credentials, **kw)
    connection = GatewayConnection(options)
    session = NodeSession(connection, dispatcher)
    harness = NodeHarness(connection, session, identity, credentials, handled)
    connection.on_event(harness.events.append)
    connection.start()
    return harness


def run_gateway_cli(
    *args: str, timeout: float = 30.0, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m gateway ARGS`` to completion (captured, never raises on exit status): the
    one way tests run a one-shot gateway command; ``env`` is added to the clean environment."""
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        env=clean_env(env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


class DesktopNode:
    """Our headless node (``openclaw-desktop node``) in a subprocess with its own home.

    ``home`` is its ``OPENCLAW_DESKTOP_HOME`` (identity, stored device tokens); the log file
    ``home/node.log`` collects stdout+stderr of every run.
    """

    def __init__(
        self,
        home: Path,
        url: str,
        token: str | None,
        display_name: str,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.home = home
        self.url = url
        self.token = token
        self.display_name = display_name
        self.env = dict(env or {})
        self.log_path = home / "node.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    @classmethod
    def start(
        cls,
        home: Path,
        *,
        url: str,
        token: str | None,
        display_name: str = "desktop-node",
        env: Mapping[str, str] | None = None,
    ) -> DesktopNode:
        """Spawn the node (returns at once; follow it with :meth:`wait_for_log`).

        ``env`` adds variables, e.g. the test's ``DBUS_SESSION_BUS_ADDRESS`` or ``DISPLAY``.
        """
        home.mkdir(parents=True, exist_ok=True)
        node = cls(home, url, token, display_name, env)
        node.spawn()
        return node

    @property
    def device_id(self) -> str:
        """The node's device id (``openclaw-desktop identity show``)."""
        out = run_desktop_cli(self.home, "identity", "show")
        device_id: str = json.loads(out.stdout)["deviceId"]
        return device_id

    def spawn(self) -> None:
        """Start (again) with the same home."""
        if self.running:
            raise RuntimeError("our node is already running")
        argv = [sys.executable, "-m", "openclaw_desktop.cli", "-v", "node", "--url", self.url]
        argv += ["--display-name", self.display_name]
        if self.token is not None:
            argv += [f"--token={self.token}"]
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                argv,
                cwd=REPO,
                env=clean_env({**self.env, "OPENCLAW_DESKTOP_HOME": str(self.home)}),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        """Everything logged so far."""
        try:
            return self.log_path.read_text("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of :meth:`log`."""
        return "\n".join(self.log().splitlines()[-lines:])

    def wait_for_log(self, pattern: str, timeout: float, *, since_start: bool = True) -> str:
        """Wait for a log line matching the regex ``pattern`` (this run only by default)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            exited = not self.running
            text = self.log()[self._log_offset :] if since_start else self.log()
            for line in text.splitlines():
                if regex.search(line):
                    return line
            if exited:
                raise RuntimeError(f"our node exited before logging {pattern!r}:\n{text[-3000:]}")
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"our node did not log {pattern!r} in {timeout}s:\n{text[-3000:]}"
                )
            time.sleep(0.1)

    def stop(self, timeout: float = 10) -> int | None:
        """SIGTERM (SIGKILL after ``timeout`` s); returns the exit code."""
        proc, self.proc = self.proc, None
        return None if proc is None else stop_group(proc, timeout)

    def __repr__(self) -> str:
        return f"DesktopNode(url={self.url!r}, home={str(self.home)!r})"
