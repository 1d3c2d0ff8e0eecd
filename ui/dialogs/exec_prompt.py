"""*Allow command?* on this computer: the agent asks this computer's node to run a command
and the local exec approvals policy says to ask the user (``ask=always``, or an allowlist
miss under ``ask=on-miss``).

This is the window's :data:`~openclaw_desktop.node.exec.policy.ExecPrompt`. It shows the
command (the argv shell-quoted, control characters stripped, secrets redacted as in the
gateway's approval dialog), the working directory, the executable it resolves to and who
asked (agent, session). Deny is the default button, so Enter denies; Escape and closing the
window deny too. Allow once and Always allow need a click (or their keyboard mnemonic).
*Always allow* is offered only when the node says the policy allows durable trust.

Nobody answering within :data:`PROMPT_TIMEOUT_S` (the reference's exec approval timeout,
30 minutes) closes the dialog with no answer: the ask fallback of the approvals document
decides, which is deny unless the user configured otherwise (as the reference does when a
prompt times out). The invoke being cancelled (or the node closing) closes it the same way.
"""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Callable

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
from openclaw_desktop.node.exec.policy import ExecRequest
from ui.dialogs.approval import MAX_COMMAND_CHARS
from ui.dialogs.trust import await_dialog, button_row, command_box, plain_label

__all__ = [
    "PROMPT_TIMEOUT_S",
    "ExecPromptDialog",
    "ask_exec",
    "exec_command_text",
    "requested_by",
]

#: How long the prompt waits for an answer: the reference's exec approval timeout
#: (``DEFAULT_EXEC_APPROVAL_TIMEOUT_MS``, 1,800,000 ms; "approvals expire after 30 minutes").
PROMPT_TIMEOUT_S = 1800.0


def exec_command_text(request: ExecRequest) -> str:
    """The command as the dialog shows it: the argv joined with shell quoting (so argument
    boundaries stay visible), control characters stripped, secrets redacted, cut at
    :data:`~ui.dialogs.approval.MAX_COMMAND_CHARS` (the dialog says how much is hidden)."""
    raw = shlex.join(request.argv) if request.argv else request.command_text
    text = redact(strip_control(raw or "(no command given)"))
    if len(text) > MAX_COMMAND_CHARS:
        hidden = len(text) - MAX_COMMAND_CHARS
        text = f"{text[:MAX_COMMAND_CHARS]}\n… ({hidden} more characters not shown)"
    return text


def requested_by(request: ExecRequest) -> str:
    """Who asked: ``agent main, session agent:main:main`` (control characters stripped)."""
    parts = []
    if request.agent_id:
        parts.append(f"agent {request.agent_id}")
    if request.session_key:
        parts.append(f"session {request.session_key}")
    return strip_control(", ".join(parts)) or "(not given)"


class ExecPromptDialog(QDialog):
    """*Allow command?* for one :class:`~openclaw_desktop.node.exec.policy.ExecRequest`.

    ``decision`` is ``"allow-once"``, ``"allow-always"`` or ``"deny"`` (Deny, Enter,
    Escape, closing the window), or None when the timeout passed without an answer.
    """

    def __init__(
        self,
        request: ExecRequest,
        parent: QWidget | None = None,
        *,
        timeout_s: float = PROMPT_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Build the dialog.

        Args:
            request: What the agent asked this computer to run.
            parent: The owning window.
            timeout_s: Seconds to wait for an answer before closing without one.
            clock: Monotonic seconds (injectable for tests).
        """
        super().__init__(parent)
        self.request = request
        #: The user's answer; "deny" until they allow (closing the window denies).
        self.decision: str | None = "deny"
        self._clock = clock
        self._deadline = clock() + timeout_s
        self.setWindowTitle("Allow command?")
        self.setMinimumWidth(560)
        title = QLabel("Allow command on this computer?", self)
        font = title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        title.setFont(font)
        intro = plain_label(
            "The agent asks to run this command here, as you. Allow it only if you "
            "understand what it does.",
            self,
        )
        form = QFormLayout()
        self.who_label = plain_label(requested_by(request), self)
        cwd = request.cwd or f"{os.getcwd()} (the node's own folder)"
        self.cwd_label = plain_label(cwd, self, mono=True)
        self.executable_label = plain_label(
            request.resolved_path or "(not found on this computer)", self, mono=True
        )
        form.addRow("Requested by:", self.who_label)
        form.addRow("Working directory:", self.cwd_label)
        form.addRow("Executable:", self.executable_label)
        self.command_view = command_box(exec_command_text(request), self, min_lines=2)
        self.countdown_label = plain_label("", self)
        self.countdown_label.setObjectName("countdown")
        self.allow_once_button = QPushButton("Allow &once", self)
        self.allow_always_button = QPushButton("&Always allow", self)
        self.deny_button = QPushButton("&Deny", self)
        self.allow_always_button.setVisible(request.allow_always)
        self.allow_always_button.setToolTip(
            "Allow this exact command now and add it to the allowlist, so it runs without "
            "asking next time"
        )
        self.allow_once_button.clicked.connect(lambda: self._decide("allow-once"))
        self.allow_always_button.clicked.connect(lambda: self._decide("allow-always"))
        self.deny_button.clicked.connect(lambda: self._decide("deny"))
        layout = QVBoxLayout(self)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(QLabel("Command:", self))
        layout.addWidget(self.command_view)
        layout.addWidget(self.countdown_label)
        layout.addLayout(
            button_row(self.deny_button, self.allow_always_button, self.allow_once_button)
        )
        self._timer = QTimer(self)
        self._timer.setInterval(250)
        self._timer.timeout.connect(self.update_countdown)
        self.update_countdown()
        self._timer.start()

    def update_countdown(self) -> None:
        """Refresh the countdown; once it runs out, close with no answer."""
        left = self._deadline - self._clock()
        if left <= 0:
            self._timer.stop()
            self.decision = None
            self.reject()
            return
        minutes, seconds = divmod(int(left + 0.999), 60)
        self.countdown_label.setText(
            f"Without an answer in {minutes}:{seconds:02d}, the approvals fallback decides "
            "(deny, unless you set it otherwise)."
        )

    def _decide(self, decision: str) -> None:
        self.decision = decision
        self.accept()

    def done(self, code: int) -> None:
        """Close the dialog and stop the countdown."""
        self._timer.stop()
        super().done(code)


async def ask_exec(
    request: ExecRequest, parent: QWidget | None = None, *, timeout_s: float = PROMPT_TIMEOUT_S
) -> str | None:
    """Show :class:`ExecPromptDialog` without a nested event loop and return the answer.

    Bind the parent (``functools.partial(ask_exec, parent=window)``) to get an
    :data:`~openclaw_desktop.node.exec.policy.ExecPrompt`. Cancelled (the invoke was
    cancelled), the dialog closes and the cancellation propagates.

    Returns:
        ``"allow-once"``, ``"allow-always"`` (only when offered) or ``"deny"``; None when
        nobody answered in time (the ask fallback then applies).
    """
    dialog = ExecPromptDialog(request, parent, timeout_s=timeout_s)
    await await_dialog(dialog)
    if dialog.decision == "allow-always" and not request.allow_always:
        return "allow-once"  # not offered: never widen the allowlist behind the policy
    return dialog.decision
