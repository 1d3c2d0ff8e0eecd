"""Results of the chat methods (``chat.*``); ``chat.send`` reuses
:class:`openclaw_desktop.protocol.chat.ChatSendAck`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel
from openclaw_desktop.protocol.chat import ChatSendAck

__all__ = [
    "RESULTS",
    "ChatAbortResult",
    "ChatHistoryResult",
    "ChatInjectResult",
    "ChatMessageGetResult",
    "ChatMetadataResult",
    "ChatStartupResult",
]


class ChatAbortResult(OpenModel):
    """``chat.abort``: ``{ok, aborted, runIds}`` (the runs it stopped)."""

    ok: bool
    aborted: bool
    run_ids: list[str]


class ChatHistoryResult(OpenModel):
    """``chat.history``: the session's transcript, oldest first."""

    session_key: str
    messages: list[dict[str, Any]]
    session_id: str | None = None
    has_more: bool | None = None
    total_messages: int | None = None
    thinking_level: str | None = None
    defaults: dict[str, Any] | None = None
    session_info: dict[str, Any] | None = None


class ChatMessageGetResult(OpenModel):
    """``chat.message.get``: ``{ok, message}`` or ``{ok: false, unavailableReason}``."""

    ok: bool
    message: dict[str, Any] | None = None
    unavailable_reason: str | None = None


class ChatInjectResult(OpenModel):
    """``chat.inject``: ``{ok, messageId}``."""

    ok: bool
    message_id: str | None = None


class ChatMetadataResult(OpenModel):
    """``chat.metadata``: the models and commands the chat composer offers."""

    models: list[dict[str, Any]]
    commands: list[dict[str, Any]] | None = None


class ChatStartupResult(OpenModel):
    """``chat.startup``: what the chat view needs to open a session (history and more)."""

    session_key: str
    messages: list[dict[str, Any]] | None = None


RESULTS: dict[str, type[BaseModel]] = {
    "chat.send": ChatSendAck,
    "chat.abort": ChatAbortResult,
    "chat.history": ChatHistoryResult,
    "chat.message.get": ChatMessageGetResult,
    "chat.inject": ChatInjectResult,
    "chat.metadata": ChatMetadataResult,
    "chat.startup": ChatStartupResult,
}
"""Method name -> result model, for the chat family's methods."""
