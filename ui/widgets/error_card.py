"""The error card: a failure in plain words, the buttons that fit it, the raw text only
behind *Show details*. Every text wraps: the card never widens the window."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ui.presenters.failure import CardAction, FailureCard

__all__ = ["ErrorCard"]


def _wrapping(text: str, parent: QWidget, name: str) -> QLabel:
    label = QLabel(text, parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.PlainText)  # gateway words are never markup
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    return label


class ErrorCard(QFrame):
    """Shows one :class:`FailureCard`.

    Signals:
        acted: a :class:`CardAction` value (not for *Show details*, which the card handles,
            nor *Edit token*, which opens the token field).
        token_entered: the token the user typed after *Edit token* (never logged).
    """

    acted = Signal(str)
    token_entered = Signal(str)

    def __init__(self, card: FailureCard, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # As wide as its buttons at least (a few hundred pixels); every text wraps.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        layout = QVBoxLayout(self)
        self.title = _wrapping("", self, "errorTitle")
        font = self.title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.title.setFont(font)
        self.body = _wrapping("", self, "errorBody")
        layout.addWidget(self.title)
        layout.addWidget(self.body)

        self.token_row = QWidget(self)
        token_layout = QHBoxLayout(self.token_row)
        token_layout.setContentsMargins(0, 0, 0, 0)
        self.token = QLineEdit(self.token_row)
        self.token.setObjectName("cardToken")
        self.token.setEchoMode(QLineEdit.EchoMode.Password)
        self.token.setPlaceholderText("the gateway's token or password")
        self.token.setAccessibleName("Gateway token")
        self.use_token = QPushButton("Connect", self.token_row)
        self.use_token.setObjectName("cardUseToken")
        self.use_token.clicked.connect(self._submit_token)
        self.token.returnPressed.connect(self._submit_token)
        token_layout.addWidget(self.token, 1)
        token_layout.addWidget(self.use_token)
        self.token_row.hide()
        layout.addWidget(self.token_row)

        self.buttons: dict[CardAction, QPushButton] = {}
        self._box = QWidget(self)
        layout.addWidget(self._box)
        self._layout = layout
        self.details = QPlainTextEdit(self)
        self.details.setObjectName("errorDetails")
        self.details.setReadOnly(True)
        self.details.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.details.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.details.setAccessibleName("Error details")
        self.details.hide()
        layout.addWidget(self.details)
        layout.addStretch(1)
        self.show_card(card)

    def show_card(self, card: FailureCard) -> None:
        """Show ``card`` (replacing what the card showed)."""
        self.card = card
        self.title.setText(card.title)
        self.body.setText(card.body)
        self.setAccessibleName(card.title)
        self.details.setPlainText(card.details)
        self.details.hide()
        self.token_row.hide()
        box = QWidget(self)
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        self.buttons = {}
        for action in card.actions:
            if action is CardAction.SHOW_DETAILS and not card.details:
                continue
            button = QPushButton(action.value, box)
            button.setObjectName(f"card-{action.name.lower()}")
            button.setAccessibleName(action.value)
            button.clicked.connect(lambda _checked=False, a=action: self._clicked(a))
            row.addWidget(button)
            self.buttons[action] = button
        row.addStretch(1)
        if self.buttons:
            next(iter(self.buttons.values())).setDefault(True)
        self._layout.replaceWidget(self._box, box)
        self._box.deleteLater()
        self._box = box

    def _clicked(self, action: CardAction) -> None:
        if action is CardAction.SHOW_DETAILS:
            shown = not self.details.isVisible()
            self.details.setVisible(shown)
            button = self.buttons[action]
            button.setText("Hide details" if shown else action.value)
            button.setAccessibleName(button.text())  # a screen reader reads what it says
            return
        if action is CardAction.EDIT_TOKEN:
            self.token_row.show()
            self.token.setFocus()
            return
        self.acted.emit(action.value)

    def _submit_token(self) -> None:
        token = self.token.text().strip()
        if not token:
            return
        self.token.clear()
        self.token_row.hide()
        self.token_entered.emit(token)
