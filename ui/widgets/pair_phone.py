"""“Pair a phone”: the bundled gateway's one-time setup code as a QR code to scan with the
OpenClaw Android app (``device.pair.setupCode``)."""

from __future__ import annotations

import base64
import time
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

__all__ = ["PairPhoneDialog", "qr_pixmap", "setup_code_refused"]


def qr_pixmap(data_url: str) -> QPixmap:
    """A ``data:image/png;base64,...`` URL as a pixmap (empty when it is not one)."""
    pixmap = QPixmap()
    prefix = "data:image/png;base64,"
    if data_url.startswith(prefix):
        pixmap.loadFromData(base64.b64decode(data_url[len(prefix) :]), "PNG")
    return pixmap


def setup_code_refused(reason: str, parent: QWidget) -> QMessageBox:
    """ "Pair a phone" when the gateway gives no setup code: its reason, whole (not modal)."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Pair a phone", "This gateway gives no setup code.")
    box.setParent(parent, box.windowFlags())
    box.setObjectName("setup-code-refused")
    box.setAccessibleName("No setup code")
    box.setInformativeText(reason)
    box.open()
    return box


class PairPhoneDialog(QDialog):
    """Shows a setup code (QR and text) with its expiry and how to use it."""

    def __init__(self, setup: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Pair a phone")
        self.setMaximumWidth(520)
        self.setup = setup
        layout = QVBoxLayout(self)
        intro = QLabel(
            "In the OpenClaw app on your phone choose <b>Connect → Scan setup code</b> and "
            "scan this code. It works once and expires in 10 minutes.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.qr = QLabel(self)
        self.qr.setObjectName("qr")
        self.qr.setAlignment(Qt.AlignmentFlag.AlignCenter)
        pixmap = qr_pixmap(str(setup.get("qrDataUrl") or ""))
        if not pixmap.isNull():
            self.qr.setPixmap(pixmap.scaled(320, 320, Qt.AspectRatioMode.KeepAspectRatio))
        layout.addWidget(self.qr)
        self.code = QLineEdit(str(setup.get("setupCode") or ""), self)
        self.code.setObjectName("code")
        self.code.setAccessibleName("Setup code")
        self.code.setReadOnly(True)  # one long token: selectable, scrolls instead of widening
        layout.addWidget(self.code)
        url = str(setup.get("gatewayUrl") or "")
        details = f"Gateway: {url}"
        expires = setup.get("expiresAtMs")
        if isinstance(expires, int):  # older gateways do not say
            minutes = max(0, int((expires / 1000 - time.time()) // 60))
            details += f" · expires in about {minutes} min"
        if setup.get("urlSource") == "loopback":
            details += (
                "\nThis gateway only listens on this computer: a phone cannot reach it. "
                "Restart it with `openclaw-desktop gateway run --bind lan` first."
            )
        self.details = QLabel(details, self)
        self.details.setWordWrap(True)
        layout.addWidget(self.details)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton("Copy code", self)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self._copy)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.code.text())
