"""The GUI-thread garbage collector (:mod:`ui.collector`): automatic collection is off
while it runs, a cycle made in another thread is still freed, on the GUI thread, by its
timer, and stopping it gives collection back."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QCoreApplication, QElapsedTimer
from PySide6.QtWidgets import QApplication

from ui.collector import MainThreadCollector, collect_due


class _Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the cyclic collector frees it

    def __del__(self) -> None:
        # Where the collector ran: the name of the thread freeing the cycle.
        _freed_in.append(threading.current_thread().name)


_freed_in: list[str] = []


@pytest.fixture
def low_threshold() -> Iterator[None]:
    """Collect generation 0 after a single allocation, so a due collection is certain."""
    saved = gc.get_threshold()
    gc.set_threshold(1, saved[1], saved[2])
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def _cycle_from_a_thread() -> weakref.ref[_Node]:
    """A cycle made (and dropped) in a worker thread, which also allocates a lot there."""
    made: list[weakref.ref[_Node]] = []

    def work() -> None:
        made.append(weakref.ref(_Node()))
        _junk = [[] for _ in range(5000)]  # would trip an automatic collection here

    worker = threading.Thread(target=work, name="worker")
    worker.start()
    worker.join()
    return made[0]


@pytest.mark.usefixtures("low_threshold")
def test_cycles_are_freed_on_the_gui_thread_only(qapp: QApplication) -> None:
    _freed_in.clear()
    collector = MainThreadCollector(interval_ms=10)
    try:
        assert not gc.isenabled()
        ref = _cycle_from_a_thread()
        assert ref() is not None, "collected in the worker thread"
        clock = QElapsedTimer()
        clock.start()
        while ref() is not None and clock.elapsed() < 5000:
            QCoreApplication.processEvents()
        assert ref() is None
        assert _freed_in == [threading.main_thread().name]
    finally:
        collector.stop()
        collector.deleteLater()


@pytest.mark.usefixtures("low_threshold")
def test_collect_due_collects_only_when_a_threshold_is_passed() -> None:
    gc.collect()
    assert collect_due() == 0  # nothing allocated since
    ref = weakref.ref(_Node())
    _junk = [[] for _ in range(10)]
    assert collect_due() >= 1
    assert ref() is None


def test_stopping_gives_collection_back(qapp: QApplication) -> None:
    gc.enable()
    try:
        collector = MainThreadCollector()
        assert not gc.isenabled()
        collector.stop()
        assert gc.isenabled()
        collector.deleteLater()
    finally:
        gc.disable()  # as the test process runs (tests/conftest.py)
