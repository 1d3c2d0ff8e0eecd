"""The app's asyncio loop on Qt's: handles run from our :class:`CallbackTimer`, which cannot be
left with a timer that fires forever (qasync's own timer can: that failed a whole CI run, every
Qt test after one interrupted handle erroring with ``KeyError``)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QTimerEvent
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.helpers.qt import run_in_qt
from ui.event_loop import CallbackTimer


@pytest.fixture
def plain_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """A loop for ``asyncio.Handle`` to report to (handles here are run by hand)."""
    loop = asyncio.new_event_loop()
    try:
        yield loop
    finally:
        loop.close()


def interrupting(loop: asyncio.AbstractEventLoop) -> asyncio.Handle:
    """A handle whose callback is interrupted: what a test's timeout or Ctrl+C does."""

    def callback() -> None:
        raise KeyboardInterrupt

    return asyncio.Handle(callback, (), loop)


def test_the_app_loop_runs_its_handles_from_our_timer(qapp: QApplication) -> None:
    """``qt_event_loop`` really installs the timer (a qasync that moved its timer would
    silently bring the wedge back)."""

    async def scenario() -> tuple[bool, list[int]]:
        loop = asyncio.get_running_loop()
        ran: list[int] = []
        for n in range(5):
            loop.call_soon(ran.append, n)
        loop.call_later(0.01, ran.append, 5)
        await asyncio.sleep(0.05)
        return isinstance(getattr(loop, "_timer", None), CallbackTimer), ran

    ours, ran = run_in_qt(qapp, scenario)
    assert ours
    assert ran == [0, 1, 2, 3, 4, 5]


def test_a_handle_that_reenters_qt_runs_once_and_the_rest_keep_their_order(
    qapp: QApplication,
) -> None:
    """A callback that spins a nested Qt event loop (a modal dialog, ``processEvents``) does
    not run twice and does not disturb the handles scheduled after it."""

    async def scenario() -> tuple[list[str], int]:
        loop = asyncio.get_running_loop()
        timer = getattr(loop, "_timer", None)
        assert isinstance(timer, CallbackTimer)
        ran: list[str] = []

        def nested() -> None:
            ran.append("nested")
            QApplication.processEvents()
            QApplication.processEvents()

        ours = [loop.call_soon(nested), loop.call_soon(ran.append, "after")]
        await asyncio.sleep(0.05)
        still = [h for h in timer._handles.values() if any(h is o for o in ours)]
        return ran, len(still)

    ran, left = run_in_qt(qapp, scenario)
    assert ran.count("nested") == 1
    assert ran.count("after") == 1
    assert left == 0


def test_an_interrupted_handle_leaves_no_live_timer(
    qapp: QApplication, qtbot: QtBot, plain_loop: asyncio.AbstractEventLoop
) -> None:
    """The interruption reaches the caller, the timer is already dead and forgotten, and the
    next handle runs normally: nothing fires again."""
    timer = CallbackTimer()
    handle = timer.add_callback(interrupting(plain_loop))
    (timer_id,) = timer._handles
    assert timer._handles[timer_id] is handle
    with pytest.raises(KeyboardInterrupt):
        timer.timerEvent(QTimerEvent(timer_id))
    assert timer.pending == 0
    ran: list[str] = []
    timer.add_callback(asyncio.Handle(ran.append, ("next",), plain_loop))
    with qtbot.capture_exceptions() as raised:
        qtbot.waitUntil(lambda: ran == ["next"], timeout=2000)
        qtbot.wait(50)  # a live timer would have fired many times by now
    assert raised == []
    assert ran == ["next"]
    assert timer.pending == 0


def test_a_timer_event_nobody_scheduled_is_killed_not_raised(qapp: QApplication) -> None:
    """An unknown timer id is killed and ignored."""
    timer = CallbackTimer()
    timer_id = timer.startTimer(0)
    timer.timerEvent(QTimerEvent(timer_id))  # no KeyError
    assert timer.pending == 0


def test_cancelled_and_closed_handles_do_not_run(
    qtbot: QtBot, plain_loop: asyncio.AbstractEventLoop
) -> None:
    """A cancelled handle is skipped; a stopped (closed loop's) timer drops what it had."""
    timer = CallbackTimer()
    ran: list[str] = []
    cancelled = timer.add_callback(asyncio.Handle(ran.append, ("cancelled",), plain_loop))
    cancelled.cancel()
    timer.add_callback(asyncio.Handle(ran.append, ("kept",), plain_loop))
    qtbot.waitUntil(lambda: ran == ["kept"], timeout=2000)
    timer.add_callback(asyncio.Handle(ran.append, ("dropped",), plain_loop), 0.01)
    timer.stop()
    timer.add_callback(asyncio.Handle(ran.append, ("after close",), plain_loop))
    qtbot.wait(50)
    assert ran == ["kept"]
    assert timer.pending == 0


def test_qasyncs_own_timer_still_wedges(
    qapp: QApplication, qtbot: QtBot, plain_loop: asyncio.AbstractEventLoop
) -> None:
    """Why :class:`CallbackTimer` exists: qasync's timer, after the same interruption, keeps
    a timer alive that raises ``KeyError`` on every turn. When a qasync release fixes this,
    this test fails and our timer can go."""
    import qasync

    timer = qasync._SimpleTimer()
    timer.add_callback(interrupting(plain_loop))
    handles = timer._SimpleTimer__callbacks
    (timer_id,) = handles
    try:
        with pytest.raises(KeyboardInterrupt):
            timer.timerEvent(QTimerEvent(timer_id))
        with qtbot.capture_exceptions() as raised:
            qtbot.wait(50)
        assert raised, "qasync's timer no longer wedges: drop ui.event_loop.CallbackTimer"
        assert all(isinstance(exc, KeyError) for _, exc, _ in raised)
    finally:
        timer.killTimer(timer_id)
