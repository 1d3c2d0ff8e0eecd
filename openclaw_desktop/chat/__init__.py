"""Chat state for the desktop window: a pure reducer over SDK events and history, and the
redaction used wherever agent output is shown."""

from openclaw_desktop.chat.redact import REDACTED, redact, strip_control
from openclaw_desktop.chat.timeline import ChatItem, ChatTimeline, ItemStatus, ToolCard

__all__ = [
    "REDACTED",
    "ChatItem",
    "ChatTimeline",
    "ItemStatus",
    "ToolCard",
    "redact",
    "strip_control",
]
