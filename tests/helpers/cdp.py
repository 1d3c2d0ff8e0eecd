"""Headless Chromium driven over the Chrome DevTools Protocol, for browser interop tests.

:class:`Chromium` starts the system ``chromium`` (Debian package, see the ``dev`` script)
headless on a fresh profile with ``--remote-debugging-port=0``, reads the port it chose from
``DevToolsActivePort`` and talks CDP over one WebSocket (``websockets``) to the browser
endpoint, with flattened sessions. :class:`Page` is one tab: it navigates, evaluates
JavaScript and records what the page did on the wire: every WebSocket frame it sent and
received (``Network.webSocketFrameSent/Received``) and every console message and uncaught
exception (``Runtime.consoleAPICalled`` / ``Runtime.exceptionThrown``).

Typical use::

    async with Chromium.launch() as browser:
        page = await browser.new_page()
        await page.goto("http://127.0.0.1:8080/")
        await page.until("document.title === 'OpenClaw Control'", timeout=20)
        frames = page.ws_frames   # [(direction, payload text), ...]

Everything binds to 127.0.0.1; the browser runs in its own process group and is killed
(group-wide, then its profile removed) when the context exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self

import websockets
from websockets.asyncio.client import ClientConnection

__all__ = ["CdpError", "Chromium", "ConsoleEntry", "Page", "WsFrame", "chromium_path"]

_LAUNCH_TIMEOUT_S = 30.0
_CALL_TIMEOUT_S = 30.0
_POLL_S = 0.1


def _spawn(argv: list[str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as log:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def chromium_path() -> str | None:
    """The system Chromium executable, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class CdpError(RuntimeError):
    """A CDP command answered with an error, or the browser went away."""


@dataclass(frozen=True)
class WsFrame:
    """One WebSocket text frame the page sent or received."""

    direction: Literal["sent", "received"]
    url: str
    payload: str

    def json(self) -> Any:
        """The payload decoded as JSON (None when it is not JSON)."""
        try:
            return json.loads(self.payload)
        except ValueError:
            return None


@dataclass(frozen=True)
class ConsoleEntry:
    """A console message (``level`` ``log``/``warning``/``error``…) or an uncaught exception
    (``level`` ``exception``)."""

    level: str
    text: str


@dataclass
class Page:
    """One tab (a CDP session attached to a page target); see the module docstring."""

    browser: Chromium
    session_id: str
    target_id: str
    ws_frames: list[WsFrame] = field(default_factory=list)
    console: list[ConsoleEntry] = field(default_factory=list)
    _ws_urls: dict[str, str] = field(default_factory=dict)

    async def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send the CDP command ``method`` to this tab and return its result."""
        return await self.browser.call(method, params, session_id=self.session_id)

    async def goto(self, url: str) -> None:
        """Navigate to ``url`` (returns once the navigation is committed)."""
        answer = await self.call("Page.navigate", {"url": url})
        if answer.get("errorText"):
            raise CdpError(f"navigating to {url}: {answer['errorText']}")

    async def evaluate(self, expression: str) -> Any:
        """The value of the JavaScript ``expression`` (promises are awaited)."""
        answer = await self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CdpError(f"evaluating {expression!r}: {text}")
        return answer.get("result", {}).get("value")

    async def until(self, expression: str, *, timeout: float) -> Any:
        """Poll ``expression`` until it is truthy and return its value.

        Raises:
            TimeoutError: still falsy after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(CdpError):
                value = await self.evaluate(expression)
                if value:
                    return value
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{expression!r} not true within {timeout}s")
            await asyncio.sleep(_POLL_S)

    def _on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Network.webSocketCreated":
            self._ws_urls[params["requestId"]] = params.get("url", "")
        elif method in ("Network.webSocketFrameSent", "Network.webSocketFrameReceived"):
            response = params.get("response", {})
            if response.get("opcode") == 1:
                direction: Literal["sent", "received"] = (
                    "sent" if method.endswith("Sent") else "received"
                )
                url = self._ws_urls.get(params.get("requestId", ""), "")
                self.ws_frames.append(WsFrame(direction, url, response.get("payloadData", "")))
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(_remote_text(arg) for arg in params.get("args", []))
            self.console.append(ConsoleEntry(params.get("type", "log"), text))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text", "")
            self.console.append(ConsoleEntry("exception", str(text)))


