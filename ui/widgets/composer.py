"""The message composer's attachments: files by picker, paste or drag-and-drop, shown as
removable chips and checked against the gateway's ``policy.attachments`` as they are added
(a refused file says why and nothing else is lost)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMimeData, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QHBoxLayout, QPlainTextEdit, QToolButton, QWidget

from openclaw_desktop.chat.attachments import (
    Attachment,
    AttachmentError,
    AttachmentLimits,
    check_total,
)

__all__ = ["AttachmentTray", "ComposerEdit", "local_files"]


def local_files(mime: QMimeData) -> list[Path]:
    """The local files a drop or paste carries (remote URLs are not attachments)."""
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile()]


def _png(image: QImage) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")  # type: ignore[call-overload]  # the stub wants bytes; Qt wants str
    data: QByteArray = buffer.data()
    return bytes(data.data())


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
