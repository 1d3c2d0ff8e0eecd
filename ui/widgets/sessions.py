"""The sessions sidebar: switch (click, or Ctrl+K then type), new, and a context menu with
rename (F2) / reset / delete (Del) where the gateway allows. Sessions are shown by their
readable title; reset and delete ask first, with Cancel as the default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QInputDialog,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.protocol.session_keys import MAIN_SESSION_KEY
from ui.presenters.sessions import SessionsPresenter
from ui.tasks import TaskSet

__all__ = ["SessionsPanel"]

KEY_ROLE = Qt.ItemDataRole.UserRole + 2
#: A row's readable title (without the "working" mark).
TITLE_ROLE = Qt.ItemDataRole.UserRole + 3


class SessionsPanel(QWidget):
    """The list of sessions; ``on_switch(key)`` is called when the user picks one."""

    def __init__(
        self,
        presenter: SessionsPresenter,
        on_switch: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.presenter = presenter
        self.on_switch = on_switch
        self.current = MAIN_SESSION_KEY
        self.list = QListWidget(self)
        self.list.setObjectName("sessions")
        self.list.setAccessibleName("Sessions")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)  # whole titles in tooltips
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setAccessibleDescription(
            "Enter opens a session, F2 renames it, Delete deletes it (after asking)"
        )
        self.list.itemActivated.connect(self._picked)
        self.list.itemClicked.connect(self._picked)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.new_button = QPushButton("New session", self)
        self.new_button.setAccessibleName("New session")
        self.new_button.clicked.connect(lambda: self._spawn(self._new()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.new_button)
        self.setMaximumWidth(260)
        shortcut = QShortcut(QKeySequence("Ctrl+K"), self)
        shortcut.activated.connect(self.list.setFocus)
        for keys, action in (("F2", self.ask_rename), ("Delete", self.ask_delete)):
            key_shortcut = QShortcut(QKeySequence(keys), self.list)
            key_shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            key_shortcut.activated.connect(lambda act=action: self._on_current(act))
        #: The confirmation or rename dialog open now (tests and journeys answer it).
        self.dialog: QMessageBox | QInputDialog | None = None
        presenter.changed.connect(self._render)
        self._tasks = TaskSet()

    def _spawn(self, coro: Any) -> None:
        self._tasks.spawn(coro)

    def _render(self) -> None:
        self.list.clear()
        for row in self.presenter.rows:
            title = self.presenter.title(row)
            item = QListWidgetItem(title)
            key = str(row.get("key"))
            item.setData(KEY_ROLE, key)
            item.setData(TITLE_ROLE, title)
            item.setToolTip(title)
            item.setData(Qt.ItemDataRole.AccessibleTextRole, title)
            if row.get("hasActiveRun"):
                item.setText(f"{title}  •")
                item.setToolTip(f"{title}: the agent is working in this session")
                item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{title}, the agent is working")
            self.list.addItem(item)
            if key == self.current:
                self.list.setCurrentItem(item)

    def select(self, key: str) -> None:
        """Mark ``key`` as the current session."""
        self.current = key
        self._render()

    def _picked(self, item: QListWidgetItem) -> None:
        key = str(item.data(KEY_ROLE))
        if key != self.current:
            self.current = key
            self.on_switch(key)

    async def _new(self) -> None:
        key = await self.presenter.create()
        if key:
            self.current = key
            self._render()
            self.on_switch(key)

    def _item(self, key: str) -> QListWidgetItem | None:
        for row in range(self.list.count()):
            item = self.list.item(row)
            if item.data(KEY_ROLE) == key:
                return item
        return None

    def _on_current(self, action: Callable[[str], object]) -> None:
        item = self.list.currentItem()
        if item is not None:
            action(str(item.data(KEY_ROLE)))

    def _menu(self, point: QPoint) -> None:
        item = self.list.itemAt(point)
        if item is None:
            return
        key = str(item.data(KEY_ROLE))
        menu = QMenu(self)
        menu.setAccessibleName("Session actions")
        rename = menu.addAction("Rename…")
        reset = menu.addAction("Reset…")
        delete = menu.addAction("Delete…")
        chosen = menu.exec(self.list.mapToGlobal(point))
        if chosen is rename:
            self.ask_rename(key)
        elif chosen is reset:
            self.ask_reset(key)
        elif chosen is delete:
            self.ask_delete(key)

    def title_of(self, key: str) -> str:
        """The readable title shown for ``key``."""
        item = self._item(key)
        return str(item.data(TITLE_ROLE)) if item is not None else key

    def ask_rename(self, key: str) -> QInputDialog:
        """Rename: the field starts from the title shown (not from an id)."""
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename session")
        dialog.setLabelText("Name:")
        dialog.setTextValue(self.title_of(key))
        dialog.setAccessibleName("Rename session")
        dialog.setMinimumWidth(380)  # a title of TITLE_CHARS fits without scrolling

        def done(result: int) -> None:
            label = dialog.textValue().strip()
            if result == QInputDialog.DialogCode.Accepted and label:
                self._spawn(self.presenter.rename(key, label))
            self.dialog = None
            dialog.deleteLater()

        dialog.finished.connect(done)
        self.dialog = dialog
        dialog.open()
        return dialog

    def ask_reset(self, key: str) -> QMessageBox:
        """Reset (its transcript is archived), after asking; Cancel is the default."""
        return self._confirm(
            key,
            "Reset session",
            "Start “{title}” over? Its messages are archived and the chat starts empty.",
            "Reset",
            self.presenter.reset,
        )

    def ask_delete(self, key: str) -> QMessageBox:
        """Delete, after asking; Cancel is the default (Enter does not delete)."""
        return self._confirm(
            key,
            "Delete session",
            "Delete “{title}”? This cannot be undone.",
            "Delete",
            self.presenter.delete,
        )

    def _confirm(
        self,
        key: str,
        title: str,
        question: str,
        verb: str,
        action: Callable[[str], Any],
    ) -> QMessageBox:
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(title)
        box.setText(question.format(title=self.title_of(key)))
        box.setAccessibleName(title)
        confirm = box.addButton(verb, QMessageBox.ButtonRole.DestructiveRole)
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.setEscapeButton(cancel)

        def done(_result: int) -> None:
            if box.clickedButton() is confirm:
                self._spawn(action(key))
            self.dialog = None
            box.deleteLater()

        box.finished.connect(done)
        self.dialog = box
        box.open()
        cancel.setFocus()
        return box
