"""The honest connection status on screen: the status bar's two labels, the tray's lines,
*Reconnect now* wherever a wait is shown, and the error card when a session needs the user.

Every text comes from :func:`ui.presenters.status.status_lines`, a pure function of the two
sessions' transport states; a one-second timer re-derives it while a countdown runs. The
app connects the signals to what the buttons do.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QPushButton, QSizePolicy, QStackedWidget, QWidget

from openclaw_desktop.supervisor import SupervisorState, SupervisorStatus
from ui.presenters.failure import CardAction, FailureCard
from ui.presenters.status import StatusLine, status_lines
from ui.widgets.error_card import ErrorCard

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLabel

    from openclaw_desktop.runtime import DesktopRuntime
    from ui.tray import Tray

__all__ = ["ConnectionStatusView"]


class ConnectionStatusView(QObject):
    """Shows the runtime's sessions in the window and the tray.

    Args:
        window: the main window (its ``operator_status`` / ``node_status`` labels and its
            central ``stack``).
        tray: the tray (``set_operator`` / ``set_node``, and its menu gets *Reconnect now*).
        runtime: the current runtime (it changes when the user switches gateways).

    Signals:
        reconnect_requested: *Reconnect now* (status bar, tray, card).
        retry_requested: the card's *Retry*.
        choose_requested: the card's *Choose another gateway*.
        token_entered: the card's *Edit token* field was submitted.
    """

    reconnect_requested = Signal()
    retry_requested = Signal()
    choose_requested = Signal()
    token_entered = Signal(str)

    def __init__(
        self, window: QMainWindow, tray: Tray, runtime: Callable[[], DesktopRuntime]
    ) -> None:
        super().__init__(window)
        self.window = window
        self.tray = tray
        self._runtime = runtime
        self.card: ErrorCard | None = None
        #: The lines shown now (tests compare them with the transport's state).
        self.lines: tuple[StatusLine, StatusLine] | None = None
        self.operator_label: QLabel = getattr(window, "operator_status")  # noqa: B009
        self.node_label: QLabel = getattr(window, "node_status")  # noqa: B009
        for label in (self.operator_label, self.node_label):
            # Long reasons must never widen the window: the label takes the room there is
            # (a small minimum overrides its text's width), the tooltip has all of it.
            label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(80)
        # Both lines stay in view: temporary messages (a send failed, a session renamed)
        # take the left part of the bar, never the place of the status.
        bar = window.statusBar()
        bar.removeWidget(self.operator_label)
        bar.insertPermanentWidget(0, self.operator_label)
        self.operator_label.show()
        self.reconnect_button = QPushButton("Reconnect now", window)
        self.reconnect_button.setObjectName("reconnectNow")
        self.reconnect_button.setAccessibleName("Reconnect now")
        self.reconnect_button.clicked.connect(self.reconnect_requested.emit)
        self.reconnect_button.hide()
        window.statusBar().addPermanentWidget(self.reconnect_button)
        self.reconnect_action = QAction("Reconnect now", tray)
        self.reconnect_action.triggered.connect(self.reconnect_requested.emit)
        self.reconnect_action.setVisible(False)
        menu = tray.menu
        actions = menu.actions()
        if len(actions) > 1:
            menu.insertAction(actions[1], self.reconnect_action)  # after "Open chat"
        else:
            menu.addAction(self.reconnect_action)
        self.timer = QTimer(self)
        self.timer.setInterval(1000)
        self.timer.timeout.connect(self.refresh)
        self.gateway: SupervisorStatus | None = None
        # No session exists yet: nothing to derive (the first status change refreshes).
        self.operator_label.setText("chat: starting…")
        self.node_label.setText("node: starting…" if runtime().target.node else "node: off")
        tray.set_operator("starting…")
        tray.set_node("starting…" if runtime().target.node else "off")

    @property
    def stack(self) -> QStackedWidget:
        """The window's central stack (chat, placeholder, cards)."""
        stack = getattr(self.window, "stack")  # noqa: B009
        assert isinstance(stack, QStackedWidget)
        return stack

    # ------------------------------------------------------------------ the status
    def refresh(self, *_args: object) -> None:
        """Derive and show both lines from the sessions' current transport states."""
        runtime = self._runtime()
        client, node = runtime.client, runtime.node
        operator = client.connection.status if client is not None else None
        node_status = node.connection.status if node is not None else None
        where = client.connection.endpoint.display if client is not None else ""
        chat_line, node_line = status_lines(operator, node_status, time.monotonic(), where)
        self.lines = (chat_line, node_line)
        chat_text = chat_line.text
        if client is None:
            chat_text = self._before_connecting()
        node_text = node_line.text
        if node is None:
            node_text = "paused" if runtime.node_paused else "off"
            if runtime.target.node and not runtime.node_paused and client is not None:
                node_text = "starts when the chat is connected"
        self.operator_label.setText(f"chat: {chat_text}")
        self.operator_label.setToolTip(chat_text)
        self.node_label.setText(f"node: {node_text}")
        self.node_label.setToolTip(node_text)
        self.tray.set_operator(chat_text)
        self.tray.set_node(node_text)
        gateway_down = self.gateway is not None and self.gateway.state in (
            SupervisorState.RESTARTING,
            SupervisorState.FAILED,
        )
        waiting = chat_line.waiting or node_line.waiting or gateway_down
        self.reconnect_button.setVisible(waiting)
        self.reconnect_action.setVisible(waiting)
        counting = any(
            line.waiting and s is not None and s.retry_at is not None
            for line, s in ((chat_line, operator), (node_line, node_status))
        )
        if counting and not self.timer.isActive():
            self.timer.start()
        elif not counting and self.timer.isActive():
            self.timer.stop()

    def _before_connecting(self) -> str:
        gateway = self.gateway
        if gateway is None or gateway.state is SupervisorState.STARTING:
            return "starting…"
        if gateway.state is SupervisorState.FAILED:
            return "stopped: the bundled gateway did not start"
        return "connecting…"

    def gateway_changed(self, status: SupervisorStatus) -> None:
        """The bundled gateway's supervisor reported: say what happens."""
        self.gateway = status
        bar = self.window.statusBar()
        if status.state is SupervisorState.RESTARTING:
            wait = f" in {status.retry_in_s:g} s" if status.retry_in_s is not None else ""
            bar.showMessage(f"The bundled gateway stopped ({status.reason}); restarting it{wait}…")
        elif status.state is SupervisorState.RUNNING and status.restarts > 0:
            bar.showMessage("The bundled gateway was restarted; reconnecting…", 10_000)
        self.refresh()

    # ------------------------------------------------------------------ the card
    def show_failure(self, card: FailureCard) -> ErrorCard:
        """Show ``card`` in place of the chat (one card; a new failure replaces it)."""
        if self.card is None:
            self.card = ErrorCard(card, self.window)
            self.card.acted.connect(self._acted)
            self.card.token_entered.connect(self.token_entered.emit)
            self.stack.addWidget(self.card)
        else:
            self.card.show_card(card)
        self.stack.setCurrentWidget(self.card)
        return self.card

    def hide_failure(self, back_to: QWidget | None) -> None:
        """Take the card away (the session is back): show ``back_to`` if it was covered."""
        card = self.card
        if card is None:
            return
        showing = self.stack.currentWidget() is card
        self.card = None
        self.stack.removeWidget(card)
        card.deleteLater()
        if showing and back_to is not None:
            self.stack.setCurrentWidget(back_to)

    def _acted(self, action: str) -> None:
        if action == CardAction.RETRY.value:
            self.retry_requested.emit()
        elif action == CardAction.RECONNECT_NOW.value:
            self.reconnect_requested.emit()
        elif action == CardAction.CHOOSE_GATEWAY.value:
            self.choose_requested.emit()
