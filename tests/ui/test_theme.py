"""Dark mode: the dark palette applies and reverts, and chat rows stay readable on it.
Screenshots of the window in both themes are saved for review."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from openclaw_desktop.chat import ChatItem, ToolCard
from tests.helpers.qt import screenshot_folder
from ui.theme import apply_theme, dark_palette
from ui.widgets.chat_delegate import bubble_colour


def contrast(a: QPalette, fg: QPalette.ColorRole, bg: QPalette.ColorRole) -> int:
    """Lightness difference between two roles."""
    return abs(a.color(fg).lightness() - a.color(bg).lightness())


def paints_dark(app: QApplication) -> bool:
    """Whether the app currently paints dark (a dark window background)."""
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def test_dark_palette_has_readable_contrast() -> None:
    """Text on every background role differs strongly in lightness."""
    palette = dark_palette()
    assert palette.color(QPalette.ColorRole.Window).lightness() < 64
    for fg, bg in [
        (QPalette.ColorRole.WindowText, QPalette.ColorRole.Window),
        (QPalette.ColorRole.Text, QPalette.ColorRole.Base),
        (QPalette.ColorRole.ButtonText, QPalette.ColorRole.Button),
        (QPalette.ColorRole.HighlightedText, QPalette.ColorRole.Highlight),
    ]:
        assert contrast(palette, fg, bg) > 100, (fg, bg)
    for role in ("user", "assistant", "tool", "error"):
        text = palette.color(QPalette.ColorRole.Text).lightness()
        assert abs(text - bubble_colour(role, palette).lightness()) > 100, role


def test_theme_switches_and_returns(
    qapp: QApplication, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """dark -> the app paints dark; light -> the original palette is back; the chat
    renders in both (screenshots under the printed folder)."""
    from ui.main_window import MainWindow
    from ui.widgets.chat_delegate import render_document

    folder: Path = screenshot_folder(tmp_path_factory, "theme")
    original = qapp.palette().color(QPalette.ColorRole.Window)
    try:
        assert apply_theme(qapp, "dark") is True
        assert paints_dark(qapp)
        window = MainWindow()
        window.show_message("OpenClaw in dark mode")
        window.show()
        window.grab().save(str(folder / "dark-window.png"))
        card = ToolCard("c", "camera_snap", "completed", 1, "ok")
        doc = render_document(ChatItem("t", "tool", tool=card), 400, qapp.palette())
        assert doc.toPlainText()
        window.close()
        assert apply_theme(qapp, "light") is False
        assert qapp.palette().color(QPalette.ColorRole.Window) == original
        assert apply_theme(qapp, "system") is paints_dark(qapp)
    finally:
        apply_theme(qapp, "light")


def test_work_starts_after_the_first_frame(qapp: QApplication, qtbot: QtBot) -> None:
    """The runtime starts once the window has painted (or after the fallback)."""
    from PySide6.QtWidgets import QLabel

    from ui.tasks import after_first_paint

    order: list[str] = []
    label = QLabel("hello")
    label.paintEvent = lambda _e: order.append("painted")  # type: ignore[method-assign]
    after_first_paint(label, lambda: order.append("started"), fallback_ms=5000)
    label.show()
    qtbot.waitUntil(lambda: "started" in order, timeout=3000)
    assert order[:2] == ["painted", "started"] and order.count("started") == 1
    hidden: list[str] = []
    never_shown = QLabel("never shown")
    after_first_paint(never_shown, lambda: hidden.append("fallback"), fallback_ms=50)
    qtbot.waitUntil(lambda: bool(hidden), timeout=2000)
    assert hidden == ["fallback"]
    label.close()
