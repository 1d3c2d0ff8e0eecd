"""The activity view: tool calls across sessions (name, status, duration, argument count,
redacted preview), the node commands this computer handled (command and result code,
never payloads) and every exec decision of this computer's node.

An exec decision row is the node's own :class:`~openclaw_desktop.node.exec.policy.ExecDecision`
(heard through ``NodeContext.exec_decision_listeners``, never reconstructed here): its time,
the command as the *Allow command?* prompt shows it (control characters stripped, secrets
redacted) cut to :data:`DECISION_COMMAND_CHARS`, who asked, the decision and why. The row's
tooltip adds the working directory and the executable."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from openclaw_desktop.chat.redact import redact, strip_control
from openclaw_desktop.node.exec.policy import ExecDecision
from openclaw_desktop.sdk import Approval, Event
from ui.dialogs.exec_prompt import exec_command_text, requested_by

__all__ = ["DECISION_COMMAND_CHARS", "DECISION_ROLE", "MAX_ROWS", "ActivityView", "decision_text"]

MAX_ROWS = 500
#: How much of a command an exec decision row shows (the tooltip shows more).
DECISION_COMMAND_CHARS = 160
#: The item data role holding a decision row's :class:`ExecDecision`.
DECISION_ROLE = Qt.ItemDataRole.UserRole + 1


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def decision_text(decision: ExecDecision) -> str:
    """A decision row without its time, on two lines: ``✓ allowed once: echo hi`` and
    ``you allowed it once · asked by agent main, session agent:main:main``."""
    mark = "✓" if decision.allowed else "✗"
    command = _one_line(exec_command_text(decision.request), DECISION_COMMAND_CHARS)
    why = redact(strip_control(decision.why or decision.reason or decision.source))
    who = requested_by(decision.request)
    return f"{mark} {decision.verb}: {command}\n{why} · asked by {who}"


#: The gateway's approval decisions as the Activity view words them.
_APPROVAL_WORDS = {
    "allow-once": "you allowed it once",
    "allow-always": "you allowed it always",
    "deny": "you denied it",
}


@dataclass
class _Call:
    name: str
    args: int
    started: float
    session: str


class _Bridge(QObject):
    node_invoke = Signal(str, str)
    exec_decision = Signal(object)


class ActivityView(QWidget):
    """A newest-first timeline."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.list = QListWidget(self)
        self.list.setObjectName("activity")
        self.list.setWordWrap(True)  # a narrow dock wraps rows instead of cutting them
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        self._calls: dict[str, _Call] = {}
        #: A session's readable name from its key (the app sets the sidebar's titles).
        self.session_name: Callable[[str], str] = lambda key: key.split(":", 2)[-1]
        self._bridge = _Bridge()
        self._bridge.node_invoke.connect(self._node_row)
        self._bridge.exec_decision.connect(self._decision_row)

    def _add(self, text: str, at: float | None = None) -> QListWidgetItem:
        stamp = time.strftime("%H:%M:%S", time.localtime(at))
        item = QListWidgetItem(f"{stamp}  {text}")
        self.list.insertItem(0, item)
        while self.list.count() > MAX_ROWS:
            self.list.takeItem(self.list.count() - 1)
        return item

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

    def on_approval_decision(self, approval: Approval, decision: str | None) -> None:
        """What the person answered to the gateway's approval dialog (None: closed without
        an answer, the request stays open for another client or its expiry)."""
        words = _APPROVAL_WORDS.get(decision or "", "left open")
        mark = "✗" if decision == "deny" else "✓" if decision else "…"
        what = _one_line(redact(strip_control(approval.command or approval.summary or "")), 160)
        item = self._add(f"{mark} {words} ({approval.kind} approval): {what or approval.id}")
        item.setData(
            Qt.ItemDataRole.AccessibleDescriptionRole,
            f"Gateway approval {words} in this window",
        )

    def on_exec_decision(self, decision: ExecDecision) -> None:
        """An ``exec_decision_listeners`` entry of the node (any thread)."""
        self._bridge.exec_decision.emit(decision)

    def decision_rows(self) -> list[ExecDecision]:
        """The decisions shown, newest first."""
        rows = (self.list.item(i).data(DECISION_ROLE) for i in range(self.list.count()))
        return [row for row in rows if isinstance(row, ExecDecision)]

    def _decision_row(self, decision: ExecDecision) -> None:
        text = decision_text(decision).replace("\n", "\n      ")
        item = self._add(text, decision.at_ms / 1000)
        item.setData(DECISION_ROLE, decision)
        request = decision.request
        where = strip_control(request.cwd or "the node's own folder")
        executable = strip_control(request.resolved_path or "not found on this computer")
        item.setToolTip(
            f"{exec_command_text(request)}\n\nWorking directory: {where}\nExecutable: {executable}"
        )
        kind = "Command allowed" if decision.allowed else "Command denied"
        item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, f"{kind} on this computer")
