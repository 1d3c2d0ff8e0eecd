"""Pairing: approve a device or node surface that asks to join, and wait for our own approval.

:class:`PairingRequestDialog` shows a ``device.pair.requested`` / ``node.pair.requested``
payload. Every field comes from the network, so it is shown as plain text with control
characters stripped; scopes that grant control over the gateway are highlighted. "Later" is
the default button and Escape means later too: nothing is approved or rejected by accident.

:class:`PairingWaitPanel` is shown while this app waits for someone to approve it on a
gateway: the request id, the exact approve command (selectable, with a Copy button) and an
animated "Waiting for approval…" line.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.chat.redact import strip_control
from ui.dialogs.trust import (
    WARNING_COLOR,
    await_dialog,
    button_row,
    colour_label,
    mono_font,
    plain_label,
)

__all__ = [
    "ADMIN_SCOPES",
    "PairingRequestDialog",
    "PairingWaitPanel",
    "ask_pairing",
    "request_name",
]

#: Scopes that give control over the gateway or over other clients, and why they matter.
ADMIN_SCOPES: dict[str, str] = {
    "operator.admin": "full control of the gateway",
    "operator.pairing": "can approve other devices",
    "operator.approvals": "can approve commands on this gateway",
}


def _text(value: Any) -> str | None:
    """A non-empty string field, or None (wrong types count as missing)."""
    return value if isinstance(value, str) and value.strip() else None


def _texts(value: Any) -> list[str]:
    """A list-of-strings field (non-strings are dropped)."""
    if not isinstance(value, list | tuple):
        return []
    return [item for item in value if isinstance(item, str) and item.strip()]


def request_name(request: dict[str, Any]) -> str:
    """How to name the requester: its display name, else its client id, else a generic name."""
    return (
        _text(request.get("displayName"))
        or _text(request.get("clientId"))
        or ("a node" if _is_node(request) else "a new device")
    )


def _is_node(request: dict[str, Any]) -> bool:
    return "nodeId" in request or "commands" in request


class PairingRequestDialog(QDialog):
    """ "Approve <name>?" for one incoming pairing request.

    ``decision`` is ``"approve"``, ``"reject"``, or None for later (the default button,
    Escape and closing the window).
    """

    def __init__(self, request: dict[str, Any], parent: QWidget | None = None) -> None:
        """Build the dialog from a ``*.pair.requested`` payload (unknown fields are ignored)."""
        super().__init__(parent)
        self.request = request
        self.decision: str | None = None
        self.is_node = _is_node(request)
        name = strip_control(request_name(request))
        self.setWindowTitle("Pairing request")
        self.setMinimumWidth(520)
        self.title_label = plain_label(f"Approve {name}?", self)
        font = self.title_label.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.title_label.setFont(font)
        intro = (
            "A node asks to offer these commands to the agents of this gateway."
            if self.is_node
            else "A device asks to pair with this gateway."
        )
        if request.get("isRepair") is True:
            intro += " It was paired before and asks again."
        form = QFormLayout()
        self._row(form, "Who:", _text(request.get("displayName")))
        client = _text(request.get("clientId"))
        mode = _text(request.get("clientMode"))
        self._row(form, "Client:", f"{client} ({mode})" if client and mode else client)
        self._row(form, "Platform:", self._platform())
        self._row(form, "Address:", _text(request.get("remoteIp")), mono=True)
        self._row(form, "Role:", self._roles())
        self.scope_labels: dict[str, QLabel] = {}
        scopes = _texts(request.get("scopes"))
        if scopes or not self.is_node:
            form.addRow("Scopes:", self._scopes(scopes))
        self.commands_label: QLabel | None = None
        if self.is_node:
            commands = _texts(request.get("commands"))
            self.commands_label = self._row(
                form, "Commands:", ", ".join(commands) or "(none)", mono=True
            )
        self._row(form, "Request:", _text(request.get("requestId")), mono=True)
        self.approve_button = QPushButton("Approve", self)
        self.reject_button = QPushButton("Reject", self)
        self.later_button = QPushButton("Later", self)
        self.approve_button.clicked.connect(lambda: self._decide("approve"))
        self.reject_button.clicked.connect(lambda: self._decide("reject"))
        self.later_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title_label)
        layout.addWidget(plain_label(intro, self))
        layout.addLayout(form)
        if self.highlighted_scopes:
            warning = plain_label(
                "This request asks for control over the gateway: approve it only if you know "
                "this device and expected the request.",
                self,
            )
            colour_label(warning, WARNING_COLOR)
            layout.addWidget(warning)
        layout.addLayout(button_row(self.later_button, self.reject_button, self.approve_button))

    @property
    def highlighted_scopes(self) -> list[str]:
        """The requested scopes shown highlighted (see :data:`ADMIN_SCOPES`)."""
        return [scope for scope, label in self.scope_labels.items() if label.property("admin")]

    def _row(
        self, form: QFormLayout, title: str, value: str | None, *, mono: bool = False
    ) -> QLabel | None:
        if value is None:
            return None
        label = plain_label(value, self, mono=mono)
        form.addRow(title, label)
        return label

    def _platform(self) -> str | None:
        parts = [_text(self.request.get(key)) for key in ("platform", "deviceFamily")]
        shown = [part for part in parts if part]
        return " · ".join(dict.fromkeys(shown)) or None

    def _roles(self) -> str | None:
        role = _text(self.request.get("role"))
        roles = _texts(self.request.get("roles"))
        ordered = list(dict.fromkeys([role, *roles] if role else roles))
        return ", ".join(ordered) or ("node" if self.is_node else None)

    def _scopes(self, scopes: list[str]) -> QWidget:
        box = QWidget(self)
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        if not scopes:
            column.addWidget(plain_label("(none)", box))
        for scope in dict.fromkeys(scopes):
            why = ADMIN_SCOPES.get(scope)
            label = plain_label(f"{scope} — {why}" if why else scope, box, mono=True)
            label.setProperty("admin", why is not None)
            if why is not None:
                colour_label(label, WARNING_COLOR, bold=True)
            self.scope_labels[scope] = label
            column.addWidget(label)
        return box

    def _decide(self, decision: str) -> None:
        self.decision = decision
        self.accept()


async def ask_pairing(request: dict[str, Any], parent: QWidget | None = None) -> str | None:
    """Show :class:`PairingRequestDialog` without a nested event loop.

    Returns:
        ``"approve"``, ``"reject"``, or None for later.
    """
    dialog = PairingRequestDialog(request, parent)
    await await_dialog(dialog)
    return dialog.decision


class PairingWaitPanel(QWidget):
    """Shown while this app waits to be approved on a gateway."""

    #: The dots of the waiting line cycle at this pace (ms).
    FRAME_MS = 400
    _FRAMES = ("", ".", "..", "...")

    def __init__(
        self, request_id: str, approve_command: str, parent: QWidget | None = None
    ) -> None:
        """Build the panel; the waiting animation starts at once (see :meth:`stop`)."""
        super().__init__(parent)
        self.request_id = request_id
        self.approve_command = approve_command
        self._frame = 0
        self.status_label = QLabel(self)
        self.status_label.setObjectName("waiting")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        font = self.status_label.font()
        font.setBold(True)
        self.status_label.setFont(font)
        explanation = plain_label(
            "The gateway has not approved this device yet. On the gateway host, run:", self
        )
        self.command_field = QLineEdit(strip_control(approve_command), self)
        self.command_field.setObjectName("approve-command")
        self.command_field.setAccessibleName("Command to approve this device")
        self.command_field.setReadOnly(True)
        self.command_field.setFont(mono_font())
        self.command_field.setCursorPosition(0)
        advance = self.command_field.fontMetrics().horizontalAdvance(self.command_field.text())
        self.command_field.setMinimumWidth(min(advance + 24, 640))
        self.copy_button = QPushButton("Copy", self)
        self.copy_button.setToolTip("Copy the command to the clipboard")
        self.copy_button.clicked.connect(self.copy)
        command_row = QHBoxLayout()
        command_row.addWidget(self.command_field, 1)
        command_row.addWidget(self.copy_button)
        self.request_label = plain_label(f"Request id: {request_id}", self, mono=True)
        self.desktop_hint = plain_label(
            "If the gateway is OpenClaw Desktop's own, approve it in that computer's window, "
            f"or run there: openclaw-desktop devices approve {strip_control(request_id)}",
            self,
        )
        self.desktop_hint.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(self.status_label)
        layout.addWidget(explanation)
        layout.addLayout(command_row)
        layout.addWidget(self.request_label)
        layout.addWidget(self.desktop_hint)
        layout.addStretch(1)
        self._timer = QTimer(self)
        self._timer.setInterval(self.FRAME_MS)
        self._timer.timeout.connect(self._tick)
        self._show_frame()
        self._timer.start()

    @property
    def waiting(self) -> bool:
        """Whether the waiting animation runs."""
        return self._timer.isActive()

    def copy(self) -> None:
        """Put the approve command on the clipboard."""
        QGuiApplication.clipboard().setText(self.command_field.text())
        self.copy_button.setText("Copied")
        QTimer.singleShot(1500, self, lambda: self.copy_button.setText("Copy"))

    def stop(self, message: str) -> None:
        """End the waiting animation and show ``message`` instead (approved, rejected…)."""
        self._timer.stop()
        self.status_label.setText(message)

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(self._FRAMES)
        self._show_frame()

    def _show_frame(self) -> None:
        self.status_label.setText(f"Waiting for approval{self._FRAMES[self._frame]}")
