"""The main window: sessions on the left, the chat of the current session, connection status."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QMainWindow,
    QSplitter,
    QStackedWidget,
    QWidget,
)

from ui.presenters.chat import ChatPresenter
from ui.widgets.chat_view import ChatView

__all__ = ["MainWindow"]


class MainWindow(QMainWindow):
    """Shown at once; the chat appears when the runtime is connected."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("OpenClaw")
        self.resize(1000, 680)
        self.splitter = QSplitter(self)
        self.stack = QStackedWidget(self.splitter)
        self.placeholder = QLabel("Starting OpenClaw…", self)
        self.placeholder.setObjectName("placeholder")
        self.stack.addWidget(self.placeholder)
        self.splitter.addWidget(self.stack)
        self.setCentralWidget(self.splitter)
        self.operator_status = QLabel("operator: starting", self)
        self.node_status = QLabel("node: starting", self)
        self.statusBar().addWidget(self.operator_status)
        self.statusBar().addPermanentWidget(self.node_status)
        self.chat: ChatView | None = None
        self._views: dict[str, ChatView] = {}

    def show_sessions(self, panel: QWidget) -> None:
        """Put the sessions sidebar on the left."""
        self.splitter.insertWidget(0, panel)
        self.splitter.setStretchFactor(1, 1)

    def show_activity(self, view: QWidget) -> None:
        """The activity timeline, docked on the right (View it or close it like any dock)."""
        dock = QDockWidget("Activity", self)
        dock.setObjectName("activity-dock")
        dock.setWidget(view)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.activity_dock = dock

    def show_chat(self, presenter: ChatPresenter) -> ChatView:
        """Show the chat of ``presenter``'s session (its view is kept for switching back)."""
        view = self._views.get(presenter.session_key)
        if view is None:
            view = ChatView(presenter, self)
            self._views[presenter.session_key] = view
            self.stack.addWidget(view)
            presenter.status.connect(self.statusBar().showMessage)
        self.chat = view
        self.stack.setCurrentWidget(view)
        view.composer.setFocus()
        return view

    def show_message(self, text: str, widget: QWidget | None = None) -> None:
        """A full-window message (errors before the chat is up)."""
        self.placeholder.setText(text)
        self.stack.setCurrentWidget(widget or self.placeholder)
