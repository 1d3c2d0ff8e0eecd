"""Paints chat rows: Markdown (code blocks in a monospace box) for messages, compact cards
for tool calls, user messages on the right. Only visible rows are laid out and painted, so a
long session stays smooth."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from openclaw_desktop.chat import ChatItem
from ui.widgets.chat_model import ITEM_ROLE, item_text

__all__ = ["ChatDelegate", "render_document"]

_MARGIN = 8
_BUBBLE_SHARE = 0.82
_CACHE_LIMIT = 2_000


def render_document(item: ChatItem, width: float, palette: QPalette) -> QTextDocument:
    """The laid-out document of one row at ``width``."""
    doc = QTextDocument()
    doc.setDocumentMargin(_MARGIN)
    mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    base = palette.color(QPalette.ColorRole.AlternateBase).name()
    doc.setDefaultStyleSheet(f"pre, code {{ font-family: '{mono.family()}'; background: {base}; }}")
    text = item_text(item)
    if item.role in ("assistant", "user", "note"):
        doc.setMarkdown(text)
    else:
        doc.setPlainText(text)
        doc.setDefaultFont(mono)
    doc.setTextWidth(width)
    return doc


class ChatDelegate(QStyledItemDelegate):
    """Markdown rows with a width-keyed layout cache."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._cache: dict[tuple[str, str, str, int], QTextDocument] = {}

    def _doc(self, item: ChatItem, width: int, palette: QPalette) -> QTextDocument:
        key = (item.key, item.status, item_text(item), width)
        doc = self._cache.get(key)
        if doc is None:
            if len(self._cache) > _CACHE_LIMIT:
                self._cache.clear()
            doc = render_document(item, width, palette)
            self._cache[key] = doc
        return doc

    def _bubble_width(self, option: QStyleOptionViewItem) -> int:
        return max(120, int(option.rect.width() * _BUBBLE_SHARE))

    def sizeHint(  # noqa: N802
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        """Qt: the row's height at the view's width."""
        item = index.data(ITEM_ROLE)
        if not isinstance(item, ChatItem):
            return super().sizeHint(option, index)
        doc = self._doc(item, self._bubble_width(option), option.palette)
        return QSize(option.rect.width(), int(doc.size().height()) + _MARGIN)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        """Qt: draw the bubble and its document."""
        item = index.data(ITEM_ROLE)
        if not isinstance(item, ChatItem):
            super().paint(painter, option, index)
            return
        rect = option.rect
        palette: QPalette = option.palette
        width = self._bubble_width(option)
        doc = self._doc(item, width, palette)
        height = doc.size().height()
        left = rect.right() - width if item.role == "user" else rect.left()
        bubble = QRectF(left, rect.top() + _MARGIN / 2, width, height)
        colour = {
            "user": palette.color(QPalette.ColorRole.Highlight).lighter(180),
            "tool": palette.color(QPalette.ColorRole.AlternateBase),
            "error": QColor("#ffe3e3"),
        }.get(item.role, palette.color(QPalette.ColorRole.Base))
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(colour)
        painter.drawRoundedRect(bubble, 8, 8)
        painter.translate(bubble.topLeft())
        doc.drawContents(painter)
        painter.restore()
        if option.state & QStyle.StateFlag.State_HasFocus:
            painter.save()
            painter.setPen(Qt.PenStyle.DotLine)
            painter.drawRect(bubble)
            painter.restore()
