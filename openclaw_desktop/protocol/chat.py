"""Chat, agent and talk event payloads (tolerant: the gateway adds fields over time)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import OpenModel
from openclaw_desktop.protocol.methods.chat import ChatSendParams

__all__ = [
    "AgentEvent",
    "ChatEvent",
    "ChatSendAck",
    "ChatSendParams",
    "ShutdownEvent",
    "TalkEvent",
    "TickEvent",
]

ChatState = Literal["status", "delta", "final", "aborted", "error"]


class ChatSendAck(OpenModel):
    """``chat.send`` response: ``{runId, status}``."""

    run_id: str
    status: str


class ChatEvent(OpenModel):
    """``chat`` event payload. ``seq`` is the per-run sequence shared with ``agent``."""

    run_id: str
    session_key: str
    state: ChatState
    seq: int | None = None
    agent_id: str | None = None
    phase: str | None = None
    delta_text: str | None = None
    #: The reference's schema leaves ``message`` and ``usage`` open (any JSON value).
    message: Any = None
    replace: bool | None = None
    stop_reason: str | None = None
    usage: Any = None
    error_message: str | None = None
    error_kind: str | None = None
    error_detail: dict[str, Any] | None = None


class AgentEvent(OpenModel):
    """``agent`` event payload: ``stream`` is lifecycle, assistant, item, tool, usage, ..."""

    run_id: str
    stream: str
    data: dict[str, Any] = Field(default_factory=dict)
    seq: int | None = None
    session_key: str | None = None
    session_id: str | None = None
    agent_id: str | None = None
    ts: int | None = None


class TalkEvent(OpenModel):
    """``talk.event`` envelope."""

    id: str
    type: str
    session_id: str
    seq: int = Field(ge=1)
    timestamp: int | str
    mode: str
    transport: str
    brain: str
    payload: Any = None
    turn_id: str | None = None
    capture_id: str | None = None
    provider: str | None = None
    final: bool | None = None


class TickEvent(OpenModel):
    """``tick`` payload."""

    ts: int = Field(ge=0)


class ShutdownEvent(OpenModel):
    """``shutdown`` payload."""

    reason: str
    restart_expected_ms: int | None = None
