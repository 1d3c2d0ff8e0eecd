"""A start-up probe for smoke tests of the installed or bundled app.

With ``OPENCLAW_DESKTOP_SMOKE=1`` the app logs ``connect screen shown`` (logger
``openclaw.ui``, INFO: run with ``-v``) once its connect screen is visible; with
``OPENCLAW_DESKTOP_SMOKE=exit`` it then closes its windows, so it quits the way it does when
the user closes it. Nothing else changes: the probe only looks at the widgets.
"""

from __future__ import annotations

import logging
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

__all__ = ["CONNECT_SCREEN_SHOWN", "SMOKE_ENV", "watch_connect_screen"]

SMOKE_ENV = "OPENCLAW_DESKTOP_SMOKE"
CONNECT_SCREEN_SHOWN = "connect screen shown"

log = logging.getLogger("openclaw.ui")


def watch_connect_screen(app: QApplication, *, exit_after: bool, timeout_s: float = 60.0) -> QTimer:
    """Poll (every 50 ms, at most ``timeout_s``) for a visible connect screen."""
    from ui.widgets.connect import ConnectScreen

    started = time.monotonic()
    timer = QTimer(app)
    timer.setInterval(50)

    def close_all() -> None:
        for widget in app.topLevelWidgets():
            widget.close()

    def check() -> None:
        if any(isinstance(w, ConnectScreen) and w.isVisible() for w in app.allWidgets()):
            timer.stop()
            log.info(CONNECT_SCREEN_SHOWN)
            if exit_after:
                QTimer.singleShot(100, close_all)
        elif time.monotonic() - started > timeout_s:
            timer.stop()
            log.error("the connect screen did not show within %.0f s", timeout_s)
            if exit_after:
                close_all()

    timer.timeout.connect(check)
    timer.start()
    return timer
