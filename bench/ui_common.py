"""Shared pieces of the desktop-app benchmarks (``bench/ui_*.py``).

* a qasync loop on one :class:`QApplication` (``QT_QPA_PLATFORM=offscreen`` by default);
* :class:`StallProbe`: a 5 ms Qt timer on that loop; stall = actual interval - 5 ms;
* :func:`gateway_with_fake_model`: our bundled gateway (subprocess, random loopback port) with
  the fake model as its default model;
* :func:`connected_app`: the real :class:`ui.app.DesktopApp`, connected as operator;
* gateway event frames in the wire shapes of the real gateway 2026.9.6 (see
  ``tests/fixtures/gateway/real-chat-trace.json``), fed to the app through the SDK's event
  path: the operator connection's event listeners (normalizer -> ``client.events()`` ->
  presenter -> model/view), exactly where frames read from the socket go;
* a generated ``chat.history`` of any length (user turns, Markdown replies with code blocks,
  tool calls with results);
* RSS of this process, result files under ``bench/results/``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication

from bench.common import pct
from openclaw_desktop.session import EventReceived

T = TypeVar("T")
RESULTS = Path(__file__).resolve().parent / "results"
PROBE_MS = 5
SESSION = "agent:main:main"


# ---------------------------------------------------------------- PySide6 6.12.0 workaround
def none_refcount() -> int:
    """``sys.getrefcount(None)``: PySide6 6.12.0 on CPython 3.11 takes one reference from
    ``None`` on every call of a C++ method returning ``void`` (``setFormat``, ``setTextWidth``,
    ``setObjectName``, ...) and the interpreter aborts (``none_dealloc``) once it reaches 0.
    On CPython 3.12+ ``None`` is immortal and nothing happens. Extra references added by
    :func:`pin_none` are not counted."""
    return sys.getrefcount(None) - _PINNED[0]


def pin_none() -> None:
    """Give ``None`` (and ``True``/``False``: one ``bool_dealloc`` abort was seen too, not
    isolated) a billion extra references so a benchmark can run to its end in spite of the
    PySide6 6.12.0 bug above."""
    if sys.version_info < (3, 12) and not _PINNED[0]:
        for immortal in (None, True, False):
            ctypes.c_ssize_t.from_address(id(immortal)).value += 1_000_000_000
        _PINNED[0] = 1_000_000_000


_PINNED = [0]


def source_state() -> dict[str, Any]:
    """The commit measured and whether ui/ had uncommitted edits then."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "ui_dirty": bool(git("status", "--porcelain", "ui")),
    }


# ---------------------------------------------------------------- Qt loop
def qt_app() -> QApplication:
    """The process's QApplication (offscreen unless ``QT_QPA_PLATFORM`` says otherwise)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QApplication.instance() or QApplication(["openclaw-bench"])
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)
    return app


def run_qt(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``scenario`` on a qasync loop over the QApplication (one loop per process)."""
    from ui.event_loop import qt_event_loop

    app = qt_app()
    loop = qt_event_loop(app)
    asyncio.set_event_loop(loop)
    with loop:
        result: T = loop.run_until_complete(scenario())
    return result


async def settle(seconds: float = 0.05) -> None:
    """Let the Qt loop run (paints, posted events) for ``seconds``."""
    await asyncio.sleep(seconds)


