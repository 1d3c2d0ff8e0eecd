"""The message composer's attachments: files by picker, paste or drag-and-drop, shown as
removable chips and checked against the gateway's ``policy.attachments`` as they are added
(a refused file says why and nothing else is lost)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, QObject, QTimer, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QHBoxLayout, QMessageBox, QPlainTextEdit, QToolButton, QWidget

from openclaw_desktop.chat.attachments import (
    Attachment,
    AttachmentError,
    AttachmentLimits,
    check_total,
)
from openclaw_desktop.config import WindowStateStore
from openclaw_desktop.errors import ConfigError

__all__ = [
    "DRAFT_SAVE_MS",
    "AttachmentTray",
    "ComposerEdit",
    "DraftKeeper",
    "ask_send_images",
    "local_files",
]

log = logging.getLogger("openclaw.ui")

#: A draft is saved this long after the last keystroke (and at once on :meth:`DraftKeeper.save`).
DRAFT_SAVE_MS = 400


def local_files(mime: QMimeData) -> list[Path]:
    """The local files a drop or paste carries (remote URLs are not attachments)."""
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


def _png(image: QImage) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stub wants bytes; Qt wants str
    data: QByteArray = buffer.data()
    return bytes(data.data())


def ask_send_images(
    parent: QWidget, model: str, images: int, send: Callable[[], None]
) -> QMessageBox:
    """Warn before images go to a model that reads text only: *Send anyway* calls
    ``send``; Cancel (the default) keeps the message and its attachments in the composer."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("The model cannot see images")
    what = "this image" if images == 1 else f"these {images} images"
    box.setText(f"{model} reads text only: it will not see {what}.")
    box.setInformativeText("Choose a model that reads images, or send the message anyway.")
    box.setAccessibleName("The model cannot see images")
    anyway = box.addButton("Send anyway", QMessageBox.ButtonRole.AcceptRole)
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)

    def done(_result: int) -> None:
        if box.clickedButton() is anyway:
            send()
        box.deleteLater()

    box.finished.connect(done)
    box.open()
    return box


class AttachmentTray(QWidget):
    """The files waiting to go with the next message, one removable chip each."""

    #: A file was refused (the text says which and why).
    refused = Signal(str)
    #: The list changed.
    changed = Signal()

    def __init__(self, limits: Callable[[], AttachmentLimits], parent: QWidget | None = None):
        super().__init__(parent)
        self._limits = limits
        self.items: list[Attachment] = []
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addStretch(1)
        self.setVisible(False)

    def add(self, item: Attachment) -> bool:
        """Add one checked attachment, unless the message would become too big."""
        try:
            check_total([*self.items, item], self._limits())
        except AttachmentError as exc:
            self.refused.emit(str(exc))
            return False
        self.items.append(item)
        chip = QToolButton(self)
        chip.setObjectName("attachment")
        chip.setText(f"{item.label()}  ✕")
        chip.setToolTip("Remove this attachment")
        chip.setAccessibleName(f"Remove attachment {item.label()}")
        chip.clicked.connect(lambda _=False, it=item, c=chip: self._remove(it, c))
        self._layout.insertWidget(self._layout.count() - 1, chip)
        self.setVisible(True)
        self.changed.emit()
        return True

    def add_paths(self, paths: list[Path]) -> int:
        """Add files (picker, drop, pasted file URLs); returns how many were accepted."""
        added = 0
        for path in paths:
            try:
                added += self.add(Attachment.from_path(path, self._limits()))
            except AttachmentError as exc:
                self.refused.emit(str(exc))
        return added

    def add_image(self, image: QImage, name: str = "pasted-image.png") -> bool:
        """Add a pasted image (as PNG)."""
        try:
            return self.add(Attachment.from_bytes(_png(image), name, "image/png", self._limits()))
        except AttachmentError as exc:
            self.refused.emit(str(exc))
            return False

    def take(self) -> list[Attachment]:
        """The attachments for a send; the tray empties."""
        items, self.items = self.items, []
        for chip in self.findChildren(QToolButton, "attachment"):
            chip.deleteLater()
        self.setVisible(False)
        self.changed.emit()
        return items

    def labels(self) -> list[str]:
        """What the chips say (for tests and accessibility)."""
        return [item.label() for item in self.items]

    def _remove(self, item: Attachment, chip: QToolButton) -> None:
        if item in self.items:
            self.items.remove(item)
        chip.deleteLater()
        self.setVisible(bool(self.items))
        self.changed.emit()


class ComposerEdit(QPlainTextEdit):
    """The text box: pasting or dropping an image or files attaches them instead of
    inserting their paths."""

    def __init__(self, tray: AttachmentTray, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tray = tray

    def canInsertFromMimeData(self, source: QMimeData) -> bool:  # noqa: N802
        """Qt: images and files are accepted too."""
        return bool(
            source.hasImage() or local_files(source) or super().canInsertFromMimeData(source)
        )

    def insertFromMimeData(self, source: QMimeData) -> None:  # noqa: N802
        """Qt: paste or drop: files and images become attachments, text stays text."""
        files = local_files(source)
        if files:
            self.tray.add_paths(files)
            return
        if source.hasImage():
            image = source.imageData()
            if isinstance(image, QImage) and not image.isNull():
                self.tray.add_image(image)
                return
        super().insertFromMimeData(source)


class DraftKeeper(QObject):
    """Keeps one session's unsent text in ``window-state.json``: restored into an empty
    composer when the session's chat is made, saved shortly after each change, forgotten
    once sent. An unreadable state file is left alone (drafts then live in memory only)."""

    def __init__(
        self, edit: QPlainTextEdit, store: WindowStateStore, gateway: str, session: str
    ) -> None:
        super().__init__(edit)
        self.edit = edit
        self.store = store
        self.gateway = gateway
        self.session = session
        self._broken = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DRAFT_SAVE_MS)
        self._timer.timeout.connect(self.save)
        try:
            draft = store.draft(gateway, session)
        except ConfigError as exc:
            log.warning("drafts are not kept: %s", exc)
            self._broken, draft = True, ""
        if draft and not edit.toPlainText():
            edit.setPlainText(draft)
            edit.moveCursor(edit.textCursor().MoveOperation.End)
        self._saved = edit.toPlainText()
        edit.textChanged.connect(self._timer.start)

    def save(self) -> None:
        """Write the draft now (when it changed since the last write)."""
        self._timer.stop()
        text = self.edit.toPlainText()
        if self._broken or text == self._saved:
            return
        try:
            self.store.set_draft(self.gateway, self.session, text)
        except (ConfigError, OSError) as exc:
            log.warning("draft not saved: %s", exc)
            return
        self._saved = text
