"""Quitting like a desktop app and the window's menus (offscreen; the journeys do the same
with a real X session and tray): what is under way, the close button with and without a tray,
the question before quitting, and the File / View / Help entries."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMenu, QMessageBox
from pytestqt.qtbot import QtBot

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.sdk.events import Event
from tests.helpers.qt import run_in_qt
from ui.main_window import MainWindow
from ui.menus import THEMES, MenuActions, build_menus, run_doctor
from ui.quitting import CLOSED_TO_TRAY, QuitFlow, Unfinished, notice_once, unfinished


def test_nothing_under_way_is_nothing_to_ask_about() -> None:
    assert unfinished([]) is None
    assert unfinished([ChatTimeline("main")]) is None


def test_a_reply_under_way_and_waiting_messages_are_counted() -> None:
    first = ChatTimeline("main")
    first.send("r1", "hello")
    first.apply(Event("e1", 0, "run.started", run_id="r1", session_key="main"))  # under way
    first.send("r2", "and then")  # queued behind it
    second = ChatTimeline("side")
    second.send("r4", "hi")
    second.apply(Event("e2", 0, "run.started", run_id="r4", session_key="side"))
    other = ChatTimeline("work")
    other.send("r3", "offline")
    other.waiting("r3")
    what = unfinished([first, second, other])
    assert what == Unfinished(streaming=2, waiting=2)
    assert what.question().startswith("2 replies are still streaming and 2 messages")
    assert Unfinished(1, 0).question() == (
        "A reply is still streaming. Quit anyway? What has not arrived is lost."
    )
    assert Unfinished(0, 1).question().startswith("1 message has not reached the gateway")


def test_a_message_waiting_for_the_gateway_is_no_reply_streaming() -> None:
    """Its run is the timeline's next, but nothing streams until the gateway has it."""
    timeline = ChatTimeline("main")
    timeline.send("r1", "typed while the gateway was away")
    timeline.waiting("r1")
    assert timeline.active_run == "r1"
    what = unfinished([timeline])
    assert what == Unfinished(streaming=0, waiting=1)
    assert what.question() == (
        "1 message has not reached the gateway yet. Quit anyway? What has not arrived is lost."
    )


def test_the_notice_shows_once(tmp_path: Path) -> None:
    marker = tmp_path / "state" / "closed-to-tray-notice"
    assert notice_once(marker) is True
    assert notice_once(marker) is False


class Harness:
    """A main window with a QuitFlow over given timelines."""

    def __init__(self, qtbot: QtBot, tmp_path: Path, *, tray: bool) -> None:
        self.window = MainWindow()
        qtbot.addWidget(self.window)
        self.timelines: list[ChatTimeline] = []
        self.notices: list[tuple[str, str]] = []
        self.quits = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.flow = QuitFlow(
            self.window,
            has_tray=lambda: tray,
            timelines=lambda: self.timelines,
            notify=lambda title, text: self.notices.append((title, text)),
            marker=tmp_path / "notice",
            spawn=self._spawn,
        )
        self.flow.on_quit.append(self._quit)
        self.window.show()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def _quit(self) -> None:
        self.quits += 1


def question() -> QMessageBox | None:
    for widget in QApplication.topLevelWidgets():
        if (
            isinstance(widget, QMessageBox)
            and widget.objectName() == "quit-question"
            and widget.isVisible()
        ):
            return widget
    return None


async def until(check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.02)


def test_without_a_tray_closing_an_idle_window_quits(qtbot: QtBot, tmp_path: Path) -> None:
    h = Harness(qtbot, tmp_path, tray=False)
    assert h.window.close()
    assert not h.window.isVisible() and h.quits == 1 and h.notices == []


def test_with_a_tray_closing_hides_and_says_where_once(qtbot: QtBot, tmp_path: Path) -> None:
    h = Harness(qtbot, tmp_path, tray=True)
    assert not h.window.close()
    assert h.window.isHidden() and h.quits == 0
    assert h.notices == [CLOSED_TO_TRAY]
    h.window.show()
    h.window.close()
    assert h.window.isHidden() and h.quits == 0 and h.notices == [CLOSED_TO_TRAY]
    h.flow.request_quit()  # the tray's Quit
    assert h.quits == 1