class PaintWatch(QObject):
    """Records when a widget (usually a view's viewport) has finished painting: a zero timer
    started from its paint event fires once that event has been handled."""

    def __init__(self, target: QObject) -> None:
        super().__init__()
        self.target = target
        self.paints: list[float] = []
        target.installEventFilter(self)

    def _done(self) -> None:
        self.paints.append(time.perf_counter())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Qt: note paint events of the target."""
        if watched is self.target and event.type() == QEvent.Type.Paint:
            QTimer.singleShot(0, self._done)
        return False

    async def next_paint(self, after: float, timeout: float = 60) -> float:
        """When the first paint finishing after ``after`` (perf_counter) finished."""
        async with asyncio.timeout(timeout):
            while True:
                for stamp in self.paints:
                    if stamp >= after:
                        return stamp
                await asyncio.sleep(0.001)


class StallProbe:
    """A periodic Qt timer: each late tick is the time the loop was busy elsewhere."""

    def __init__(self, interval_ms: int = PROBE_MS) -> None:
        self.interval_ms = interval_ms
        self.ticks: list[float] = []
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        self.ticks.append(time.perf_counter())

    def start(self) -> None:
        """Start ticking (clears earlier ticks)."""
        self.ticks = [time.perf_counter()]
        self.timer.start()

    def stop(self) -> list[float]:
        """Stop; the stalls in seconds (interval - expected, never below 0)."""
        self.timer.stop()
        expected = self.interval_ms / 1000
        return [
            max(0.0, b - a - expected) for a, b in zip(self.ticks, self.ticks[1:], strict=False)
        ]


def stall_summary(stalls: list[float]) -> dict[str, float]:
    """p50/p99/max stall in ms, ticks and the share of ticks late by more than 16 ms."""
    if not stalls:
        return {"p50": 0.0, "p99": 0.0, "max": 0.0, "ticks": 0, "over_16ms": 0.0}
    return {
        "p50": pct(stalls, 50),
        "p99": pct(stalls, 99),
        "max": max(stalls) * 1000,
        "ticks": len(stalls),
        "over_16ms": sum(1 for s in stalls if s > 0.016) / len(stalls),
    }


# ---------------------------------------------------------------- gateway and app
_REAPER = """
import os, shutil, signal, sys, time
owner, pid, folder = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
while os.path.exists(f"/proc/{owner}"):
    time.sleep(0.5)
try:
    os.kill(pid, signal.SIGTERM)
    time.sleep(3)
    os.kill(pid, signal.SIGKILL)
except ProcessLookupError:
    pass
