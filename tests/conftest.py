"""What every test folder shares: the kind marker each folder gives its tests, the
environment of the run (bundled gateways check the events they send) and the session-wide
clean-up."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt tests draw offscreen unless told otherwise (./dev test says so too; journeys start
# their own X server and pass its display to the app they launch).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every bundled gateway of the run (in this process or a subprocess, which inherits it)
# checks each event it sends against its protocol model and logs a misfit at ERROR, which
# the tests that watch the gateway's errors fail on (gateway.hub.check_event).
os.environ.setdefault("OPENCLAW_GATEWAY_CHECK_EVENTS", "1")


_HERE = Path(__file__).resolve().parent
#: The kind of test each top folder holds: its tests get the marker (``-m "not interop"``
#: selects by folder). A test may add a kind (a journey on the real gateway is ``interop``
#: too), but a unit test is only that: ``unit`` outside ``tests/unit`` or another kind
#: inside it is an error.
FOLDER_MARKERS = {
    "unit": "unit",
    "integration": "integration",
    "interop": "interop",
    "ui": "ui",
    "journeys": "journey",
    "bundle": "bundle",
}
_KINDS = frozenset(FOLDER_MARKERS.values())


def folder_kind(path: Path) -> str | None:
    """The kind marker of a test file by its top folder under ``tests/`` (None: not a test
    folder, e.g. ``tests/helpers``)."""
    try:
        top = path.resolve().relative_to(_HERE).parts[0]
    except (ValueError, IndexError):
        return None
    return FOLDER_MARKERS.get(top)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its folder's kind; refuse a unit test that is not pure."""
    wrong: list[str] = []
    for item in items:
        kind = folder_kind(item.path)
        if kind is None:
            continue
        other = {m.name for m in item.iter_markers() if m.name in _KINDS} - {kind}
        if other and (kind == "unit" or "unit" in other):
            wrong.append(f"{item.nodeid}: marked {', '.join(sorted(other))} in a {kind} folder")
        item.add_marker(getattr(pytest.mark, kind))
    if wrong:
        raise pytest.UsageError("tests marked against their folder:\n" + "\n".join(wrong))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Close the UI tests' qasync loops before Python exits (their QThread executors would
    otherwise abort the process after the run)."""
    import sys

    qt_helpers = sys.modules.get("tests.helpers.qt")
    if qt_helpers is not None:
        qt_helpers.close_loops()
