"""Paints chat rows: Markdown with coloured code blocks and inline images for messages,
compact cards for tool calls, user messages on the right. Only visible rows are laid out and
painted, so a long session stays smooth."""

from __future__ import annotations

import base64
import binascii
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QByteArray, QModelIndex, QPersistentModelIndex, QRectF, QSize, Qt, QUrl
from PySide6.QtGui import (
    QColor,
    QImage,
    QPainter,
    QPalette,
    QTextCursor,
    QTextDocument,
    QTextImageFormat,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from openclaw_desktop.chat import ChatItem
from ui.fonts import mono_font
from ui.widgets.chat_model import ITEM_ROLE, item_text, row_signature
from ui.widgets.highlight import CodeHighlighter
from ui.widgets.markdown import SafeDocument, fits, render_markdown, render_plain

__all__ = [
    "THUMBNAIL",
    "ChatDelegate",
    "bubble_colour",
    "decode_image",
    "render_document",
]

_MARGIN = 8
_BUBBLE_SHARE = 0.82
_CACHE_LIMIT = 2_000
_THUMB_LIMIT = 200
#: Inline images are shown at most this big (click-free: the chat is a list, not a viewer).
THUMBNAIL = QSize(360, 270)


def decode_image(image: dict[str, Any]) -> QImage | None:
    """A message's image block as a thumbnail, or None when it does not decode."""
    data = image.get("data")
    if not isinstance(data, str):
        return None
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    picture = QImage.fromData(QByteArray(raw))
    if picture.isNull():
        return None
    if picture.width() > THUMBNAIL.width() or picture.height() > THUMBNAIL.height():
        picture = picture.scaled(
            THUMBNAIL,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    return picture


def render_document(
    item: ChatItem,
    width: float,
    palette: QPalette,
    thumbnails: list[QImage | None] | None = None,
) -> QTextDocument:
    """The laid-out document of one row at ``width`` (images under the text). Model text is
    Markdown without HTML and loads nothing (:mod:`ui.widgets.markdown`); the only pictures
    are the item's own images (attachments, tool results)."""
    doc = SafeDocument()
    doc.setDocumentMargin(_MARGIN)
    text = item_text(item)
    if item.role in ("assistant", "user", "note"):
        if render_markdown(doc, text, palette):  # else too complex: shown as plain text
            highlighter = CodeHighlighter(doc, palette)  # owned by the document
            highlighter.rehighlight()  # now, not on the next loop turn: the row paints at once
            doc.setTextWidth(width)
            if not fits(doc, width):  # a table with more columns than the bubble has room
                doc.clear()
                render_plain(doc, text)
    else:
        render_plain(doc, text, mono_font())
    pictures = thumbnails if thumbnails is not None else [decode_image(i) for i in item.images]
    if any(p is not None for p in pictures):
        _add_pictures(doc, pictures, width - 2 * _MARGIN, after_text=bool(text))
    if doc.textWidth() != width:  # setting it again lays the whole document out again
        doc.setTextWidth(width)
    return doc


def _add_pictures(
    doc: QTextDocument, pictures: list[QImage | None], room: float, *, after_text: bool
) -> None:
    """The item's own images under its text, no wider than the bubble."""
    cursor = QTextCursor(doc)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    for index, picture in enumerate(pictures):
        if picture is None:
            cursor.insertText(" [image that could not be shown] ")
            continue
        name = f"chat-image:{index}"
        doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), picture)
        scale = min(1.0, max(1.0, room) / max(1, picture.width()))
        fmt = QTextImageFormat()
        fmt.setName(name)
        fmt.setWidth(picture.width() * scale)
        fmt.setHeight(picture.height() * scale)
        if index == 0 and after_text:
            cursor.insertBlock()
        cursor.insertImage(fmt)
        cursor.insertText(" ")


class ChatDelegate(QStyledItemDelegate):
    """Markdown rows with a width-keyed layout cache and a thumbnail cache."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: (row key, width, palette) -> (what the row showed, its laid-out document); least
        #: recently used first. A row whose text changed replaces its own entry, so a
        #: streaming reply keeps one document, not one per delta.
        self._cache: OrderedDict[tuple[str, int, int], tuple[tuple[Any, ...], QTextDocument]] = (
            OrderedDict()
        )
        self._thumbs: OrderedDict[str, list[QImage | None]] = OrderedDict()

    def _thumbnails(self, item: ChatItem) -> list[QImage | None]:
        key = f"{item.key}:{len(item.images)}"
        found = self._thumbs.get(key)
        if found is None:
            found = [decode_image(i) for i in item.images]
            self._thumbs[key] = found
            while len(self._thumbs) > _THUMB_LIMIT:
                self._thumbs.popitem(last=False)
        else:
            self._thumbs.move_to_end(key)
        return found

    def _doc(self, item: ChatItem, width: int, palette: QPalette) -> QTextDocument:
        key = (item.key, width, palette.cacheKey())
        shown = row_signature(item)
        entry = self._cache.get(key)
        if entry is not None and entry[0] == shown:
            self._cache.move_to_end(key)
            return entry[1]
        thumbs = self._thumbnails(item) if item.images else []
        doc = render_document(item, width, palette, thumbs)
        self._cache[key] = (shown, doc)
        self._cache.move_to_end(key)
        while len(self._cache) > _CACHE_LIMIT:
            self._cache.popitem(last=False)
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
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(palette.color(QPalette.ColorRole.Mid))
        painter.setBrush(bubble_colour(item.role, palette))
        painter.drawRoundedRect(bubble, 8, 8)
        # Only the part on screen: a long reply is taller than the view.
        clip = painter.clipBoundingRect()
        painter.translate(bubble.topLeft())
        if clip.isEmpty():
            doc.drawContents(painter)
        else:
            doc.drawContents(painter, clip.translated(-bubble.topLeft()))
        painter.restore()
        if option.state & QStyle.StateFlag.State_HasFocus:
            painter.save()
            painter.setPen(Qt.PenStyle.DotLine)
            painter.drawRect(bubble)
            painter.restore()


def bubble_colour(role: str, palette: QPalette) -> QColor:
    """A row's background, readable on light and dark palettes."""
    dark = palette.color(QPalette.ColorRole.Base).lightness() < 128
    highlight = palette.color(QPalette.ColorRole.Highlight)
    if role == "user":
        return highlight.darker(250) if dark else highlight.lighter(180)
    if role == "tool":
        return palette.color(QPalette.ColorRole.AlternateBase)
    if role == "error":
        return QColor("#5c1f1f") if dark else QColor("#ffe3e3")
    return palette.color(QPalette.ColorRole.Base)
