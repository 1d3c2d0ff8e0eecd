"""Settings: what this computer offers the agent (each with its availability here, as
``doctor`` reports it), the camera and microphone sources, notifications, start at login."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.errors import ConfigError
from ui.autostart import set_autostart

if TYPE_CHECKING:  # the node package loads the device adapters (OpenCV): not at start-up
    from openclaw_desktop.node import SurfaceEntry

__all__ = ["CAPABILITY_SETTINGS", "SettingsDialog"]

#: Setting -> (label, a command it enables, for the availability text).
CAPABILITY_SETTINGS = {
    "notifications": ("Notifications", "system.notify"),
    "camera": ("Camera", "camera.snap"),
    "screen": ("Screen", "screen.snapshot"),
    "microphone": ("Microphone (push-to-talk)", "talk.ptt.start"),
}


class SettingsDialog(QDialog):
    """Edits ``settings.json``; a running node applies the change by itself."""

    def __init__(
        self, store: SettingsStore, entries: list[SurfaceEntry], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.store = store
        settings = store.load()
        availability = {e.spec.name: e.availability for e in entries}
        form = QFormLayout()
        self.display_name = QLineEdit(settings.node.display_name or "", self)
        self.display_name.setPlaceholderText("this computer's host name")
        self.display_name.setMaxLength(64)
        form.addRow("Display name", self.display_name)
        self.capabilities: dict[str, QCheckBox] = {}
        for key, (label, command) in CAPABILITY_SETTINGS.items():
            box = QCheckBox(label, self)
            box.setChecked(bool(getattr(settings.node, key)))
            state = availability.get(command)
            note = QLabel(
                "available here"
                if state is None or state.available
                else f"not available: {state.reason}",
                self,
            )
            note.setWordWrap(True)
            form.addRow(box, note)
            self.capabilities[key] = box
        self.camera_source = QLineEdit(settings.node.camera_source or "", self)
        self.camera_source.setPlaceholderText(
            "index, /dev/video2, a file or rtsp://… (empty: local cameras)"
        )
        form.addRow("Camera source", self.camera_source)
        self.microphone_device = QLineEdit(settings.node.microphone_device or "", self)
        self.microphone_device.setPlaceholderText("name or index (empty: the default input)")
        form.addRow("Microphone", self.microphone_device)
        self.notify_replies = QCheckBox(
            "Notify me when a reply finishes while the window is hidden", self
        )
        self.notify_replies.setChecked(settings.ui.notify_replies)
        self.start_at_login = QCheckBox("Start OpenClaw Desktop when I log in", self)
        self.start_at_login.setChecked(settings.ui.start_at_login)
        form.addRow(self.notify_replies)
        form.addRow(self.start_at_login)
        self.theme = QComboBox(self)
        self.theme.addItems(["system", "light", "dark"])
        self.theme.setCurrentText(settings.ui.theme)
        self.theme.setToolTip("system follows your desktop's light or dark setting")
        form.addRow("Theme", self.theme)
        self.error = QLabel(self)
        self.error.setStyleSheet("color: #c92a2a")
        self.error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def save(self) -> None:
        """Write every changed setting; stay open with the reason when one is refused."""
        pairs = [
            (f"node.{k}", "on" if b.isChecked() else "off") for k, b in self.capabilities.items()
        ]
        pairs += [
            ("node.display_name", self.display_name.text().strip() or "none"),
            ("node.camera_source", self.camera_source.text().strip() or "none"),
            ("node.microphone_device", self.microphone_device.text().strip() or "none"),
            ("ui.notify_replies", "on" if self.notify_replies.isChecked() else "off"),
            ("ui.start_at_login", "on" if self.start_at_login.isChecked() else "off"),
            ("ui.theme", self.theme.currentText()),
        ]
        try:
            for key, value in pairs:
                self.store.set(key, value)
        except ConfigError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        set_autostart(self.start_at_login.isChecked())
        self.accept()
