"""Python's cyclic garbage collector, run on the GUI thread only.

CPython collects in whichever thread happens to allocate when a generation's threshold
trips: a PortAudio callback, a capture worker, an executor thread. A Qt object freed by
such a collection is destroyed off the GUI thread, and Qt crashes the process (seen as a
segmentation fault while "Garbage-collecting" in a thread with no Python frame). So the
automatic collector is turned off and :class:`MainThreadCollector` runs the due
generations from a timer on the GUI thread instead; reference counting frees everything
that is not in a cycle at once, as before.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

__all__ = ["MainThreadCollector", "collect_due"]

#: How often the GUI thread looks for due generations.
INTERVAL_MS = 1000


def collect_due() -> int:
    """Collect the oldest generation whose threshold is passed (with the younger ones, as
    :func:`gc.collect` does), or nothing; returns the unreachable objects found."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    for generation in (2, 1, 0):
        if thresholds[generation] and counts[generation] > thresholds[generation]:
            return gc.collect(generation)
    return 0


class MainThreadCollector(QObject):
    """Turns automatic collection off while it lives and collects from a GUI-thread timer.

    Create it on the GUI thread; :meth:`stop` (or its parent's destruction, then
    ``gc.enable`` stays as it was) hands collection back to CPython.
    """

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(collect_due)
        self._timer.start()

    def stop(self) -> None:
        """Stop collecting here and give collection back to CPython if it had it."""
        self._timer.stop()
        if self._was_enabled:
            gc.enable()
