"""``openclaw-desktop`` with a display: the window shows at once, the runtime starts after
the first frame (PySide6 + qasync: one asyncio loop on Qt's)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import AppPaths, SettingsStore
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.transport import ConnectionStatus
from ui.main_window import MainWindow
from ui.presenters.chat import ChatPresenter
from ui.presenters.sessions import SessionsPresenter
from ui.runtime import DesktopRuntime, RuntimeTarget
from ui.tray import Tray
from ui.widgets.capture import CaptureIndicator
from ui.widgets.pair_phone import PairPhoneDialog
from ui.widgets.sessions import SessionsPanel

__all__ = ["DesktopApp", "run"]

log = logging.getLogger("openclaw.ui")


class DesktopApp:
    """The window plus the runtime behind it."""

    def __init__(self, runtime: DesktopRuntime) -> None:
        self.runtime = runtime
        self.window = MainWindow()
        self.presenter: ChatPresenter | None = None
        self.presenters: dict[str, ChatPresenter] = {}
        self.sessions: SessionsPresenter | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.panel: SessionsPanel | None = None
        self.capture: CaptureIndicator | None = None
        runtime.node_status_listeners.append(self._node_status)
        self.tray = Tray(
            SettingsStore(runtime.paths.settings_file),
            open_chat=self._raise,
            pair_phone=lambda: self._spawn(self.pair_phone()),
            quit_app=lambda: (self.window.close(), None)[1],
        )
        self.tray.show()
        if not runtime.target.node:
            self.window.node_status.setText("node: off")
            self.tray.set_node("off")

    async def start(self) -> None:
        """Connect and show the chat (errors are shown in the window, not raised)."""
        try:
            client = await self.runtime.start()
        except (OpenClawError, OSError, TimeoutError) as exc:
            log.error("could not connect: %s", exc)
            self.window.show_message(f"Could not connect:\n{exc}")
            return
        self.window.operator_status.setText(
            f"operator: connected to {client.connection.endpoint.display}"
        )
        self.tray.set_operator("connected")
        node = self.runtime.node
        if node is not None:
            indicator = CaptureIndicator(node.session.cancel_running, self.window)
            self.window.statusBar().addWidget(indicator)
            node.ctx.activity.listeners.append(indicator.report)
            self.capture = indicator
        self.sessions = SessionsPresenter(client)
        self.sessions.failed.connect(self.window.statusBar().showMessage)
        self.panel = SessionsPanel(self.sessions, self._switch)
        self.window.show_sessions(self.panel)
        await self.open_session("main")
        await self.sessions.start()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _switch(self, key: str) -> None:
        self._spawn(self.open_session(key))

    def _raise(self) -> None:
        self.window.showNormal()
        self.window.raise_()
        self.window.activateWindow()

    async def pair_phone(self) -> PairPhoneDialog | None:
        """Show a fresh setup code of the gateway as a QR code."""
        client = self.runtime.client
        if client is None:
            return None
        try:
            setup = await client.call("device.pair.setupCode", {})
        except OpenClawError as exc:
            self.window.statusBar().showMessage(f"no setup code: {exc}")
            return None
        dialog = PairPhoneDialog(setup, self.window)
        dialog.open()
        return dialog

    def _busy(self, busy: bool) -> None:
        self.tray.set_busy(busy)

    def _replied(self) -> None:
        if not self.window.isVisible() or self.window.isMinimized():
            self.tray.notify("OpenClaw", "The reply is ready")

    async def open_session(self, key: str) -> ChatPresenter:
        """Show a session's chat (its presenter is created once and kept)."""
        assert self.runtime.client is not None
        short = key.split(":", 2)[-1] if key.startswith("agent:main:") else key
        presenter = self.presenters.get(short)
        if presenter is None:
            presenter = ChatPresenter(self.runtime.client, short)
            presenter.busy.connect(self._busy)
            presenter.busy.connect(lambda busy: None if busy else self._replied())
            self.presenters[short] = presenter
            self.window.show_chat(presenter)
            await presenter.start()
        else:
            self.window.show_chat(presenter)
        self.presenter = presenter
        if self.panel is not None:
            self.panel.select(key if key.startswith("agent:") else f"agent:main:{short}")
        return presenter

    def _node_status(self, status: ConnectionStatus) -> None:
        text = status.state.value
        if status.retry_in_s is not None:
            text += f" in {status.retry_in_s:.0f}s"
        self.window.node_status.setText(f"node: {text}")
        self.tray.set_node(text)

    async def aclose(self) -> None:
        """Stop following events and close the runtime."""
        for presenter in self.presenters.values():
            await presenter.aclose()
        if self.sessions is not None:
            await self.sessions.aclose()
        await self.runtime.aclose()


def run(argv: Sequence[str], target: RuntimeTarget) -> int:
    """Run the desktop app until its window closes."""
    import qasync

    app = QApplication.instance() or QApplication(list(argv))
    assert isinstance(app, QApplication)
    app.setApplicationName("OpenClaw Desktop")
    app.setDesktopFileName("openclaw-desktop")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    desktop = DesktopApp(DesktopRuntime(AppPaths.default(), target))
    desktop.window.show()
    closed = asyncio.Event()
    app.lastWindowClosed.connect(closed.set)
    QTimer.singleShot(0, lambda: asyncio.ensure_future(desktop.start()))

    async def until_closed() -> None:
        await closed.wait()
        await desktop.aclose()

    with loop:
        loop.run_until_complete(until_closed())
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run(sys.argv, RuntimeTarget()))