shutil.rmtree(folder, ignore_errors=True)
"""


@contextlib.contextmanager
def reaper(pid: int, folder: Path) -> Iterator[None]:
    """Stop process ``pid`` and delete ``folder`` should this process die without cleaning
    up (an abort: see :func:`none_refcount`); a no-op when the block ends normally."""
    watcher = subprocess.Popen(
        [sys.executable, "-c", _REAPER, str(os.getpid()), str(pid), str(folder)],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        yield
    finally:
        watcher.kill()
        watcher.wait()


@contextlib.contextmanager
def gateway_with_fake_model(chunk_delay_s: float = 0.005) -> Iterator[tuple[str, str]]:
    """Our gateway (subprocess on a free loopback port) whose default model is the fake one;
    yields (url, token). Both are stopped and their folder deleted on exit."""
    from tests.helpers.bundled_gateway import BundledGateway
    from tests.helpers.chat_trace import write_fake_providers
    from tests.helpers.fake_llm import FakeLLM

    root = Path(tempfile.mkdtemp(prefix="bench-ui-gw-"))
    try:
        with FakeLLM(chunk_delay_s=chunk_delay_s) as llm:
            write_fake_providers(root / "state", llm.port)
            gw = BundledGateway.start(root=root)
            assert gw.proc is not None
            try:
                with reaper(gw.proc.pid, root):
                    yield gw.url, gw.token
            finally:
                gw.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def app_home() -> Iterator[Path]:
    """A throw-away ``OPENCLAW_DESKTOP_HOME`` (and no desktop keyring) for the app."""
    home = Path(tempfile.mkdtemp(prefix="bench-ui-home-"))
    saved = os.environ.get("OPENCLAW_DESKTOP_HOME")
    os.environ["OPENCLAW_DESKTOP_HOME"] = str(home)
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    try:
        yield home
    finally:
        keyring.set_keyring(previous)
        if saved is None:
            os.environ.pop("OPENCLAW_DESKTOP_HOME", None)
        else:
            os.environ["OPENCLAW_DESKTOP_HOME"] = saved
        shutil.rmtree(home, ignore_errors=True)


@contextlib.asynccontextmanager
async def connected_app(url: str, token: str) -> AsyncIterator[Any]:
    """The real desktop app (window shown, chat of ``main`` open), operator only (no node)."""
    from openclaw_desktop.config import AppPaths
    from ui.app import DesktopApp
    from ui.runtime import DesktopRuntime, RuntimeTarget

    runtime = DesktopRuntime(AppPaths.default(), RuntimeTarget(url=url, token=token, node=False))
    app = DesktopApp(runtime)
    app.window.show()
    try:
        await app.start()
        if app.window.chat is None:
            raise RuntimeError(f"the app did not connect: {app.window.placeholder.text()}")
        await settle(0.3)
        yield app
    finally:
        await app.aclose()
        app.window.close()
        app.window.deleteLater()
        await settle(0.05)


# ---------------------------------------------------------------- events (real gateway shapes)
def inject(client: Any, event: str, payload: dict[str, Any]) -> None:
    """Deliver one gateway event to the operator connection's listeners, as its receive loop
    does for a frame read from the socket (no ``seq``: no gap bookkeeping)."""
    connection = client.connection
    connection._dispatch(connection._event_listeners, EventReceived(event, payload, None, None))


def _run_payload(run_id: str, seq: int, **extra: Any) -> dict[str, Any]:
    return {"runId": run_id, "sessionKey": SESSION, "agentId": "main", "seq": seq, **extra}


def lifecycle(run_id: str, seq: int, phase: str) -> tuple[str, dict[str, Any]]:
    """``agent`` lifecycle ``start`` / ``end``."""
    now = int(time.time() * 1000)
    data: dict[str, Any] = {"phase": phase, "startedAt" if phase == "start" else "endedAt": now}
    return "agent", _run_payload(run_id, seq, stream="lifecycle", data=data, ts=now)


def assistant_stream(run_id: str, seq: int, delta: str, text: str) -> tuple[str, dict[str, Any]]:
    """``agent`` ``assistant`` (sent at once for every model chunk; the SDK ignores it)."""
    data = {"text": text, "delta": delta, "itemId": f"{run_id}:1"}
    return "agent", _run_payload(run_id, seq, stream="assistant", data=data)


def chat_delta(run_id: str, seq: int, delta: str, text: str) -> tuple[str, dict[str, Any]]:
    """``chat`` ``delta`` with the cumulative message."""
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return "chat", _run_payload(run_id, seq, state="delta", deltaText=delta, message=message)


def chat_final(run_id: str, seq: int, text: str) -> tuple[str, dict[str, Any]]:
    """``chat`` ``final``."""
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return "chat", _run_payload(run_id, seq, state="final", stopReason="stop", message=message)


def tool_event(
    run_id: str, seq: int, call_id: str, phase: str, output: str = ""
) -> tuple[str, dict[str, Any]]:
    """``agent`` ``tool`` ``start`` / ``result``."""
    data: dict[str, Any] = {"phase": phase, "name": "exec", "toolCallId": call_id}
    if phase == "start":
        data["args"] = {"command": "ls -la", "workdir": "/tmp"}
    else:
        data["isError"] = False
        data["result"] = {"content": [{"type": "text", "text": output}]}
    return "agent", _run_payload(run_id, seq, stream="tool", data=data)


#: A Markdown reply: prose, a list, a code block (what assistant rows usually hold).
REPLY = (
    "Here is what I found in **the project**:\n\n"
    "- the gateway listens on `127.0.0.1` only;\n"
    "- the node advertises *camera* and *screen*;\n\n"
    "```python\nasync def main() -> None:\n    async with OpenClaw.connect(url) as oc:\n"
    "        print(await oc.sessions.list())\n```\n\n"
    "Let me know if you want me to change anything else. "
)


def reply_text(index: int, chars: int) -> str:
    """A Markdown reply of about ``chars`` characters."""
    text = f"Reply {index}. " + REPLY * (1 + chars // len(REPLY))
    return text[:chars]


def history_messages(count: int, reply_chars: int = 600) -> list[dict[str, Any]]:
    """``count`` ``chat.history`` messages in the real gateway's shape: turns of a user
    message and a Markdown reply; every third turn calls a tool (call, result, reply)."""
    out: list[dict[str, Any]] = []
    ts = int(time.time() * 1000) - count * 1000
    turn = 0
    while len(out) < count:
        run_id = str(uuid.uuid4())
        ts += 1000

        def meta(**more: Any) -> dict[str, Any]:
            return {"id": str(uuid.uuid4()), "seq": len(out) + 1, **more}

        ikey = f"{run_id}:user"
        text = f"Question {turn}: what does the gateway do with `chat.history`?"
        out.append(
            {
                "role": "user",
                "content": text,
                "timestamp": ts,
                "idempotencyKey": ikey,
                "__openclaw": meta(idempotencyKey=ikey),
            }
        )
        if turn % 3 == 2:
            call = f"call_{turn}"
            out.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "toolCall", "id": call, "name": "exec", "arguments": {"c": "ls"}}
                    ],
                    "stopReason": "toolUse",
                    "timestamp": ts,
                    "__openclaw": meta(runId=run_id),
                }
            )
            out.append(
                {
                    "role": "toolResult",
                    "toolCallId": call,
                    "toolName": "exec",
                    "content": [{"type": "text", "text": "total 8\n" + "-rw-r--r-- file\n" * 12}],
                    "isError": False,
                    "timestamp": ts,
                    "__openclaw": meta(runId=run_id),
                }
            )
        out.append(
            {
                "role": "assistant",
                "content": [{"type": "text", "text": reply_text(turn, reply_chars)}],
                "stopReason": "stop",
                "timestamp": ts,
                "__openclaw": meta(runId=run_id),
            }
        )
        turn += 1
    return out[:count]


# ---------------------------------------------------------------- delegate instrumentation
@contextlib.contextmanager
def count_delegate_work() -> Iterator[dict[str, int]]:
    """Count the delegate's document look-ups (``ChatDelegate._doc``: one per ``sizeHint`` and
    per ``paint`` of a row) and documents laid out (``render_document``) while the block runs,
    by wrapping both in this process (Python-level functions; the Qt virtuals cannot be
    wrapped). Not for timing."""
    from ui.widgets import chat_delegate

    counts = {"row_lookups": 0, "render_document": 0}
    cls = chat_delegate.ChatDelegate
    original_doc, original_render = cls._doc, chat_delegate.render_document

    def doc(self: Any, *args: Any) -> Any:
        counts["row_lookups"] += 1
        return original_doc(self, *args)

    def render(*args: Any) -> Any:
        counts["render_document"] += 1
        return original_render(*args)

    cls._doc = doc  # type: ignore[method-assign,assignment]
    chat_delegate.render_document = render  # type: ignore[assignment]
    try:
        yield counts
    finally:
        cls._doc = original_doc  # type: ignore[method-assign]
        chat_delegate.render_document = original_render


# ---------------------------------------------------------------- memory and results
def rss_mb() -> float:
    """Resident memory of this process (MB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def trimmed_rss_mb() -> float:
    """RSS after ``malloc_trim(0)``: freed C/C++ memory handed back to the system, so RSS
    shows what is still in use (glibc keeps freed blocks otherwise)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_mb()


def write_result(name: str, result: dict[str, Any]) -> Path:
    """``bench/results/<name>.json`` (the folder is git-ignored)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = {"measured_at": stamp, **source_state(), **result}
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return path
