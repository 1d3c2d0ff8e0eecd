"""The main window: the chat of the current session and the connection status."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QMainWindow, QStackedWidget, QWidget

from ui.presenters.chat import ChatPresenter
from ui.widgets.chat_view import ChatView

__all__ = ["MainWindow"]


class MainWindow(QMainWindow):
    """Shown at once; the chat appears when the runtime is connected."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("OpenClaw")
        self.resize(900, 640)
        self.stack = QStackedWidget(self)
        self.placeholder = QLabel("Starting OpenClaw…", self)
        self.placeholder.setObjectName("placeholder")
        self.stack.addWidget(self.placeholder)
        self.setCentralWidget(self.stack)
        self.operator_status = QLabel("operator: starting", self)
        self.node_status = QLabel("node: starting", self)
        self.statusBar().addWidget(self.operator_status)
        self.statusBar().addPermanentWidget(self.node_status)
        self.chat: ChatView | None = None

    def show_chat(self, presenter: ChatPresenter) -> ChatView:
        """Replace the placeholder with the chat of ``presenter``'s session."""
        self.chat = ChatView(presenter, self)
        self.stack.addWidget(self.chat)
        self.stack.setCurrentWidget(self.chat)
        presenter.status.connect(self.statusBar().showMessage)
        return self.chat

    def show_message(self, text: str, widget: QWidget | None = None) -> None:
        """A full-window message (errors before the chat is up)."""
        self.placeholder.setText(text)
        self.stack.setCurrentWidget(widget or self.placeholder)
