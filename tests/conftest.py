"""Session-wide clean-up shared by every test folder."""

from __future__ import annotations

import os

import pytest

# Qt tests draw offscreen unless told otherwise (./dev test says so too; journeys start
# their own X server and pass its display to the app they launch).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close the UI tests' qasync loops before Python exits (their QThread executors would
    otherwise abort the process after the run)."""
    import sys

    qt_helpers = sys.modules.get("tests.helpers.qt")
    if qt_helpers is not None:
        qt_helpers.close_loops()
