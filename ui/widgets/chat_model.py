"""The chat timeline as a Qt list model (views paint only visible rows: long sessions stay
smooth)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from openclaw_desktop.chat import ChatItem, ChatTimeline

__all__ = ["ITEM_ROLE", "WINDOW", "ChatListModel", "row_signature"]

#: Rows shown at first (and added per scroll to the top): the newest messages.
WINDOW = 300
#: The :class:`ChatItem` of a row.
ITEM_ROLE = Qt.ItemDataRole.UserRole + 1

#: A tool card's state, in glyphs the common fonts have (DejaVu, Noto, Liberation Mono's
#: fallbacks): an hourglass emoji was a missing-glyph box without an emoji font.
_ICONS = {"running": "⋯", "completed": "✓", "failed": "✗"}


def item_text(item: ChatItem) -> str:
    """What a row shows (plain text; the delegate may render Markdown)."""
    if item.role == "tool" and item.tool is not None:
        card = item.tool
        args = f"{card.arg_count} argument{'s' if card.arg_count != 1 else ''}"
        call = f" · {card.summary}" if card.summary else f" ({args})"
        preview = f"\n{card.preview}" if card.preview else ""
        return f"{_ICONS[card.status]} {card.name}{call}{preview}"
    marker = {
        "queued": " (queued: double-click to steer it in now)",
        "failed": " (not sent)" if item.role == "user" else "",
        "waiting": " (waiting for the gateway: sent when it is back)",
        "aborted": " (stopped)",
        "interrupted": " (interrupted)",
    }
    files = "".join(f"\n\nAttached: {name}" for name in item.files)
    return item.text + files + marker.get(item.status, "")


_SPEAKERS = {
    "user": "Your message",
    "assistant": "OpenClaw's reply",
    "tool": "Tool call",
    "error": "Error",
}


def item_description(item: ChatItem) -> str:
    """Who a row is from and its state, for screen readers (``AccessibleDescriptionRole``)."""
    speaker = _SPEAKERS.get(item.role, item.role)
    state = item.tool.status if item.role == "tool" and item.tool is not None else item.status
    images = f", {len(item.images)} image{'s' if len(item.images) != 1 else ''}"
    return f"{speaker}, {state}{images if item.images else ''}"


def row_signature(item: ChatItem) -> tuple[Any, ...]:
    """What a row's look depends on (cheap: the strings' hashes are cached by Python)."""
    tool = item.tool
    card = (tool.status, tool.arg_count, tool.summary, tool.preview) if tool is not None else None
    return (item.key, item.status, item.text, tuple(item.files), len(item.images), card)


class ChatListModel(QAbstractListModel):
    """The newest rows of a :class:`ChatTimeline`: at most :data:`WINDOW` at first, more as
    the reader scrolls up (:meth:`show_earlier`), so a long session never lays out its whole
    history at once."""

    def __init__(self, timeline: ChatTimeline, window: int = WINDOW) -> None:
        super().__init__()
        self.timeline = timeline
        self.window = window
        self._start = 0  # index in the timeline of the first row
        self._sigs: list[tuple[Any, ...]] = []  # what each row showed when last announced

    @property
    def hidden_before(self) -> int:
        """Timeline items above the first row (shown by :meth:`show_earlier`)."""
        return self._start

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        """Qt: number of rows."""
        return 0 if parent.isValid() else len(self._sigs)  # rows announced to views so far

    def item(self, row: int) -> ChatItem | None:
        """The timeline item of a row."""
        index = self._start + row
        if 0 <= row < len(self._sigs) and index < len(self.timeline.items):
            return self.timeline.items[index]
        return None

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Qt: one row's data."""
        item = self.item(index.row()) if index.isValid() else None
        if item is None:
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            # Without trailing whitespace: the real gateway streams a reply trimmed but
            # stores it as the model wrote it; the row reads the same live and after a restart.
            return item_text(item).rstrip()
        if role == ITEM_ROLE:
            return item
        if role == Qt.ItemDataRole.AccessibleDescriptionRole:
            return item_description(item)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            right = (
                Qt.AlignmentFlag.AlignRight if item.role == "user" else Qt.AlignmentFlag.AlignLeft
            )
            return right | Qt.AlignmentFlag.AlignVCenter
        return None

    def refresh(self) -> bool:
        """The timeline changed: append new rows, repaint the rows that changed. Returns
        whether anything did (the view then lays out again)."""
        items = self.timeline.items
        shown = len(self._sigs)
        grown = len(items) - self._start - shown
        if len(items) < self._start + shown or grown > self.window:
            # Shrunk (a reset), or a whole history arrived at once: start from its end.
            self.beginResetModel()
            self._start = max(0, len(items) - self.window)
            self._sigs = [row_signature(i) for i in items[self._start :]]
            self.endResetModel()
            return True
        changed = [
            row
            for row, sig in enumerate(self._sigs)
            if row_signature(items[self._start + row]) != sig
        ]
        for row in changed:
            self._sigs[row] = row_signature(items[self._start + row])
        if changed:
            self.dataChanged.emit(self.index(changed[0]), self.index(changed[-1]))
        new = items[self._start + shown :]
        if new:
            self.beginInsertRows(QModelIndex(), shown, shown + len(new) - 1)
            self._sigs.extend(row_signature(i) for i in new)
            self.endInsertRows()
        return bool(changed or new)

    def show_earlier(self, count: int = WINDOW) -> int:
        """Add up to ``count`` earlier items above the first row; returns how many."""
        if self._start == 0:
            return 0
        begin = max(0, self._start - count)
        earlier = self.timeline.items[begin : self._start]
        self.beginInsertRows(QModelIndex(), 0, len(earlier) - 1)
        self._start = begin
        self._sigs[:0] = [row_signature(i) for i in earlier]
        self.endInsertRows()
        return len(earlier)