def _remote_text(arg: dict[str, Any]) -> str:
    if "value" in arg:
        return str(arg["value"])
    return str(arg.get("description", arg.get("type", "")))


class Chromium:
    """A headless Chromium process and its CDP connection; see the module docstring."""

    def __init__(self, proc: subprocess.Popen[bytes], profile: Path, log_path: Path) -> None:
        self.proc = proc
        self.profile = profile
        self.log_path = log_path
        self._conn: ClientConnection | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._pages: dict[str, Page] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    @contextlib.asynccontextmanager
    async def launch(cls, *, executable: str | None = None) -> AsyncIterator[Self]:
        """Start Chromium headless and connect to it; stop it and remove its profile after."""
        exe = executable or chromium_path()
        if exe is None:
            raise FileNotFoundError("chromium is not installed (Debian package 'chromium')")
        profile = Path(tempfile.mkdtemp(prefix="openclaw-chromium-"))
        log_path = profile / "chromium.log"
        argv = [
            exe,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile / 'profile'}",
            "about:blank",
        ]
        proc = await asyncio.to_thread(_spawn, argv, log_path)
        browser = cls(proc, profile, log_path)
        try:
            await browser._connect()
            yield browser
        finally:
            await browser.close()

    async def _connect(self) -> None:
        port_file = self.profile / "profile" / "DevToolsActivePort"
        deadline = time.monotonic() + _LAUNCH_TIMEOUT_S
        while not port_file.is_file() or len(port_file.read_text().splitlines()) < 2:
            if self.proc.poll() is not None:
                raise CdpError(f"chromium exited with {self.proc.returncode}: {self.log_tail()}")
            if time.monotonic() >= deadline:
                raise TimeoutError(f"chromium gave no DevTools port: {self.log_tail()}")
            await asyncio.sleep(_POLL_S)
        port, path = port_file.read_text().splitlines()[:2]
        self._conn = await websockets.connect(
            f"ws://127.0.0.1:{port}{path}", max_size=None, ping_interval=None
        )
        self._reader = asyncio.create_task(self._read())

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of Chromium's own output."""
        try:
            text = self.log_path.read_text("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    async def _read(self) -> None:
        assert self._conn is not None
        try:
            async for raw in self._conn:
                message = json.loads(raw)
                if "id" in message:
                    future = self._pending.pop(message["id"], None)
                    if future is not None and not future.done():
                        if "error" in message:
                            future.set_exception(CdpError(str(message["error"])))
                        else:
                            future.set_result(message.get("result", {}))
                    continue
                page = self._pages.get(message.get("sessionId", ""))
                if page is not None:
                    page._on_event(message.get("method", ""), message.get("params", {}))
        except websockets.ConnectionClosed:
            pass
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(CdpError("the browser connection closed"))
            self._pending.clear()

    async def call(
        self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None
    ) -> Any:
        """Send one CDP command (to the browser, or to a tab's session) and await its result."""
        if self._conn is None:
            raise CdpError("not connected")
        call_id = next(self._ids)
        message: dict[str, Any] = {"id": call_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        await self._conn.send(json.dumps(message))
        async with asyncio.timeout(_CALL_TIMEOUT_S):
            return await future

    async def new_page(self, on_event: Callable[[str, dict[str, Any]], None] | None = None) -> Page:
        """A new blank tab with Page, Runtime and Network events recorded."""
        target = await self.call("Target.createTarget", {"url": "about:blank"})
        target_id = target["targetId"]
        attached = await self.call(
            "Target.attachToTarget", {"targetId": target_id, "flatten": True}
        )
        page = Page(self, attached["sessionId"], target_id)
        self._pages[page.session_id] = page
        for domain in ("Page", "Runtime", "Network"):
            await page.call(f"{domain}.enable")
        return page

    async def close(self) -> None:
        """Close the connection, kill the browser's process group and remove its profile."""
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await asyncio.to_thread(self._stop_process)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _stop_process(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        # Chromium's helpers (zygote, renderers) share its process group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
