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
from ui.runtime import DesktopRuntime, RuntimeTarget

__all__ = ["DesktopApp", "run"]

log = logging.getLogger("openclaw.ui")


class DesktopApp:
    """The window plus the runtime behind it."""

    def __init__(self, runtime: DesktopRuntime) -> None:
        self.runtime = runtime
        self.window = MainWindow()
        self.presenter: ChatPresenter | None = None
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
        self.presenter = ChatPresenter(client)
        self.window.show_chat(self.presenter)
        await self.presenter.start()

    def _node_status(self, status: ConnectionStatus) -> None:
        self.window.node_status.setText(f"node: {status.state.value}")

    async def aclose(self) -> None:
        """Stop following events and close the runtime."""
        if self.presenter is not None:
            await self.presenter.aclose()
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
