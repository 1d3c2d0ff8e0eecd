"""The window's menu bar: File (New session, Connect to another gateway, Pair a phone,
Settings, Quit), View (the docks, the theme) and Help (About, Doctor, the logs folder).

The app hands in what each entry does (:class:`MenuActions`); this module only builds the
menus and the About and Doctor windows (the log file the logs folder holds is
:func:`openclaw_desktop.log.log_to_folder`'s).
"""

from __future__ import annotations

import asyncio
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QActionGroup, QDesktopServices, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QMainWindow,
    QMenu,
    QMenuBar,
    QMessageBox,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop import __version__
from ui.fonts import mono_font

__all__ = [
    "THEMES",
    "MenuActions",
    "Menus",
    "about_text",
    "build_menus",
    "run_doctor",
]

#: Theme choices of the View menu (``ui.theme``), label -> value.
THEMES = {"System": "system", "Light": "light", "Dark": "dark"}
DOCTOR_TIMEOUT_S = 60.0


@dataclass
class MenuActions:
    """What the menu entries do (each a plain callable; the app spawns its coroutines)."""

    new_session: Callable[[], None]
    connect_gateway: Callable[[], None]
    pair_phone: Callable[[], None]
    settings: Callable[[], None]
    quit: Callable[[], None]
    doctor: Callable[[], None]
    theme: Callable[[], str]
    set_theme: Callable[[str], None]
    logs: Path


@dataclass
class Menus:
    """The menus and the entries tests and journeys look for."""

    file: QMenu
    view: QMenu
    help: QMenu
    quit: QAction
    new_session: QAction


def _entry(menu: QMenu, text: str, slot: Callable[[], object], name: str) -> QAction:
    action = menu.addAction(text)
    action.setObjectName(name)
    action.triggered.connect(lambda _checked=False: slot())
    return action


def _keys(standard: QKeySequence.StandardKey, fallback: str) -> list[QKeySequence]:
    """The platform's keys for ``standard``, and ``fallback`` where the platform has none
    (Qt's generic themes bind no Quit key)."""
    keys = QKeySequence.keyBindings(standard)
    return keys or [QKeySequence(fallback)]


def _submenu(parent: QMenuBar | QMenu, title: str) -> QMenu:
    """A menu named for assistive technology by its title (Qt names an open menu after the
    application otherwise: a screen reader said "OpenClaw Desktop" for File)."""
    menu = parent.addMenu(title)
    menu.setAccessibleName(title.replace("&", ""))
    return menu


def build_menus(window: QMainWindow, actions: MenuActions) -> Menus:
    """Fill ``window``'s menu bar."""
    bar = window.menuBar()
    bar.setAccessibleName("Menu bar")
    file = _submenu(bar, "&File")
    new_session = _entry(file, "&New session", actions.new_session, "new-session")
    new_session.setShortcuts(_keys(QKeySequence.StandardKey.New, "Ctrl+N"))
    _entry(file, "&Connect to another gateway…", actions.connect_gateway, "connect-gateway")
    _entry(file, "&Pair a phone…", actions.pair_phone, "pair-phone")
    file.addSeparator()
    _entry(file, "&Settings…", actions.settings, "settings")
    file.addSeparator()
    quit_action = _entry(file, "&Quit", actions.quit, "quit")
    quit_action.setShortcuts(_keys(QKeySequence.StandardKey.Quit, "Ctrl+Q"))
    quit_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    quit_action.setMenuRole(QAction.MenuRole.QuitRole)

    view = _submenu(bar, "&View")
    view.aboutToShow.connect(lambda: _fill_view(view, window, actions))
    _fill_view(view, window, actions)

    help_menu = _submenu(bar, "&Help")
    _entry(help_menu, "&About OpenClaw Desktop", lambda: show_about(window), "about")
    _entry(help_menu, "&Doctor: what works here", actions.doctor, "doctor")
    _entry(help_menu, "Open the &logs folder", lambda: open_folder(actions.logs), "logs")
    return Menus(file, view, help_menu, quit_action, new_session)


def _fill_view(view: QMenu, window: QMainWindow, actions: MenuActions) -> None:
    """The docks there are now (each can be brought back once closed) and the theme."""
    view.clear()
    docks = [d for d in window.findChildren(QDockWidget) if d.parent() is window]
    for dock in sorted(docks, key=lambda d: d.windowTitle()):
        view.addAction(dock.toggleViewAction())
    if not docks:
        view.addAction("(no panels yet)").setEnabled(False)
    view.addSeparator()
    theme = _submenu(view, "&Theme")
    group = QActionGroup(theme)
    current = actions.theme()
    for label, value in THEMES.items():
        action = theme.addAction(label)
        action.setCheckable(True)
        action.setChecked(value == current)
        action.triggered.connect(lambda _checked=False, v=value: actions.set_theme(v))
        group.addAction(action)


def about_text() -> str:
    """Version and platform facts for the About box (and bug reports)."""
    from PySide6.QtCore import qVersion

    return (
        f"OpenClaw Desktop {__version__}\n\n"
        "The desktop client and node for OpenClaw gateways, with a bundled gateway.\n\n"
        f"Python {platform.python_version()} · PySide6 {pyside_version} · Qt {qVersion()}\n"
        f"{platform.system()} {platform.release()}"
    )


def show_about(parent: QWidget) -> QMessageBox:
    """Help > About (not modal: the chat goes on behind it)."""
    box = QMessageBox(QMessageBox.Icon.Information, "About OpenClaw Desktop", about_text())
    box.setParent(parent, box.windowFlags())
    box.setObjectName("about")
    box.setAccessibleName("About OpenClaw Desktop")
    box.open()
    return box


def doctor_argv() -> list[str]:
    """``openclaw-desktop doctor`` as a command (the frozen bundle runs itself)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "doctor"]
    return [sys.executable, "-m", "ui.launcher", "doctor"]


async def run_doctor() -> str:
    """The doctor's report (run as the CLI runs it: its own process, bounded in time)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *doctor_argv(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        return f"The doctor could not start: {exc}"
    try:
        async with asyncio.timeout(DOCTOR_TIMEOUT_S):
            out, err = await proc.communicate()
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return f"The doctor did not finish within {DOCTOR_TIMEOUT_S:g} s."
    # The report is what it found; its log lines (a warning the report also states in
    # words) only when it failed, where they say why.
    report = out.decode(errors="replace").strip()
    if proc.returncode != 0:
        log = err.decode(errors="replace").strip()
        report = "\n\n".join(p for p in (report, f"exit code {proc.returncode}", log) if p)
    return report or "(no output)"


def show_report(parent: QWidget, title: str, text: str) -> QDialog:
    """A read-only text window (the doctor's report)."""
    dialog = QDialog(parent)
    dialog.setObjectName("doctor")
    dialog.setWindowTitle(title)
    dialog.setAccessibleName(title)
    view = QPlainTextEdit(dialog)
    view.setObjectName("report")
    view.setAccessibleName("Report")
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    view.setFont(mono_font())
    view.setPlainText(text)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(view)
    layout.addWidget(buttons)
    dialog.resize(760, 420)
    dialog.open()
    return dialog


def open_folder(folder: Path) -> bool:
    """Show ``folder`` in the file manager (created first if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))
