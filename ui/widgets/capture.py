"""The capture indicator: while the agent uses the camera, microphone or screen, the window
says so and offers Stop (the running invoke is cancelled on this node). While the agent
controls the pointer and keyboard (a live ``computer.act`` execution) it says "The agent is
controlling this computer"; Stop then also takes control back (the node ends the execution,
releases held keys and buttons, and switches Computer control off until re-enabled)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from openclaw_desktop.node.capabilities import toggleable

__all__ = ["PREFIXES", "CaptureIndicator"]

#: Capture kind (the capability's setting: ``camera``, ``microphone``, ``screen``,
#: ``computer``) -> the command prefix Stop cancels: its capability's command namespace.
PREFIXES = {cap.setting: cap.command_prefix for cap in toggleable() if cap.setting is not None}
CONTROL_TEXT = "● The agent is controlling this computer"


class _Bridge(QObject):
    """Carries capture notices from whatever thread reports them to the GUI thread."""

    changed = Signal(str, str, bool)


class CaptureIndicator(QWidget):
    """Hidden unless something captures; ``stop(prefix)`` cancels."""

    def __init__(self, stop: Callable[[str], int], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stop = stop
        self.active: dict[str, str] = {}
        self.label = QLabel(self)
        self.label.setObjectName("capture")
        self.label.setStyleSheet("color: #c92a2a; font-weight: bold")
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.clicked.connect(self._stop_all)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.stop_button)
        self._bridge = _Bridge()
        self._bridge.changed.connect(self._changed)
        self.hide()

    def report(self, kind: str, command: str, active: bool) -> None:
        """A :class:`CaptureActivity` listener (thread-safe)."""
        self._bridge.changed.emit(kind, command, active)

    def _changed(self, kind: str, command: str, active: bool) -> None:
        if active:
            self.active[kind] = command
        else:
            self.active.pop(kind, None)
        if self.active:
            others = {k: c for k, c in self.active.items() if k != "computer"}
            if "computer" in self.active:  # the one thing that matters; the rest in short
                also = f" (also using: {', '.join(sorted(others))})" if others else ""
                self.label.setText(CONTROL_TEXT + also)
            else:
                parts = ", ".join(f"{k} ({c})" for k, c in sorted(others.items()))
                self.label.setText(f"● In use by the agent: {parts}")
            self.show()
        else:
            self.hide()

    def _stop_all(self) -> None:
        for kind in list(self.active):
            self._stop(PREFIXES.get(kind, kind))
