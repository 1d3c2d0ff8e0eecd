"""The asyncio loop on Qt's: qasync's loop, with a timer dispatch that cannot wedge.

qasync runs every ``call_soon`` / ``call_later`` handle from a Qt timer event and kills the
timer only *after* the handle ran, in a ``finally`` that first deletes the handle's entry.
A handle that re-enters the event loop, or an exception escaping one (a test's timeout
signal, ``KeyboardInterrupt``), leaves a live timer with no entry: it then fires every
turn of the loop forever, each time raising ``KeyError`` out of ``timerEvent``. The app
stops running callbacks in order, and every later Qt test fails. Our timer kills and forgets
a timer *before* its handle runs, and kills any timer it does not know.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QObject, QTimerEvent
from PySide6.QtWidgets import QApplication

__all__ = ["CallbackTimer", "qt_event_loop"]


class CallbackTimer(QObject):
    """Runs asyncio handles from Qt timer events: one single-shot Qt timer per handle.

    The interface qasync's loop uses: :meth:`add_callback`, :meth:`stop`, :meth:`set_debug`.
    """

    def __init__(self) -> None:
        super().__init__()
        self._handles: dict[int, asyncio.Handle] = {}
        self._stopped = False

    def add_callback(self, handle: asyncio.Handle, delay: float = 0) -> asyncio.Handle:
        """Run ``handle`` after ``delay`` seconds (rounded down to the millisecond); nothing
        once the loop closed (an async generator finalized at exit still schedules)."""
        if self._stopped:
            return handle
        timer_id = self.startTimer(int(max(0.0, delay) * 1000))
        self._handles[timer_id] = handle
        return handle

    def timerEvent(self, event: QTimerEvent) -> None:  # noqa: N802
        """Qt: a timer is due. Kill it and forget it first, then run its handle (unless the
        loop closed or the handle was cancelled)."""
        timer_id = event.timerId()
        self.killTimer(timer_id)
        handle = self._handles.pop(timer_id, None)
        if handle is None or self._stopped or handle.cancelled():
            return
        handle._run()

    def stop(self) -> None:
        """The loop closed: drop what is still scheduled, as qasync does."""
        self._stopped = True
        for timer_id in list(self._handles):
            self.killTimer(timer_id)
        self._handles.clear()

    def set_debug(self, enabled: bool) -> None:
        """qasync's loop forwards its debug flag; asyncio's own debug checks still apply."""

    @property
    def pending(self) -> int:
        """How many handles wait for their timer."""
        return len(self._handles)


def qt_event_loop(app: QApplication) -> Any:
    """A ``qasync.QEventLoop`` over ``app`` (an asyncio loop and a context manager that
    closes it) whose handles run from a :class:`CallbackTimer`."""
    import qasync

    loop = qasync.QEventLoop(app)
    if hasattr(loop, "_timer"):  # where qasync >= 0.27 keeps it; a test checks it is ours
        loop._timer = CallbackTimer()
    return loop
