"""Quitting like a desktop app.

With a tray, closing the window hides it (a notice says where it went, the first time only);
Quit (File menu, tray menu, Ctrl+Q) really quits. Quitting while a reply streams or messages
still wait for the gateway asks first, with Cancel as the default; without a tray, closing the
window is quitting and asks the same question.

:func:`unfinished` is the pure part (what would be lost); :func:`ask_quit` asks without a
nested event loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from openclaw_desktop.chat import ChatTimeline

__all__ = ["CLOSED_TO_TRAY", "QuitFlow", "Unfinished", "ask_quit", "notice_once", "unfinished"]

log = logging.getLogger("openclaw.ui")

#: The one-time notice when the window is closed with a tray.
CLOSED_TO_TRAY = (
    "OpenClaw is still running in the tray",
    "Closing the window keeps the chat and this computer's node running. Click the tray "
    "icon to open the window again; Quit in its menu (or Ctrl+Q) quits.",
)
_WAITING = frozenset({"sending", "waiting", "queued"})


@dataclass(frozen=True)
class Unfinished:
    """What quitting now would cut off."""

    streaming: int
    waiting: int

    def question(self) -> str:
        """The question, in plain words."""
        parts = []
        if self.streaming:
            parts.append(
                "a reply is still streaming"
                if self.streaming == 1
                else f"{self.streaming} replies are still streaming"
            )
        if self.waiting:
            parts.append(
                "1 message has not reached the gateway yet"
                if self.waiting == 1
                else f"{self.waiting} messages have not reached the gateway yet"
            )
        said = " and ".join(parts)
        return f"{said[0].upper()}{said[1:]}. Quit anyway? What has not arrived is lost."


def unfinished(timelines: Iterable[ChatTimeline]) -> Unfinished | None:
    """What is still under way in these sessions' timelines (None: nothing)."""
    streaming = waiting = 0
    for timeline in timelines:
        statuses = [item.status for item in timeline.items]
        active = timeline.active_run
        # A run whose message has not left yet (waiting for the gateway) is not a reply
        # streaming: that message is counted as waiting instead.
        unsent = any(
            item.run_id == active and item.role == "user" and item.status in _WAITING
            for item in timeline.items
        )
        started = active is not None and not unsent
        streaming += 1 if "streaming" in statuses or started else 0
        waiting += sum(status in _WAITING for status in statuses)
    return Unfinished(streaming, waiting) if streaming or waiting else None


async def ask_quit(what: Unfinished, parent: QWidget | None) -> bool:
    """Ask whether to quit although ``what`` is under way (Cancel is the default)."""
    from ui.dialogs.trust import await_dialog

    box = QMessageBox(parent)
    box.setObjectName("quit-question")
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Quit OpenClaw?")
    box.setAccessibleName("Quit OpenClaw?")
    box.setText(what.question())
    quit_button = box.addButton("Quit", QMessageBox.ButtonRole.DestructiveRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    clicked: list[object] = []
    box.buttonClicked.connect(clicked.append)
    await await_dialog(box)
    return bool(clicked) and clicked[-1] is quit_button


def notice_once(marker: Path) -> bool:
    """True the first time (and creates ``marker``); False once it exists."""
    if marker.exists():
        return False
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # a read-only home: the notice shows again next time, nothing worse
    return True


class QuitFlow:
    """Decides what a close request and a Quit do, for one window.

    Args:
        window: the main window (its ``close_handler`` is set to :meth:`close_requested`).
        has_tray: whether the desktop shows the app's tray icon right now.
        timelines: the open sessions' timelines (what quitting would cut off).
        notify: shows a notice through the tray (title, text).
        marker: the file that remembers the closed-to-tray notice was shown.
        spawn: runs a coroutine on the app's loop (the question is asked without a nested
            event loop).
    """

    def __init__(
        self,
        window: Any,
        *,
        has_tray: Callable[[], bool],
        timelines: Callable[[], Iterable[ChatTimeline]],
        notify: Callable[[str, str], None],
        marker: Path,
        spawn: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        self.window = window
        self._has_tray = has_tray
        self._timelines = timelines
        self._notify = notify
        self._marker = marker
        self._spawn = spawn
        self._asking = False
        #: Called once the app quits (``run`` ends its loop there).
        self.on_quit: list[Callable[[], None]] = []
        window.close_handler = self.close_requested

    def close_requested(self) -> bool:
        """The window's close button: hide to the tray, or quit (asking first when
        something is under way). Returns whether the window may close now."""
        if self._has_tray():
            self.window.hide()
            if notice_once(self._marker):
                self._notify(*CLOSED_TO_TRAY)
            log.info("window closed to the tray")
            return False
        what = unfinished(self._timelines())
        if what is None:
            self._finish()
            return True  # the window closes now (already in its close event)
        self._ask_then_quit(what)
        return False

    def request_quit(self) -> None:
        """File > Quit, the tray's Quit, Ctrl+Q: quit, asking first when something is under
        way (a second request while the question is shown is ignored)."""
        what = unfinished(self._timelines())
        if what is None:
            self.quit()
        else:
            self._ask_then_quit(what)

    def _ask_then_quit(self, what: Unfinished) -> None:
        if self._asking:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test's bare window): nothing can be asked
            self.quit()
            return
        self._asking = True
        self._spawn(self._ask(what))

    async def _ask(self, what: Unfinished) -> None:
        try:
            if self.window.isHidden():
                self.window.showNormal()  # asked from the tray: the question needs its window
            confirmed = await ask_quit(what, self.window)
        finally:
            self._asking = False
        if confirmed:
            self.quit()
        else:
            log.info("quit cancelled: %s", what.question())

    def quit(self) -> None:
        """Quit now: the window closes for good and the app shuts down."""
        self._finish()
        self.window.close()

    def _finish(self) -> None:
        log.info("quitting")
        self.window.quitting = True
        for callback in self.on_quit:
            callback()
