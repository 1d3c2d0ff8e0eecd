"""TLS trust dialogs: the first-use prompt for a ``wss://`` gateway and the changed-pin warning.

Both refuse unless the user acts: the refusing button is the default (Enter) and Escape
refuses. The discovery hint (``gatewayTlsSha256`` from the TXT record) is shown as a hint
only; anyone on the LAN can advertise it, so it never counts as proof.

:func:`ask_trust` adapts the dialogs to :data:`openclaw_desktop.trust.TrustCallback` without a
nested event loop (``open()`` plus a future), so the transport can await it under qasync.
The small helpers here (:func:`await_dialog`, :func:`plain_label`, and :func:`mono_font`
from :mod:`ui.fonts`) are shared by the other dialogs of this package.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette, QTextOption
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.chat.redact import strip_control
from openclaw_desktop.trust import TrustPrompt, format_fingerprint, normalize_fingerprint
from ui.fonts import mono_font

__all__ = [
    "VERIFY_TEXT",
    "WARNING_COLOR",
    "PinChangedDialog",
    "TrustDialog",
    "ask_trust",
    "await_dialog",
    "button_row",
    "colour_label",
    "command_box",
    "hint_text",
    "mono_font",
    "plain_label",
]

#: How to check a fingerprint out of band (shown in both dialogs).
VERIFY_TEXT = (
    "Check this fingerprint out of band before trusting it: on the gateway host, "
    "`openclaw-desktop gateway run` prints it when it starts, and on an OpenClaw gateway "
    "`openclaw gateway status` shows it. Trust it only if every group matches."
)
#: Colour of warnings (a red that stays readable on light and dark backgrounds).
WARNING_COLOR = QColor("#c62828")


def plain_label(text: str, parent: QWidget | None = None, *, mono: bool = False) -> QLabel:
    """A word-wrapped, mouse-selectable label that never interprets ``text`` as rich text.

    Control and bidi-override characters are stripped: the text may come from the network
    (mDNS names, pairing requests, agent output).
    """
    label = QLabel(strip_control(text), parent)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if mono:
        label.setFont(mono_font())
    return label


def command_box(text: str, parent: QWidget, *, min_lines: int) -> QPlainTextEdit:
    """A read-only, monospaced, wrapping view of a command (accessible as "Command"): room
    for a short one at a glance (``min_lines`` to 10 lines), a long one scrolls, nothing is
    cut sideways. ``text`` is shown as given: the caller strips and redacts it."""
    view = QPlainTextEdit(parent)
    view.setAccessibleName("Command")
    view.setObjectName("command")
    view.setReadOnly(True)
    view.setFont(mono_font())
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
    view.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    view.setPlainText(text)
    lines = min(max(sum(1 + len(line) // 64 for line in text.split("\n")), min_lines), 10)
    view.setFixedHeight(view.fontMetrics().lineSpacing() * lines + 12)
    return view


def colour_label(label: QLabel, colour: QColor, *, bold: bool = False) -> None:
    """Give ``label`` a text colour (through its palette) and optionally a bold font."""
    palette = label.palette()
    palette.setColor(QPalette.ColorRole.WindowText, colour)
    label.setPalette(palette)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)


def hint_text(fingerprint_hex: str, hint: str | None) -> str | None:
    """What to say about the discovery hint, or None when there is none.

    Args:
        fingerprint_hex: The fingerprint the gateway actually presented.
        hint: The ``gatewayTlsSha256`` value advertised over discovery, in any form
            :func:`~openclaw_desktop.trust.normalize_fingerprint` accepts.

    Returns:
        One sentence saying whether the advertised value matches; never a verdict.
    """
    if hint is None or not hint.strip():
        return None
    try:
        matches = normalize_fingerprint(hint) == normalize_fingerprint(fingerprint_hex)
    except ValueError:
        return "Advertised on the LAN: not a valid fingerprint (ignored)."
    if matches:
        return (
            "Advertised on the LAN: matches. This is only a hint, anyone on the network "
            "can advertise a fingerprint; it is not proof."
        )
    return (
        "Advertised on the LAN: does not match. The certificate presented is not the one "
        "the gateway announces; someone may be intercepting the connection."
    )


def _fingerprint_label(fp_hex: str, parent: QWidget) -> QLabel:
    label = plain_label(format_fingerprint(fp_hex), parent, mono=True)
    label.setWordWrap(False)
    label.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextSelectableByMouse
        | Qt.TextInteractionFlag.TextSelectableByKeyboard
    )
    return label


def button_row(default: QPushButton, *others: QPushButton) -> QHBoxLayout:
    """A right-aligned button row; only ``default`` reacts to Enter."""
    row = QHBoxLayout()
    row.addStretch(1)
    for button in others:
        button.setAutoDefault(False)
        row.addWidget(button)
    default.setAutoDefault(True)
    default.setDefault(True)
    row.addWidget(default)
    default.setFocus()
    return row


class TrustDialog(QDialog):
    """First connection to a ``wss://`` gateway whose certificate nobody vouches for yet.

    ``result_trusted`` is True only after the user clicked Trust; Cancel (the default
    button), Escape and closing the window leave it False.
    """

    def __init__(
        self,
        gateway_name: str,
        address: str,
        fingerprint_hex: str,
        hint: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """Build the dialog.

        Raises:
            ValueError: If ``fingerprint_hex`` is not a SHA-256 fingerprint.
        """
        super().__init__(parent)
        self.result_trusted = False
        self.setWindowTitle("Trust this gateway?")
        self.setMinimumWidth(520)
        title = plain_label(f"Trust the certificate of {gateway_name}?", self)
        font = title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        title.setFont(font)
        intro = plain_label(
            "This is the first connection to this gateway and its certificate is not signed "
            "by an authority this computer trusts. If you trust it, this fingerprint is "
            "pinned and any other certificate will be refused.",
            self,
        )
        form = QFormLayout()
        self.name_label = plain_label(gateway_name, self)
        self.address_label = plain_label(address, self, mono=True)
        self.fingerprint_label = _fingerprint_label(fingerprint_hex, self)
        form.addRow("Gateway:", self.name_label)
        form.addRow("Address:", self.address_label)
        form.addRow("SHA-256:", self.fingerprint_label)
        self.verify_label = plain_label(VERIFY_TEXT, self)
        about_hint = hint_text(fingerprint_hex, hint)
        self.hint_label = plain_label(about_hint or "", self)
        self.hint_label.setObjectName("hint")
        self.hint_label.setVisible(about_hint is not None)
        if about_hint is not None and "does not match" in about_hint:
            colour_label(self.hint_label, WARNING_COLOR, bold=True)
        self.trust_button = QPushButton("Trust", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.trust_button.clicked.connect(self._trust)
        self.cancel_button.clicked.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.verify_label)
        layout.addWidget(self.hint_label)
        layout.addLayout(button_row(self.cancel_button, self.trust_button))

    def _trust(self) -> None:
        self.result_trusted = True
        self.accept()


class PinChangedDialog(QDialog):
    """A pinned gateway presented a different certificate.

    ``result_replace`` is True only after the user ticked "I verified the new fingerprint"
    and clicked "Replace the pin…"; "Keep refusing" (the default), Escape and closing the
    window leave it False.
    """

    def __init__(
        self,
        gateway_name: str,
        address: str,
        old_hex: str,
        new_hex: str,
        parent: QWidget | None = None,
    ) -> None:
        """Build the dialog.

        Raises:
            ValueError: If either fingerprint is not a SHA-256 fingerprint.
        """
        super().__init__(parent)
        self.result_replace = False
        self.setWindowTitle("Certificate changed")
        self.setMinimumWidth(560)
        icon = QLabel(self)
        size = self.style().pixelMetric(QStyle.PixelMetric.PM_MessageBoxIconSize)
        warning = self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        icon.setPixmap(warning.pixmap(size, size))
        self.icon_label = icon
        self.title_label = QLabel("The gateway's certificate changed", self)
        font = self.title_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        self.title_label.setFont(font)
        colour_label(self.title_label, WARNING_COLOR, bold=True)
        header = QHBoxLayout()
        header.addWidget(icon)
        header.addWidget(self.title_label, 1)
        explanation = plain_label(
            f"{gateway_name} ({address}) presented a certificate that differs from the one you "
            "trusted before, so the connection was refused. Someone may be intercepting the "
            "connection. It can also mean the gateway was reinstalled or its certificate was "
            "regenerated. Replace the pin only after checking the new fingerprint on the "
            "gateway host.",
            self,
        )
        form = QFormLayout()
        self.old_label = _fingerprint_label(old_hex, self)
        self.new_label = _fingerprint_label(new_hex, self)
        form.addRow("Pinned:", self.old_label)
        form.addRow("Presented now:", self.new_label)
        verify = plain_label(VERIFY_TEXT.replace("this fingerprint", "the new fingerprint"), self)
        self.verified_box = QCheckBox("I verified the new fingerprint", self)
        self.keep_button = QPushButton("Keep refusing", self)
        self.replace_button = QPushButton("Replace the pin…", self)
        self.replace_button.setEnabled(False)
        self.verified_box.toggled.connect(self.replace_button.setEnabled)
        self.keep_button.clicked.connect(self.reject)
        self.replace_button.clicked.connect(self._replace)
        layout = QVBoxLayout(self)
        layout.addLayout(header)
        layout.addWidget(explanation)
        layout.addLayout(form)
        layout.addWidget(verify)
        layout.addWidget(self.verified_box)
        layout.addLayout(button_row(self.keep_button, self.replace_button))

    def _replace(self) -> None:
        if not self.verified_box.isChecked():  # the button is disabled; belt and braces
            return
        self.result_replace = True
        self.accept()


async def await_dialog(dialog: QDialog) -> int:
    """Show ``dialog`` with ``open()`` (modal, no nested event loop) and wait until it closes.

    If the awaiting task is cancelled, the dialog is rejected (closed without a decision).
    The dialog is deleted afterwards; read its result attributes before awaiting returns
    (they are plain Python attributes and survive) or from the returned code.

    Args:
        dialog: A dialog that has not been shown yet.

    Returns:
        The ``QDialog.DialogCode`` value the dialog finished with.
    """
    finished: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def on_finished(code: int) -> None:
        if not finished.done():
            finished.set_result(code)

    dialog.finished.connect(on_finished)
    dialog.open()
    try:
        return await finished
    finally:
        if dialog.isVisible():
            dialog.reject()
        dialog.deleteLater()


async def ask_trust(
    prompt: TrustPrompt, parent: QWidget | None, *, gateway_name: str | None = None
) -> bool:
    """Ask the user about a certificate; usable as the transport's trust callback.

    Shows :class:`PinChangedDialog` when the prompt replaces a different pin
    (``prompt.previous_pin``), :class:`TrustDialog` otherwise. Bind the parent to get a
    :data:`~openclaw_desktop.trust.TrustCallback`, e.g.
    ``functools.partial(ask_trust, parent=window)``.

    Args:
        prompt: What the transport found (endpoint, fingerprint, hint, previous pin).
        parent: The window the dialog belongs to (window-modal), or None.
        gateway_name: A friendly name (from discovery or settings); defaults to the host.

    Returns:
        True only if the user explicitly trusted the certificate (or replaced the pin).
    """
    name = gateway_name or prompt.host
    if prompt.previous_pin is not None and prompt.previous_pin != prompt.fingerprint:
        changed = PinChangedDialog(
            name, prompt.endpoint, prompt.previous_pin, prompt.fingerprint, parent
        )
        await await_dialog(changed)
        return changed.result_replace
    first = TrustDialog(name, prompt.endpoint, prompt.fingerprint, prompt.hint, parent)
    await await_dialog(first)
    return first.result_trusted