def test_quitting_while_a_reply_streams_asks_first(
    qapp: QApplication, qtbot: QtBot, tmp_path: Path
) -> None:
    h = Harness(qtbot, tmp_path, tray=False)
    timeline = ChatTimeline("main")
    timeline.send("r1", "hello")
    timeline.apply(Event("e1", 0, "run.started", run_id="r1", session_key="main"))
    h.timelines.append(timeline)

    async def scenario() -> None:
        assert not h.window.close()  # the close button asks instead
        await until(lambda: question() is not None, "the question")
        box = question()
        assert box is not None
        assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
        assert "streaming" in box.text()
        h.flow.request_quit()  # Ctrl+Q again while asked: still one question
        box.button(QMessageBox.StandardButton.Cancel).click()
        await until(lambda: question() is None, "the question closes")
        await asyncio.sleep(0.05)
        assert h.quits == 0 and h.window.isVisible()

        h.flow.request_quit()
        await until(lambda: question() is not None, "the question again")
        box = question()
        assert box is not None
        [quit_button] = [b for b in box.buttons() if b.text() == "Quit"]
        quit_button.click()
        await until(lambda: h.quits == 1, "the quit")
        assert not h.window.isVisible()

    run_in_qt(qapp, scenario, timeout=30)


def _actions(calls: list[str], logs: Path, theme: list[str]) -> MenuActions:
    return MenuActions(
        new_session=lambda: calls.append("new"),
        connect_gateway=lambda: calls.append("connect"),
        pair_phone=lambda: calls.append("pair"),
        settings=lambda: calls.append("settings"),
        quit=lambda: calls.append("quit"),
        doctor=lambda: calls.append("doctor"),
        theme=lambda: theme[-1],
        set_theme=theme.append,
        logs=logs,
    )


def test_the_menus(qtbot: QtBot, tmp_path: Path) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    calls: list[str] = []
    theme = ["dark"]
    menus = build_menus(window, _actions(calls, tmp_path / "logs", theme))
    titles = [a.text() for a in window.menuBar().actions()]
    assert titles == ["&File", "&View", "&Help"]
    file_entries = [a.text() for a in menus.file.actions() if not a.isSeparator()]
    assert file_entries == [
        "&New session",
        "&Connect to another gateway…",
        "&Pair a phone…",
        "&Settings…",
        "&Quit",
    ]
    assert "Ctrl+Q" in [k.toString() for k in menus.quit.shortcuts()]
    assert "Ctrl+N" in [k.toString() for k in menus.new_session.shortcuts()]
    for action in menus.file.actions():
        action.trigger()
    assert calls == ["new", "connect", "pair", "settings", "quit"]
    help_entries = [a.text() for a in menus.help.actions()]
    assert help_entries == [
        "&About OpenClaw Desktop",
        "&Doctor: what works here",
        "Open the &logs folder",
    ]

    # View: the docks there are (a closed one comes back from here) and the theme.
    dock = QDockWidget("Activity", window)
    dock.setWidget(QLabel("activity"))
    window.addDockWidget(window.dockWidgetArea(dock), dock)
    menus.view.aboutToShow.emit()
    [toggle] = [a for a in menus.view.actions() if a.text() == "Activity"]
    window.show()
    dock.close()
    assert not dock.isVisible()
    toggle.trigger()
    assert dock.isVisible()
    [theme_menu] = [a.menu() for a in menus.view.actions() if a.text() == "&Theme"]
    assert isinstance(theme_menu, QMenu)
    choices = {a.text(): a for a in theme_menu.actions()}
    assert list(choices) == list(THEMES)
    assert choices["Dark"].isChecked() and not choices["System"].isChecked()
    choices["Light"].trigger()
    assert theme == ["dark", "light"]


def test_the_doctor_reports_what_works_here(
    qapp: QApplication, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    report = run_in_qt(qapp, run_doctor, timeout=90)
    assert "identity:" in report and "node commands" in report, report
    assert " WARNING " not in report, report  # its findings, without its log lines


def test_a_failing_doctor_shows_why(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = [sys.executable, "-c", "import sys; print('half a report'); sys.exit('no luck')"]
    monkeypatch.setattr("ui.menus.doctor_argv", lambda: failing)
    report = run_in_qt(qapp, run_doctor, timeout=60)
    assert report.splitlines() == ["half a report", "", "exit code 1", "", "no luck"], report
