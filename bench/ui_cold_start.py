"""Cold start of the desktop app: process start -> first window paint -> operator connected
-> chat shown with its history.

Each run starts a fresh process (``QT_QPA_PLATFORM=offscreen``, a fresh
``OPENCLAW_DESKTOP_HOME``, no keyring) that runs the app's own entry points with timing hooks
added in that process only (``DesktopApp.__init__`` and ``DesktopApp.start`` wrapped, an
application event filter for paints; nothing in ``ui/`` is changed):

* against a gateway already running, operator only (``ui.app.run`` with a URL and token):
  (a) our bundled gateway and (b) the real OpenClaw gateway, both with the fake model;
* the default path (``ui.launcher.main``, what ``openclaw-desktop`` runs): the app starts its
  own bundled gateway and connects as operator and node.

Marks (``time.monotonic``, from just before the process was spawned):

* ``first paint``: the main window's first paint event;
* ``operator connected``: the operator connection reports ``connected``;
* ``chat shown``: ``DesktopApp.start`` returned (chat of ``main`` open, history and models
  loaded) and the message list has painted after that.

Run: ``.venv/bin/python -m bench.ui_cold_start [--runs 7] [--skip-real] [--skip-default]``.
The targets take turns within each round (both gateways run throughout), so they share the
machine's load alike. Prints median and p90 per target, the ratio real / bundled, and writes
``bench/results/ui_cold_start.json``. No assertions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MARKS = ("first_paint", "operator_connected", "chat_shown")
LABELS = {
    "first_paint": "process start -> first window paint",
    "operator_connected": "process start -> operator connected",
    "chat_shown": "process start -> chat shown (history loaded, painted)",
}
CHILD_TIMEOUT_S = 120.0


# ---------------------------------------------------------------- the child (the app itself)
def child(marks_file: Path, url: str | None, token: str | None, port: int | None) -> int:
    """Run the app with timing hooks; write the marks; close the window once the chat shows."""
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtWidgets import QApplication, QWidget

    import ui.app as ui_app
    from openclaw_desktop.transport import ConnectionState, ConnectionStatus

    marks: dict[str, Any] = {"imported": time.monotonic()}
    state: dict[str, Any] = {}

    def finish() -> None:
        marks_file.write_text(json.dumps(marks))
        desktop = state.get("desktop")
        if desktop is not None:
            QTimer.singleShot(0, desktop.window.close)

    class Watch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint and isinstance(watched, QWidget):
                desktop = state.get("desktop")
                if desktop is not None and watched.window() is desktop.window:
                    marks.setdefault("first_paint", time.monotonic())
                if watched is state.get("viewport") and "chat_shown" not in marks:
                    marks["chat_shown"] = time.monotonic()
                    finish()
            return False

    def on_status(status: ConnectionStatus) -> None:
        if status.state is ConnectionState.CONNECTED:
            marks.setdefault("operator_connected", time.monotonic())

    original_init = ui_app.DesktopApp.__init__
    original_start = ui_app.DesktopApp.start

    def init(self: Any, runtime: Any) -> None:
        runtime.operator_status_listeners.append(on_status)
        original_init(self, runtime)
        state["desktop"] = self
        state["watch"] = watch = Watch()
        app = QApplication.instance()
        assert app is not None
        app.installEventFilter(watch)
        QTimer.singleShot(int(CHILD_TIMEOUT_S * 1000), finish)

    async def start(self: Any) -> None:
        marks["start_called"] = time.monotonic()
        await original_start(self)
        marks["started"] = time.monotonic()
        chat = self.window.chat
        if chat is None:
            marks["error"] = self.window.placeholder.text()
            finish()
            return
        state["viewport"] = chat.messages.viewport()
        chat.messages.viewport().update()

    ui_app.DesktopApp.__init__ = init  # type: ignore[method-assign]
    ui_app.DesktopApp.start = start  # type: ignore[method-assign]
    if url is None:
        from ui.launcher import main as launcher_main

        return launcher_main(["--gateway-port", str(port)])
    from ui.runtime import RuntimeTarget

    return ui_app.run(["openclaw-desktop"], RuntimeTarget(url=url, token=token, node=False))


# ---------------------------------------------------------------- the parent
def _free_port() -> int:
    from tests.helpers.ports import free_port

    return free_port()


def _home(fake_llm_port: int) -> Path:
    """A fresh app home: not a first run (no connect screen); the bundled gateway it may start
    uses the fake model."""
    from tests.helpers.chat_trace import write_fake_providers

    home = Path(tempfile.mkdtemp(prefix="bench-cold-home-"))
    (home / "config").mkdir(parents=True)
    (home / "config" / "known_gateways.json").write_text("[]\n", encoding="utf-8")
    write_fake_providers(home / "state" / "gateway", fake_llm_port)
    return home


def one_launch(target: dict[str, Any], fake_llm_port: int) -> dict[str, float]:
    """One cold start; seconds from spawn to each mark."""
    home = _home(fake_llm_port)
    marks_file = home / "marks.json"
    env = dict(os.environ)
    env.update(
        {
            "OPENCLAW_DESKTOP_HOME": str(home),
            "QT_QPA_PLATFORM": "offscreen",
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
    )
    command = [sys.executable, "-m", "bench.ui_cold_start", "--child", str(marks_file)]
    if target.get("url"):
        command += ["--url", target["url"], "--token", target["token"]]
    else:
        command += ["--port", str(_free_port())]
    log = home / "child.log"
    try:
        with log.open("wb") as out:
            spawned = time.monotonic()
            proc = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                proc.wait(timeout=CHILD_TIMEOUT_S + 30)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # anything it left behind
                proc.wait()
        if not marks_file.exists():
            raise RuntimeError(f"no marks; child log:\n{log.read_text(errors='replace')[-3000:]}")
        marks = json.loads(marks_file.read_text())
        if "error" in marks or not all(m in marks for m in MARKS):
            raise RuntimeError(f"incomplete start {marks}; log:\n{log.read_text()[-3000:]}")
        return {m: marks[m] - spawned for m in (*MARKS, "imported", "start_called")}
    finally:
        shutil.rmtree(home, ignore_errors=True)


def launches(targets: dict[str, dict[str, Any]], runs: int, llm_port: int) -> dict[str, Any]:
    """One warm-up launch per target, then ``runs`` rounds, the targets taking turns within
    each round (so all see the same machine load)."""
    from bench.common import pct

    for target in targets.values():
        one_launch(target, llm_port)
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in targets}
    for _ in range(runs):
        for name, target in targets.items():
            samples[name].append(one_launch(target, llm_port))
    out: dict[str, Any] = {}
    for name, taken in samples.items():
        summary: dict[str, Any] = {"runs": runs, "samples": taken}
        for mark in (*MARKS, "imported", "start_called"):
            values = [s[mark] for s in taken]
            summary[mark] = {"median_s": pct(values, 50) / 1000, "p90_s": pct(values, 90) / 1000}
        out[name] = summary
    return out


@contextlib.contextmanager
def bundled(llm_port: int) -> Iterator[dict[str, Any]]:
    """Our gateway (subprocess, random port) with the fake model."""
    from tests.helpers.bundled_gateway import BundledGateway
    from tests.helpers.chat_trace import write_fake_providers

    root = Path(tempfile.mkdtemp(prefix="bench-cold-ours-"))
    write_fake_providers(root / "state", llm_port)
    gw = BundledGateway.start(root=root)
    try:
        yield {"url": gw.url, "token": gw.token}
    finally:
        gw.cleanup()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def real(llm_port: int) -> Iterator[dict[str, Any]]:
    """The real OpenClaw gateway with provider ``fake`` as default."""
    from tests.helpers.real_openclaw import GatewayFactory, ensure_installed

    install = ensure_installed()
    factory = GatewayFactory(install)
    try:
        gw = factory(fake_llm_port=llm_port)
        yield {"url": gw.url, "token": gw.token, "version": install.version}
    finally:
        factory.close()


def table(result: dict[str, Any]) -> str:
    """Markdown table: bundled and real side by side (ratio real / bundled), default path."""
    ours, other, default = result.get("bundled"), result.get("real"), result.get("default")
    lines = [
        f"| measure (median / p90) | bundled gateway | real gateway {result.get('real_version')} | "
        "real / bundled | "
        "default path (app starts its gateway, node on) |",
        "|---|---|---|---|---|",
    ]

    def cell(r: dict[str, Any] | None, mark: str) -> str:
        if r is None:
            return "-"
        return f"{r[mark]['median_s']:.2f} / {r[mark]['p90_s']:.2f} s"

    for mark in MARKS:
        ratio = "-"
        if ours and other:
            ratio = f"{other[mark]['median_s'] / ours[mark]['median_s']:.1f}x"
        lines.append(
            f"| {LABELS[mark]} | {cell(ours, mark)} | {cell(other, mark)} | {ratio} | "
            f"{cell(default, mark)} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Entry point (also the child's, with ``--child``)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--skip-default", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        sys.exit(child(args.child, args.url, args.token, args.port))

    from bench.ui_common import write_result
    from tests.helpers.fake_llm import FakeLLM

    result: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        llm = stack.enter_context(FakeLLM())
        targets = {"bundled": stack.enter_context(bundled(llm.port))}
        if not args.skip_real:
            targets["real"] = stack.enter_context(real(llm.port))
            result["real_version"] = targets["real"].get("version")
        if not args.skip_default:
            targets["default"] = {}
        result.update(launches(targets, args.runs, llm.port))
    write_result("ui_cold_start", result)
    print(table(result))


if __name__ == "__main__":
    main()
