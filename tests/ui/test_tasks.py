"""Closing a window cancels its background tasks and waits for them, boundedly: a task that
ignores its cancel is named in the log and left behind instead of holding up the quit, and
the closer's own cancel is not swallowed."""

from __future__ import annotations

import asyncio
import contextlib
import logging

import pytest
from PySide6.QtWidgets import QApplication

from tests.helpers.qt import run_in_qt
from ui.tasks import TaskSet


async def stubborn(release: asyncio.Event) -> None:
    """Carries on after its first cancel (what a ``wait_for`` on 3.11 could do)."""
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(60)
    await release.wait()


def test_a_task_that_ignores_its_cancel_does_not_hold_up_closing(
    qapp: QApplication, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> tuple[bool, bool, float]:
        tasks = TaskSet()
        release = asyncio.Event()
        tasks.spawn(stubborn(release), name="stubborn")
        tasks.spawn(asyncio.sleep(60))
        await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        await tasks.cancel(grace_s=0.2)
        took = loop.time() - started
        left = [t for t in asyncio.all_tasks() if t.get_name() == "stubborn"]
        release.set()
        await asyncio.gather(*left)
        return bool(left), all(t.done() for t in left), took

    with caplog.at_level(logging.WARNING, logger="openclaw.ui"):
        was_left, ended_later, took = run_in_qt(qapp, scenario)
    assert was_left and ended_later
    assert took < 30, "closing waited for the stubborn task"
    assert "task stubborn did not stop within 0.2 s" in caplog.text


def test_the_closers_own_cancel_reaches_it(qapp: QApplication) -> None:
    async def scenario() -> bool:
        tasks = TaskSet()
        release = asyncio.Event()
        tasks.spawn(stubborn(release), name="stubborn")
        await asyncio.sleep(0)
        closer = asyncio.ensure_future(tasks.cancel(grace_s=30))
        await asyncio.sleep(0.05)
        closer.cancel()
        try:
            await closer
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        release.set()
        await asyncio.sleep(0.05)
        return cancelled

    assert run_in_qt(qapp, scenario)
