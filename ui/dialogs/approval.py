"""The exec approval dialog: the agent wants to run a command and the gateway asks first.

The command is shown with terminal escapes and control characters stripped (so nothing can
hide part of it) and with secrets redacted. Deny is the default button (Enter). Escape, or
closing the window, decides nothing: ``decision`` stays None and the approval is deferred
(another operator client may answer, or it expires on the gateway).

:func:`ask_approval` fits :data:`openclaw_desktop.sdk.ApprovalHandler`, where None means
exactly that: leave it to someone else.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from openclaw_desktop.chat.redact import redact, strip_control
from openclaw_desktop.sdk import Approval
from ui.dialogs.trust import (
    WARNING_COLOR,
    await_dialog,
    button_row,
    colour_label,
    command_box,
    plain_label,
)

__all__ = ["MAX_COMMAND_CHARS", "ApprovalDialog", "ask_approval", "command_text"]

#: Longer commands are cut (the dialog says so; deny what you cannot read).
MAX_COMMAND_CHARS = 20_000
#: Below this, ``expires_at`` is taken as seconds rather than milliseconds since the epoch.
_SECONDS_LIMIT = 100_000_000_000


def _as_text(value: Any) -> str | None:
    """A command as one line: strings as they are, argv lists shell-quoted."""
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list | tuple) and value:
        return shlex.join(str(part) for part in value)
    return None


def command_text(approval: Approval) -> str:
    """The command of ``approval`` as the dialog shows it: control characters stripped,
    secrets redacted, cut at :data:`MAX_COMMAND_CHARS`.

    Falls back to the ``systemRunPlan`` (``rawCommand``, then ``argv``) and the summary.
    """
    plan = approval.raw.get("systemRunPlan")
    plan = plan if isinstance(plan, dict) else {}
    raw = (
        _as_text(approval.command)
        or _as_text(plan.get("rawCommand"))
        or _as_text(plan.get("argv"))
        or _as_text(approval.summary)
        or "(the gateway did not say which command)"
    )
    text = redact(strip_control(raw))
    if len(text) > MAX_COMMAND_CHARS:
        hidden = len(text) - MAX_COMMAND_CHARS
        text = f"{text[:MAX_COMMAND_CHARS]}\n… ({hidden} more characters not shown)"
    return text


def _cwd(raw: dict[str, Any]) -> str | None:
    cwd = raw.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        plan = raw.get("systemRunPlan")
        cwd = plan.get("cwd") if isinstance(plan, dict) else None
    return cwd if isinstance(cwd, str) and cwd else None


def _expiry_seconds(expires_at: int) -> float:
    """``expires_at`` (ms, or s for small values) as seconds since the epoch."""
    return expires_at if expires_at < _SECONDS_LIMIT else expires_at / 1000


class ApprovalDialog(QDialog):
    """ "Allow command?" for one :class:`~openclaw_desktop.sdk.Approval`.

    ``decision`` is ``"allow-once"``, ``"allow-always"``, ``"deny"``, or None when the
    dialog was closed without deciding (Escape, window close, expiry then close).
    """

    def __init__(
        self,
        approval: Approval,
        parent: QWidget | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Build the dialog.

        Args:
            approval: What the gateway asks about.
            parent: The owning window.
            clock: Seconds since the epoch (injectable for tests).
        """
        super().__init__(parent)
        self.approval = approval
        self.decision: str | None = None
        self._clock = clock
        self.setWindowTitle("Allow command?")
        self.setMinimumWidth(560)
        title = QLabel("Allow command?", self)
        font = title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        title.setFont(font)
        raw = approval.raw
        agent = raw.get("agentId")
        form = QFormLayout()
        self.agent_label = plain_label(str(agent) if agent else "(not given)", self)
        self.cwd_label = plain_label(_cwd(raw) or "(not given)", self, mono=True)
        form.addRow("Agent:", self.agent_label)
        form.addRow("Working directory:", self.cwd_label)
        summary = approval.summary
        if isinstance(summary, str) and summary.strip() and summary != approval.command:
            form.addRow("Summary:", plain_label(redact(strip_control(summary)), self))
        if approval.risk:
            risk = plain_label(str(approval.risk), self)
            colour_label(risk, WARNING_COLOR, bold=True)
            form.addRow("Risk:", risk)
        self.command_view = command_box(command_text(approval), self, min_lines=3)
        self.expiry_label = plain_label("", self)
        self.expiry_label.setVisible(approval.expires_at is not None)
        offered = set(approval.decisions)
        self.allow_once_button = QPushButton("Allow once", self)
        self.allow_always_button = QPushButton("Allow always", self)
        self.deny_button = QPushButton("Deny", self)
        self.allow_once_button.setVisible(not offered or "allow-once" in offered)
        self.allow_always_button.setVisible("allow-always" in offered)
        self.allow_always_button.setToolTip("Allow this command now and from now on")
        self.allow_once_button.clicked.connect(lambda: self._decide("allow-once"))
        self.allow_always_button.clicked.connect(lambda: self._decide("allow-always"))
        self.deny_button.clicked.connect(lambda: self._decide("deny"))
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addLayout(form)
        layout.addWidget(QLabel("Command:", self))
        layout.addWidget(self.command_view)
        layout.addWidget(self.expiry_label)
        layout.addLayout(
            button_row(self.deny_button, self.allow_always_button, self.allow_once_button)
        )
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self.update_countdown)
        if approval.expires_at is not None:
            self.update_countdown()
            if not self.expired:
                self._timer.start()

    @property
    def expired(self) -> bool:
        """Whether the approval's expiry time has passed."""
        expires_at = self.approval.expires_at
        return expires_at is not None and self._clock() >= _expiry_seconds(expires_at)

    def update_countdown(self) -> None:
        """Refresh the expiry text; once expired, disable the allow buttons."""
        expires_at = self.approval.expires_at
        if expires_at is None:
            return
        left = int(_expiry_seconds(expires_at) - self._clock())
        if left > 0:
            minutes, seconds = divmod(left, 60)
            self.expiry_label.setText(f"Expires in {minutes}:{seconds:02d}")
            return
        self._timer.stop()
        self.expiry_label.setText("Expired: the gateway no longer waits for this answer.")
        colour_label(self.expiry_label, WARNING_COLOR)
        self.allow_once_button.setEnabled(False)
        self.allow_always_button.setEnabled(False)

    def _decide(self, decision: str) -> None:
        self.decision = decision
        self.accept()

    def done(self, code: int) -> None:
        """Close the dialog and stop the countdown."""
        self._timer.stop()
        super().done(code)


async def ask_approval(approval: Approval, parent: QWidget | None = None) -> str | None:
    """Show :class:`ApprovalDialog` without a nested event loop and return the decision.

    Bind the parent (``functools.partial(ask_approval, parent=window)``) to get an
    :data:`~openclaw_desktop.sdk.ApprovalHandler`.

    Returns:
        The decision, or None when the user closed the dialog without deciding.
    """
    dialog = ApprovalDialog(approval, parent)
    await await_dialog(dialog)
    return dialog.decision
