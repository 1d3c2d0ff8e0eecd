"""The main window: sessions on the left, the chat of the current session, connection status.

Closing it is not decided here: :attr:`MainWindow.close_handler` (set by the app) says whether
a close request quits, hides the window to the tray, or is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
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
        self.setAccessibleName("OpenClaw")
        self.resize(1000, 680)
        #: Asked on every close request that does not quit for sure: True accepts the close
        #: (the app quits), False keeps the window (hidden to the tray, or the user
        #: cancelled). None (no app behind the window): every close is accepted.
        self.close_handler: Callable[[], bool] | None = None
        #: Set by the app when it quits: the next close is accepted without asking.
        self.quitting = False
        self.splitter = QSplitter(self)
        self.stack = QStackedWidget(self.splitter)
        self.placeholder = QLabel("Starting OpenClaw…", self)
        self.placeholder.setObjectName("placeholder")
        self.stack.addWidget(self.placeholder)
        self.splitter.addWidget(self.stack)
        self.setCentralWidget(self.splitter)
        self.operator_status = QLabel("operator: starting", self)
        # The text is the name a screen reader reads (it changes); what it is about is the
        # description.
        self.operator_status.setAccessibleDescription("Chat connection")
        self.node_status = QLabel("node: starting", self)
        self.node_status.setAccessibleDescription("Node connection")
        self.statusBar().addWidget(self.operator_status)
        self.statusBar().addPermanentWidget(self.node_status)
        self.chat: ChatView | None = None
        self._views: dict[str, ChatView] = {}

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        """Qt: the window manager's close button, Alt+F4, or :meth:`close`."""
        if self.quitting or self.close_handler is None or self.close_handler():
            event.accept()
        else:
            event.ignore()

    def show_sessions(self, panel: QWidget) -> None:
        """Put the sessions sidebar on the left."""
        sessions = getattr(panel, "list", None)
        if isinstance(sessions, QWidget):
            sessions.setAccessibleName("Sessions")
        self.splitter.insertWidget(0, panel)
        self.splitter.setStretchFactor(1, 1)

    def show_activity(self, view: QWidget) -> None:
        """The activity timeline, docked on the right (View it or close it like any dock)."""
        dock = QDockWidget("Activity", self)
        dock.setObjectName("activity-dock")
        dock.setAccessibleName("Activity")
        dock.setWidget(view)
        for rows in view.findChildren(QAbstractItemView):
            if not rows.accessibleName():
                rows.setAccessibleName("Activity")
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        self.activity_dock = dock

    def show_chat(self, presenter: ChatPresenter) -> ChatView:
        """Show the chat of ``presenter``'s session (its view is kept for switching back)."""
        view = self._views.get(presenter.session_key)
        if view is None:
            view = ChatView(presenter, self)
            _name_controls(view)
            self._views[presenter.session_key] = view
            self.stack.addWidget(view)
            presenter.status.connect(self.statusBar().showMessage)
        self.chat = view
        self.stack.setCurrentWidget(view)
        view.composer.setFocus()
        return view

    def forget_chats(self) -> None:
        """Drop every chat view (the gateway they belong to is being left; their presenters
        are closed by the app). The next :meth:`show_chat` builds a fresh view."""
        views, self._views = self._views, {}
        for view in views.values():
            self.stack.removeWidget(view)
            view.deleteLater()
        self.chat = None

    def show_message(self, text: str, widget: QWidget | None = None) -> None:
        """A full-window message (errors before the chat is up)."""
        self.placeholder.setText(text)
        self.stack.setCurrentWidget(widget or self.placeholder)


def _name_controls(view: ChatView) -> None:
    """Accessible names of the chat's controls that show no text of their own (screen
    readers, and the journeys, find them by these)."""
    view.messages.setAccessibleName("Messages")
    view.composer.setAccessibleName("Message")
    view.composer.setAccessibleDescription("Enter sends, Shift+Enter starts a new line")
    view.model_picker.setAccessibleName("Model")
    view.thinking_picker.setAccessibleName("Thinking level")
    for button in (view.send_button, view.stop_button, view.steer_button, view.attach_button):
        button.setAccessibleName(button.text().rstrip("…"))
