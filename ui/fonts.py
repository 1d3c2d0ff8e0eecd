"""The monospace font (fingerprints, commands, tool output), chosen by what the glyphs do.

Qt's answer to "is this font fixed pitch" comes from a flag in the font file, and some
monospace fonts do not set it (Noto Sans Mono: Qt calls it proportional). So the font is
picked by measuring: a font is monospace when ``i``, ``l``, ``.``, ``M`` and ``W`` advance
the same width. The system's fixed font comes first; then common monospace families; then
any family the font database calls fixed pitch.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase, QFontMetricsF

__all__ = ["is_monospace", "mono_font"]

#: Tried in order when the system's fixed font is not monospace.
CANDIDATES = (
    "monospace",
    "DejaVu Sans Mono",
    "Noto Sans Mono",
    "Noto Mono",
    "Liberation Mono",
    "Ubuntu Mono",
    "Cascadia Mono",
    "Consolas",
    "Menlo",
    "Courier New",
    "Courier",
)
_PROBE = "il.MW0"

_chosen: QFont | None = None


def is_monospace(font: QFont) -> bool:
    """Whether every glyph of a probe string advances the same width in ``font``."""
    metrics = QFontMetricsF(font)
    widths = [metrics.horizontalAdvance(c) for c in _PROBE]
    return widths[0] > 0 and max(widths) - min(widths) < 0.01


def _family(family: str, like: QFont) -> QFont:
    font = QFont(family)
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    if like.pointSizeF() > 0:
        font.setPointSizeF(like.pointSizeF())
    return font


def _pick() -> QFont:
    system = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if is_monospace(system):
        return system
    for family in CANDIDATES:
        font = _family(family, system)
        if is_monospace(font):
            return font
    for family in QFontDatabase.families():
        if QFontDatabase.isFixedPitch(family):
            font = _family(family, system)
            if is_monospace(font):
                return font
    return system  # no monospace font at all: the system's choice is the best there is


def mono_font() -> QFont:
    """A monospace font at the system's fixed-font size (a copy: callers may change it).
    Needs a QGuiApplication; chosen once."""
    global _chosen
    if _chosen is None:
        _chosen = _pick()
    return QFont(_chosen)
