"""What every test folder shares: the kind marker each folder gives its tests, the
environment of the run (bundled gateways check the events and answers they send against the
protocol's models, and a test fails when one in its process does not fit) and the
session-wide clean-up."""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from ui.collector import collect_due

# Qt tests draw offscreen unless told otherwise (./dev test says so too; journeys start
# their own X server and pass its display to the app they launch).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every bundled gateway of the run (in this process or a subprocess, which inherits it)
# checks each event it sends against its protocol model and logs a misfit at ERROR, which
# the tests that watch the gateway's errors fail on (gateway.wire_check.check_event).
os.environ.setdefault("OPENCLAW_GATEWAY_CHECK_EVENTS", "1")
# ... and each answer against its method's result model (gateway.wire_check.check_result).
os.environ.setdefault("OPENCLAW_GATEWAY_CHECK_RESULTS", "1")


def pytest_configure(config: pytest.Config) -> None:
    """No automatic garbage collection in the test process: CPython would run it in
    whichever thread allocates (a PortAudio callback, a capture worker), and a Qt object
    freed there crashes the whole run (a segmentation fault while "Garbage-collecting",
    seen once). The due generations are collected between tests on the main thread, as the
    app collects them on its GUI thread (:mod:`ui.collector`)."""
    gc.disable()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Collect what is due after each test, on the main thread."""
    collect_due()


#: Seconds spent per test module (setup, call and teardown), for the end-of-run summary.
_MODULE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up the time of each test module's phases."""
    module = report.nodeid.split("::", 1)[0]
    _MODULE_SECONDS[module] = _MODULE_SECONDS.get(module, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Where the run's time went, per test folder and for the slowest modules: the figures
    CI-time work starts from (a CI log shows them, not the JUnit record)."""
    if len(_MODULE_SECONDS) < 2:
        return
    folders: dict[str, float] = {}
    for module, seconds in _MODULE_SECONDS.items():
        folder = "/".join(module.split("/")[:2])
        folders[folder] = folders.get(folder, 0.0) + seconds
    terminalreporter.section("time per test folder and slowest modules")
    for folder, seconds in sorted(folders.items(), key=lambda item: -item[1]):
        terminalreporter.write_line(f"{seconds:8.0f} s  {folder}")
    slowest = sorted(_MODULE_SECONDS.items(), key=lambda item: -item[1])[:25]
    for module, seconds in slowest:
        terminalreporter.write_line(f"{seconds:8.0f} s  {module}")


class _MisfitRecorder(logging.Handler):
    """Keeps the log records of payloads outside their protocol model (``wire_misfit``)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.misfits: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "wire_misfit", False):
            self.misfits.append(record.getMessage())


@pytest.fixture(autouse=True)
def wire_misfits() -> Iterator[list[str]]:
    """Fail a test during which a bundled gateway in this process sent an event or an
    answer that does not fit its model (a gateway in a subprocess logs it at ERROR, which
    the tests that read its log fail on). A test that provokes misfits on purpose asks for
    this fixture and clears the list it yields."""
    recorder = _MisfitRecorder()
    loggers = [logging.getLogger(name) for name in ("gateway.wire",)]
    for logger in loggers:
        logger.addHandler(recorder)
    try:
        yield recorder.misfits
    finally:
        for logger in loggers:
            logger.removeHandler(recorder)
    if recorder.misfits:
        pytest.fail(
            "the gateway sent outside the protocol's models:\n" + "\n".join(recorder.misfits)
        )


_HERE = Path(__file__).resolve().parent
#: The kind of test each top folder holds: its tests get the marker (``-m "not interop"``
#: selects by folder), and only from here: a test that marks its own folder's kind by hand
#: is an error. A test may add a kind (a journey on the real gateway is ``interop`` too),
#: but a unit test is only that: ``unit`` outside ``tests/unit`` or another kind inside it
#: is an error.
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
        marked = {m.name for m in item.iter_markers() if m.name in _KINDS}
        other = marked - {kind}
        if other and (kind == "unit" or "unit" in other):
            wrong.append(f"{item.nodeid}: marked {', '.join(sorted(other))} in a {kind} folder")
        if kind in marked:
            wrong.append(f"{item.nodeid}: marked {kind} by hand (its folder gives it)")
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
