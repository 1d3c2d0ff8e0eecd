"""Running async UI scenarios on qasync, and where UI screenshots go."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtWidgets import QApplication

from tests.helpers.no_keyring import no_keyring

__all__ = ["close_loops", "run_in_qt", "screenshot_folder", "shot", "window_home"]

T = TypeVar("T")

#: One qasync loop per QApplication: qasync's timers do not survive a second loop created
#: and closed on the same application.
_LOOPS: dict[int, asyncio.AbstractEventLoop] = {}


def run_in_qt(
    qapp: QApplication, scenario: Callable[[], Coroutine[Any, Any, T]], timeout: float = 90
) -> T:
    """Run ``scenario`` on the qasync loop of the test's QApplication, bounded. Closing a
    window does not stop the loop while it runs."""
    from ui.event_loop import qt_event_loop

    loop = _LOOPS.get(id(qapp))
    if loop is None:
        loop = qt_event_loop(qapp)
        _LOOPS[id(qapp)] = loop
    asyncio.set_event_loop(loop)
    quit_on_close = qapp.quitOnLastWindowClosed()
    qapp.setQuitOnLastWindowClosed(False)
    try:
        result: T = loop.run_until_complete(_bounded(scenario, timeout))
        return result
    finally:
        qapp.setQuitOnLastWindowClosed(quit_on_close)
        asyncio.set_event_loop(None)


async def _bounded(scenario: Callable[[], Coroutine[Any, Any, T]], timeout: float) -> T:
    """``scenario()`` within ``timeout`` s. Not ``wait_for``: on 3.11 it can return the
    result of a scenario that swallowed the cancellation, hiding a hang as a slow pass."""
    async with asyncio.timeout(timeout) as deadline:
        result = await scenario()
    if deadline.expired():  # it was cancelled at the deadline and carried on regardless
        raise TimeoutError(f"the scenario ran past its {timeout:g} s and ignored the cancel")
    return result


def screenshot_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """``$OPENCLAW_UI_ARTIFACTS/<name>`` or a temp folder; printed, so a reviewer finds it."""
    base = os.environ.get("OPENCLAW_UI_ARTIFACTS")
    folder = Path(base) / name if base else tmp_path_factory.mktemp(f"{name}-screens")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\nUI screenshots ({name}): {folder}")
    return folder


@pytest.fixture(autouse=True)
def window_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The window's home under the test's folder, its secrets in the 0600 file fallback:
    never a keyring some earlier test (or the developer's desktop) made the default.

    Autouse in the modules that import it (``from tests.helpers.qt import window_home``).
    """
    home = tmp_path / "home"
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(home))
    with no_keyring():
        yield home


def shot(window: Any, path: Path) -> None:
    """Save a screenshot of ``window`` (a ``MainWindow``) with its chat up to date (the
    view catches up with the timeline on a timer)."""
    chat = getattr(window, "chat", None)
    if chat is not None:
        chat.flush()
    window.grab().save(str(path))


def close_loops() -> None:
    """Close the qasync loops (their executor threads are QThreads: one still running when
    Python exits makes Qt abort the process, failing a run whose tests all passed)."""
    for loop in list(_LOOPS.values()):
        if not loop.is_closed() and not loop.is_running():
            loop.close()
    _LOOPS.clear()
