"""The sessions sidebar: switch (click, or Ctrl+K then type), new, and a context menu with
rename / reset / delete where the gateway allows."""

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

from ui.presenters.sessions import SessionsPresenter, session_title
from ui.tasks import TaskSet

__all__ = ["SessionsPanel"]

KEY_ROLE = Qt.ItemDataRole.UserRole + 2


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
        self.current = "agent:main:main"
        self.list = QListWidget(self)
        self.list.setObjectName("sessions")
        self.list.itemActivated.connect(self._picked)
        self.list.itemClicked.connect(self._picked)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.customContextMenuRequested.connect(self._menu)
        self.new_button = QPushButton("New session", self)
        self.new_button.clicked.connect(lambda: self._spawn(self._new()))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.new_button)
        self.setMaximumWidth(260)
        shortcut = QShortcut(QKeySequence("Ctrl+K"), self)
        shortcut.activated.connect(self.list.setFocus)
        presenter.changed.connect(self._render)
        self._tasks = TaskSet()

    def _spawn(self, coro: Any) -> None:
        self._tasks.spawn(coro)

    def _render(self) -> None:
        self.list.clear()
        for row in self.presenter.rows:
            item = QListWidgetItem(session_title(row))
            key = str(row.get("key"))
            item.setData(KEY_ROLE, key)
            if row.get("hasActiveRun"):
                item.setText(f"{item.text()}  •")
                item.setToolTip("the agent is working in this session")
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

    def _menu(self, point: QPoint) -> None:
        item = self.list.itemAt(point)
        if item is None:
            return
        key = str(item.data(KEY_ROLE))
        menu = QMenu(self)
        rename = menu.addAction("Rename…")
        reset = menu.addAction("Reset")
        delete = menu.addAction("Delete")
        chosen = menu.exec(self.list.mapToGlobal(point))
        if chosen is rename:
            label, ok = QInputDialog.getText(self, "Rename session", "Name:", text=item.text())
            if ok and label.strip():
                self._spawn(self.presenter.rename(key, label.strip()))
        elif chosen in (reset, delete):
            verb = "Reset" if chosen is reset else "Delete"
            answer = QMessageBox.question(self, f"{verb} session", f"{verb} “{item.text()}”?")
            if answer == QMessageBox.StandardButton.Yes:
                action = self.presenter.reset if chosen is reset else self.presenter.delete
                self._spawn(action(key))
