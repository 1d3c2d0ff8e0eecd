"""What every command area gets: the settings, the capture-activity monitor, user presence."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_desktop.config.settings import NodeSettings
from openclaw_desktop.node.computer_control import ComputerControl
from openclaw_desktop.node.exec.policy import ExecDecision, ExecPrompt
from openclaw_desktop.node.registry import CommandSpec
from openclaw_desktop.node.results import Handler

__all__ = ["Area", "CaptureActivity", "Handler", "NodeContext", "Transcriber"]

log = logging.getLogger("openclaw.node")


class CaptureActivity:
    """Who is using the camera, microphone or screen right now.

    Every capture runs inside :meth:`capture`, so the user always sees it: the log says so
    (headless), and listeners (the tray indicator) hear ``(kind, command, active)``.
    """

    def __init__(self) -> None:
        self.active: dict[str, int] = {}
        self.listeners: list[Callable[[str, str, bool], None]] = []

    @contextlib.contextmanager
    def capture(self, kind: str, command: str) -> Iterator[None]:
        """Mark ``kind`` (``camera``, ``microphone``, ``screen``) in use for the block."""
        self.active[kind] = self.active.get(kind, 0) + 1
        log.warning("%s in use by the agent (%s)", kind, command)
        self._notify(kind, command, True)
        try:
            yield
        finally:
            self.active[kind] -= 1
            if not self.active[kind]:
                del self.active[kind]
            log.warning("%s released (%s)", kind, command)
            self._notify(kind, command, False)

    def _notify(self, kind: str, command: str, active: bool) -> None:
        for listener in list(self.listeners):
            try:
                listener(kind, command, active)
            except Exception:
                log.exception("capture-activity listener failed")


#: Speech to text for push-to-talk: (PCM16 mono little-endian bytes, sample rate) -> text.
#: None until a transcription source is wired in (the voice issue: the gateway's talk session
#: or a local recognizer).
Transcriber = Callable[[bytes, int], Awaitable[str]]


async def _present() -> bool:
    return True


@dataclass
class NodeContext:
    """Shared by the command areas.

    Attributes:
        settings: the current node settings (read at every invoke, so a change applies at once).
        activity: capture indicator.
        presence: whether the user is at the computer; commands whose spec says
            ``needs_presence`` are refused when this answers False.
        transcriber: speech to text for ``talk.ptt.*``, or None when none is available.
        exec_approvals_path: the exec approvals document (None: ``exec-approvals.json`` in
            the config folder).
        exec_prompt: asks the user about a command the policy does not settle (the window's
            *Allow command?*); None when headless, so the ask fallback applies.
        exec_decision_listeners: hear every allow/deny decision (the Activity view).
        computer: the live Computer Use execution and its screenshot frames (shared by
            ``screen.snapshot`` and ``computer.act``).
    """

    settings: Callable[[], NodeSettings] = NodeSettings
    activity: CaptureActivity = field(default_factory=CaptureActivity)
    presence: Callable[[], Awaitable[bool]] = _present
    transcriber: Transcriber | None = None
    exec_approvals_path: Path | None = None
    exec_prompt: ExecPrompt | None = None
    exec_decision_listeners: list[Callable[[ExecDecision], None]] = field(default_factory=list)
    computer: ComputerControl = field(default_factory=ComputerControl)


@dataclass(frozen=True)
class Area:
    """One command area: its specs and their handlers."""

    specs: tuple[CommandSpec, ...]
    handlers: Mapping[str, Handler]
