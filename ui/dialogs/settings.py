"""Settings: what this computer offers the agent (each with its availability here, as
``doctor`` reports it), the camera and microphone sources, notifications, start at login,
and (given the node's approvals access) the *Command approvals* page: the exec approvals
document the node serves (:mod:`ui.dialogs.exec_approvals`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.errors import ConfigError
from openclaw_desktop.integration.autostart import set_autostart
from openclaw_desktop.node.capabilities import Capability, toggleable
from openclaw_desktop.node.exec.access import ApprovalsAccess
from ui.dialogs.exec_approvals import ExecApprovalsEditor

if TYPE_CHECKING:  # the registry's survey; the dialog only reads its entries
    from openclaw_desktop.node import SurfaceEntry

__all__ = ["CAPABILITY_SETTINGS", "SettingsDialog", "unavailable_capabilities"]

#: Setting (``camera``) -> its capability: a checkbox for each, in the table's order.
CAPABILITY_SETTINGS: dict[str, Capability] = {
    cap.setting: cap for cap in toggleable() if cap.setting is not None
}


def unavailable_capabilities(entries: list[SurfaceEntry]) -> dict[str, str]:
    """Setting (``camera``) -> why it cannot work here, for each capability whose commands
    the node's survey found all unavailable (no camera, no D-Bus notification service)."""
    availability = {e.spec.name: e.availability for e in entries}
    reasons = {}
    for key, capability in CAPABILITY_SETTINGS.items():
        states = [availability[c] for c in capability.commands if c in availability]
        if states and not any(state.available for state in states):
            reasons[key] = states[0].reason or "not available on this computer"
    return reasons


class SettingsDialog(QDialog):
    """Edits ``settings.json``; a running node applies the change by itself."""

    def __init__(
        self,
        store: SettingsStore,
        entries: list[SurfaceEntry],
        parent: QWidget | None = None,
        approvals: ApprovalsAccess | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.store = store
        settings = store.load()
        #: Capabilities that cannot work here, with the reason: shown disabled and not
        #: ticked, and left as they are in the settings when saving.
        self.unavailable = unavailable_capabilities(entries)
        self.unavailable_here = dict(self.unavailable)
        form = QFormLayout()
        self.display_name = QLineEdit(settings.node.display_name or "", self)
        self.display_name.setPlaceholderText("this computer's host name")
        self.display_name.setMaxLength(64)
        form.addRow(self._label("Display name", self.display_name), self.display_name)
        self.capabilities: dict[str, QCheckBox] = {}
        toggles = settings.node.toggles()
        for key, capability in CAPABILITY_SETTINGS.items():
            label = capability.label
            box = QCheckBox(label, self)
            reason = self.unavailable.get(key)
            box.setChecked(reason is None and toggles.get(key, False))
            box.setEnabled(reason is None)
            note = QLabel("available here" if reason is None else f"not available: {reason}", self)
            note.setWordWrap(True)
            box.setAccessibleName(label)
            description = "available here" if reason is None else f"Unavailable here: {reason}"
            box.setAccessibleDescription(description)
            box.setToolTip(capability.help if reason is None else description)
            form.addRow(box, note)
            self.capabilities[key] = box
        self.camera_source = QLineEdit(settings.node.camera_source or "", self)
        self.camera_source.setPlaceholderText(
            "index, /dev/video2, a file or rtsp://… (empty: local cameras)"
        )
        form.addRow(self._label("Camera source", self.camera_source), self.camera_source)
        self._saved_source = self.camera_source.text()
        self.camera_source.textChanged.connect(self._camera_source_edited)
        self.microphone_device = QLineEdit(settings.node.microphone_device or "", self)
        self.microphone_device.setPlaceholderText("name or index (empty: the default input)")
        form.addRow(self._label("Microphone", self.microphone_device), self.microphone_device)
        self.notify_replies = QCheckBox(
            "Notify me when a reply finishes while the window is hidden", self
        )
        self.notify_replies.setChecked(settings.ui.notify_replies)
        self.notify_replies.setAccessibleName(self.notify_replies.text())
        self.start_at_login = QCheckBox("Start OpenClaw Desktop when I log in", self)
        self.start_at_login.setChecked(settings.ui.start_at_login)
        form.addRow(self.notify_replies)
        form.addRow(self.start_at_login)
        self.theme = QComboBox(self)
        self.theme.addItems(["system", "light", "dark"])
        self.theme.setCurrentText(settings.ui.theme)
        self.theme.setToolTip("system follows your desktop's light or dark setting")
        form.addRow(self._label("Theme", self.theme), self.theme)
        self.start_at_login.setAccessibleName(self.start_at_login.text())
        self.error = QLabel(self)
        self.error.setAccessibleName("Error")
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c92a2a")
        self.error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        for button in buttons.buttons():
            button.setAccessibleName(button.text().replace("&", ""))
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        #: The *Command approvals* page (None without an approvals access).
        self.approvals: ExecApprovalsEditor | None = None
        self.tabs: QTabWidget | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        if approvals is None:
            layout.addLayout(form)
        else:
            general = QWidget(self)
            general.setLayout(form)
            self.approvals = ExecApprovalsEditor(approvals, self)
            self.tabs = QTabWidget(self)
            self.tabs.setAccessibleName("Settings pages")
            self.tabs.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # its tab bar takes the focus
            self.tabs.tabBar().setAccessibleName("Settings pages")
            self.tabs.addTab(general, "&General")
            self.tabs.addTab(self.approvals, "&Command approvals")
            layout.addWidget(self.tabs)
            self._spawn(self.approvals.load())
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _spawn(self, coro: Any) -> None:
        """Run ``coro`` on the running loop (none in a plain Qt test: the caller awaits)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            return
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _camera_source_edited(self, text: str) -> None:
        """Another camera source may work where the local cameras do not: the camera can
        be turned on with it (the node checks the source once saved)."""
        reason = unavailable = self.unavailable_here.get("camera")
        if unavailable is None:
            return
        box = self.capabilities["camera"]
        if text.strip() != self._saved_source.strip():
            self.unavailable.pop("camera", None)
            reason = None
        else:
            self.unavailable["camera"] = unavailable
            box.setChecked(False)
        box.setEnabled(reason is None)
        note = "checked when saved" if reason is None else f"Unavailable here: {reason}"
        box.setToolTip(note)
        box.setAccessibleDescription(note)

    def _label(self, text: str, field: QWidget) -> QLabel:
        """A form label that names its field (for screen readers, and mnemonics)."""
        label = QLabel(text, self)
        label.setBuddy(field)
        field.setAccessibleName(text)
        return label

    def save(self) -> None:
        """Write every changed setting; stay open with the reason when one is refused.
        An unavailable capability keeps its saved value (it is only shown off)."""
        pairs = [
            (f"node.{k}", "on" if b.isChecked() else "off")
            for k, b in self.capabilities.items()
            if k not in self.unavailable
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
        if self.approvals is not None and self.approvals.dirty:
            self._spawn(self._save_approvals())
            return
        self.accept()

    async def _save_approvals(self) -> None:
        """Close once the approvals are saved; on a conflict or a refusal stay open on
        their page, which says what happened."""
        assert self.approvals is not None and self.tabs is not None
        if await self.approvals.save():
            self.accept()
        else:
            self.tabs.setCurrentWidget(self.approvals)
