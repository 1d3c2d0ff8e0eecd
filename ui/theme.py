"""Light and dark colours. ``system`` follows the desktop's colour scheme (and its changes
while running); ``light`` and ``dark`` force one. Dark uses the Fusion style with a palette
of our own, so it looks the same on every platform and under the offscreen test platform."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

__all__ = ["apply_theme", "dark_palette", "follow_system"]

_ORIGINAL: dict[int, tuple[str, QPalette]] = {}
_CHOICE: dict[int, str] = {}


def dark_palette() -> QPalette:
    """A dark palette with readable contrast for every role the app paints with."""
    colours = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#181a1b",
        QPalette.ColorRole.AlternateBase: "#2a2d30",
        QPalette.ColorRole.ToolTipBase: "#2a2d30",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2d3034",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#3d7bd9",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#8ab4f8",
        QPalette.ColorRole.Mid: "#3c4043",
        QPalette.ColorRole.Dark: "#111214",
        QPalette.ColorRole.Light: "#3c4043",
    }
    palette = QPalette()
    for role, colour in colours.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f7378"))
    return palette


def system_prefers_dark() -> bool:
    """Whether the desktop asks for dark colours (unknown counts as light)."""
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, choice: str) -> bool:
    """Apply ``system`` / ``light`` / ``dark``; returns whether the result is dark."""
    key = id(app)
    if key not in _ORIGINAL:
        style = app.style().name() if app.style() is not None else ""
        _ORIGINAL[key] = (style, QPalette(app.palette()))
    dark = choice == "dark" or (choice == "system" and system_prefers_dark())
    if dark:
        app.setStyle("Fusion")
        app.setPalette(dark_palette())
    else:
        style, palette = _ORIGINAL[key]
        if style:
            app.setStyle(style)
        app.setPalette(palette)
    return dark


def follow_system(app: QApplication, choice: str) -> None:
    """Apply ``choice`` now; while it is ``system``, apply again whenever the desktop's
    scheme flips (safe to call again when the user changes the setting)."""
    key = id(app)
    first = key not in _CHOICE
    _CHOICE[key] = choice
    apply_theme(app, choice)
    if first:
        QGuiApplication.styleHints().colorSchemeChanged.connect(
            lambda _scheme: apply_theme(app, "system") if _CHOICE.get(key) == "system" else None
        )
