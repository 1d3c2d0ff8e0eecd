"""The activity view: tool calls across sessions (name, status, duration, argument count,
redacted preview) and the node commands this computer handled (command and result code,
never payloads)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QListWidget, QVBoxLayout, QWidget

from openclaw_desktop.chat.redact import redact, strip_control
from openclaw_desktop.sdk import Event

__all__ = ["MAX_ROWS", "ActivityView"]

MAX_ROWS = 500


@dataclass
class _Call:
    name: str
    args: int
    started: float
    session: str


class _Bridge(QObject):
    node_invoke = Signal(str, str)


class ActivityView(QWidget):
    """A newest-first timeline."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setObjectName("activity")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self._calls: dict[str, _Call] = {}
        #: A session's readable name from its key (the app sets the sidebar's titles).
        self.session_name: Callable[[str], str] = lambda key: key.split(":", 2)[-1]
        self._bridge = _Bridge()
        self._bridge.node_invoke.connect(self._node_row)

    def _add(self, text: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        self.list.insertItem(0, f"{stamp}  {text}")
        while self.list.count() > MAX_ROWS:
            self.list.takeItem(self.list.count() - 1)

    def on_event(self, event: Event) -> None:
        """Fold an SDK event in (tool calls only)."""
        call_id = str(event.data.get("toolCallId") or "")
        session = self.session_name(event.session_key or "")
        if event.type == "tool.call.started":
            args = event.data.get("args")
            count = len(args) if isinstance(args, dict) else 0
            name = str(event.data.get("name") or "tool")
            self._calls[call_id] = _Call(name, count, time.monotonic(), session)
            self._add(f"▶ {name} ({count} args) in {session}")
        elif event.type in ("tool.call.completed", "tool.call.failed"):
            call = self._calls.pop(call_id, None)
            name = call.name if call else str(event.data.get("name") or "tool")
            took = f" in {time.monotonic() - call.started:.1f}s" if call else ""
            status = "✗ failed" if event.type == "tool.call.failed" else "✓ done"
            preview = ""
            result = event.data.get("result")
            if isinstance(result, dict):
                blocks = result.get("content")
                if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict):
                    text = " ".join(str(blocks[0].get("text", "")).split())
                    preview = redact(strip_control(text))[:120]
            line = f"{status} {name}{took}"
            self._add(f"{line} — {preview}" if preview else line)

    def on_node_invoke(self, command: str, code: str) -> None:
        """A NodeSession invoke listener (any thread)."""
        self._bridge.node_invoke.emit(command, code)

    def _node_row(self, command: str, code: str) -> None:
        self._add(f"⚙ this computer ran {command} → {code}")
