"""``openclaw-desktop`` with a display: the window shows at once, the runtime starts after
the first frame (PySide6 + qasync: one asyncio loop on Qt's)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Sequence

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import AppPaths
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.transport import ConnectionStatus
from ui.main_window import MainWindow
from ui.presenters.chat import ChatPresenter
from ui.presenters.sessions import SessionsPresenter
from ui.runtime import DesktopRuntime, RuntimeTarget
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
        self._tasks: set[asyncio.Task[ChatPresenter]] = set()
        self.panel: SessionsPanel | None = None
        runtime.node_status_listeners.append(self._node_status)
        if not runtime.target.node:
            self.window.node_status.setText("node: off")

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
        self.sessions = SessionsPresenter(client)
        self.sessions.failed.connect(self.window.statusBar().showMessage)
        self.panel = SessionsPanel(self.sessions, self._switch)
        self.window.show_sessions(self.panel)
        await self.open_session("main")
        await self.sessions.start()

    def _switch(self, key: str) -> None:
        task = asyncio.ensure_future(self.open_session(key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def open_session(self, key: str) -> ChatPresenter:
        """Show a session's chat (its presenter is created once and kept)."""
        assert self.runtime.client is not None
        short = key.split(":", 2)[-1] if key.startswith("agent:main:") else key
        presenter = self.presenters.get(short)
        if presenter is None:
            presenter = ChatPresenter(self.runtime.client, short)
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
        self.window.node_status.setText(f"node: {status.state.value}")

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
