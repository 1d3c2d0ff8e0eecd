"""The tray icon: both connections' honest status, a badge while the agent works, and the
menu (open chat, pair a phone, pause node, capability toggles, quit)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QColor, QIcon, QPainter
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.node.capabilities import Capability, toggleable

__all__ = ["CAPABILITIES", "Tray", "app_icon"]

#: Setting key (``node.camera``) -> its capability: a toggle for each, in the table's order.
CAPABILITIES: dict[str, Capability] = {cap.key: cap for cap in toggleable() if cap.key}


def app_icon(busy: bool = False) -> QIcon:
    """The app's icon; while the agent works, with an orange badge in the corner."""
    from ui import icons

    if not busy:
        return icons.app_icon()
    pixmap = icons.app_icon().pixmap(64, 64)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor("#e8590c"))
    painter.setPen(QColor("white"))
    painter.drawEllipse(38, 2, 24, 24)
    painter.end()
    return QIcon(pixmap)


class Tray(QObject):
    """Owns the tray icon when the desktop has a tray (it is optional everywhere)."""

    def __init__(
        self,
        settings: SettingsStore,
        *,
        open_chat: Callable[[], None],
        pair_phone: Callable[[], None],
        quit_app: Callable[[], None],
        open_settings: Callable[[], None] | None = None,
        pause_node: Callable[[bool], None] | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.operator = "starting"
        self.node = "starting"
        self.busy = False
        self.icon = QSystemTrayIcon(app_icon())
        menu = QMenu()
        menu.addAction("Open chat", open_chat)
        menu.addAction("Pair a phone…", pair_phone)
        menu.addSeparator()
        self.pause_action = QAction("Pause node", menu)
        self.pause_action.setCheckable(True)
        self.pause_action.setToolTip("Stop offering this computer to the agent until unpaused")
        self.pause_action.setEnabled(pause_node is not None)
        if pause_node is not None:
            self.pause_action.toggled.connect(pause_node)
        menu.addAction(self.pause_action)
        self.capability_actions: dict[str, QAction] = {}
        #: Setting key -> why it cannot work here (see :meth:`set_unavailable`).
        self.unavailable: dict[str, str] = {}
        menu.setToolTipsVisible(True)
        for key, capability in CAPABILITIES.items():
            action = QAction(capability.menu_text, menu)
            action.setCheckable(True)
            action.toggled.connect(lambda on, k=key: self._toggle(k, on))
            menu.addAction(action)
            self.capability_actions[key] = action
        menu.addSeparator()
        if open_settings is not None:
            menu.addAction("Settings…", open_settings)
        menu.addAction("Quit", quit_app)
        self.menu = menu
        self.icon.setContextMenu(menu)
        self.icon.activated.connect(
            lambda reason: (
                open_chat() if reason == QSystemTrayIcon.ActivationReason.Trigger else None
            )
        )
        self.sync_capabilities()
        self._update()

    @staticmethod
    def available() -> bool:
        """Whether this desktop shows tray icons."""
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        """Show the icon (when there is a tray)."""
        if self.available():
            self.icon.show()

    def sync_capabilities(self) -> None:
        """Tick the capability toggles as the settings file says; one that cannot work
        here is shown unavailable (disabled, not ticked, with the reason)."""
        toggles = self.settings.load().node.toggles()
        for key, action in self.capability_actions.items():
            capability = CAPABILITIES[key]
            label = capability.menu_text
            reason = self.unavailable.get(key)
            action.blockSignals(True)
            action.setChecked(reason is None and toggles.get(capability.setting or "", False))
            action.blockSignals(False)
            action.setEnabled(reason is None)
            action.setText(label if reason is None else f"{label} (unavailable)")
            action.setToolTip(capability.help if reason is None else f"Unavailable here: {reason}")

    def set_unavailable(self, reasons: dict[str, str]) -> None:
        """The capabilities (by setting name: ``camera``) that cannot work here, and why."""
        self.unavailable = {f"node.{name}": why for name, why in reasons.items()}
        self.sync_capabilities()

    def _toggle(self, key: str, on: bool) -> None:
        self.settings.set(key, "on" if on else "off")  # the running node re-advertises

    def set_operator(self, text: str) -> None:
        """Operator connection status (connected / reconnecting in Ns / paused: needs action)."""
        self.operator = text
        self._update()

    def set_node(self, text: str) -> None:
        """Node connection status."""
        self.node = text
        self._update()

    def set_busy(self, busy: bool) -> None:
        """The agent is working (badge)."""
        self.busy = busy
        self.icon.setIcon(app_icon(busy))
        self._update()

    def notify(self, title: str, text: str) -> None:
        """A desktop notification through the tray (a reply finished while hidden)."""
        if self.available():
            self.icon.showMessage(title, text[:200], QSystemTrayIcon.MessageIcon.Information, 5000)

    def _update(self) -> None:
        working = " · working…" if self.busy else ""
        self.icon.setToolTip(f"OpenClaw{working}\nchat: {self.operator}\nnode: {self.node}")
