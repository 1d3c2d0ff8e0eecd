"""Fire-and-forget coroutines started from Qt slots, kept referenced until done and
cancellable together (the window's background work), and starting work once the window
has painted its first frame."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget

__all__ = ["CANCEL_GRACE_S", "TaskSet", "after_first_paint"]

log = logging.getLogger("openclaw.ui")

#: How long closing waits for a cancelled task to end before leaving it behind.
CANCEL_GRACE_S = 5.0


class TaskSet:
    """The tasks one widget or window started."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], name: str | None = None) -> None:
        """Run ``coro`` on the loop (as task ``name``); the set holds it until it ends."""
        task = asyncio.ensure_future(coro)
        if name is not None:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def cancel(self, grace_s: float = CANCEL_GRACE_S) -> None:
        """Cancel every task (but the caller's own) and wait, at most ``grace_s`` seconds,
        for them to end. One that ignores its cancel is named in the log and left behind,
        so closing a window never hangs on it; the caller's own cancel still reaches it."""
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if not tasks:
            return
        done, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in done:
            if not task.cancelled():
                task.exception()  # ended with an error while stopping: nothing to do with it
        for task in pending:
            log.warning("task %s did not stop within %g s of its cancel", task.get_name(), grace_s)


class _FirstPaint(QObject):
    """Calls back once, on the loop turn after ``widget`` first painted (or after
    ``fallback_ms``, for a window that never paints, e.g. minimized at start)."""

    def __init__(self, widget: QWidget, callback: Callable[[], None], fallback_ms: int) -> None:
        super().__init__(widget)
        self._callback: Callable[[], None] | None = callback
        widget.installEventFilter(self)
        QTimer.singleShot(fallback_ms, self._fire)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Qt: the first paint schedules the callback."""
        if event.type() == QEvent.Type.Paint and self._callback is not None:
            QTimer.singleShot(0, self._fire)
        return False

    def _fire(self) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()


def after_first_paint(
    widget: QWidget, callback: Callable[[], None], fallback_ms: int = 1000
) -> None:
    """Run ``callback`` once the window is on screen (its first frame painted)."""
    _FirstPaint(widget, callback, fallback_ms)
