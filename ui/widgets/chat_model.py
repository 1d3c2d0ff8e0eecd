"""The chat timeline as a Qt list model (views paint only visible rows: long sessions stay
smooth)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from openclaw_desktop.chat import ChatItem, ChatTimeline

__all__ = ["ITEM_ROLE", "ChatListModel"]

#: The :class:`ChatItem` of a row.
ITEM_ROLE = Qt.ItemDataRole.UserRole + 1

_ICONS = {"running": "⏳", "completed": "✓", "failed": "✗"}


def item_text(item: ChatItem) -> str:
    """What a row shows (plain text; the delegate may render Markdown)."""
    if item.role == "tool" and item.tool is not None:
        card = item.tool
        args = f"{card.arg_count} argument{'s' if card.arg_count != 1 else ''}"
        preview = f"\n{card.preview}" if card.preview else ""
        return f"{_ICONS[card.status]} {card.name} ({args}){preview}"
    marker = {
        "queued": " (queued: double-click to steer it in now)",
        "failed": " (not sent)",
        "waiting": " (waiting for the gateway: sent when it is back)",
        "aborted": " (stopped)",
    }
    files = "".join(f"\n\nAttached: {name}" for name in item.files)
    return item.text + files + marker.get(item.status, "")


class ChatListModel(QAbstractListModel):
    """Rows of a :class:`ChatTimeline`."""

    def __init__(self, timeline: ChatTimeline) -> None:
        super().__init__()
        self.timeline = timeline
        self._count = 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: N802, B008
        """Qt: number of rows."""
        return 0 if parent.isValid() else self._count  # rows announced to views so far

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        """Qt: one row's data."""
        if not index.isValid() or index.row() >= min(self._count, len(self.timeline.items)):
            return None
        item = self.timeline.items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return item_text(item)
        if role == ITEM_ROLE:
            return item
        if role == Qt.ItemDataRole.TextAlignmentRole:
            right = (
                Qt.AlignmentFlag.AlignRight if item.role == "user" else Qt.AlignmentFlag.AlignLeft
            )
            return right | Qt.AlignmentFlag.AlignVCenter
        return None

    def refresh(self) -> None:
        """The timeline changed: insert new rows, repaint changed ones."""
        count = len(self.timeline.items)
        if count < self._count:
            self.beginResetModel()
            self._count = count
            self.endResetModel()
            return
        if count > self._count:
            self.beginInsertRows(QModelIndex(), self._count, count - 1)
            self._count = count
            self.endInsertRows()
        if count:
            self.dataChanged.emit(self.index(0), self.index(count - 1))
