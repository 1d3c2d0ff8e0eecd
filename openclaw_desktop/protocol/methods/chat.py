"""``chat.*`` params, in the reference's property order (its error order follows it).

Properties the bundled gateway takes without acting on them are :data:`UNCHECKED`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, WireModel
from openclaw_desktop.protocol.methods.schema import AS_ENUM, UNCHECKED

__all__ = [
    "HISTORY_LIMIT_MAX",
    "PARAMS",
    "ChatAbortParams",
    "ChatHistoryParams",
    "ChatInjectParams",
    "ChatMessageGetParams",
    "ChatSendParams",
]

#: ``chat.history`` ``limit`` bound (the real gateway's).
HISTORY_LIMIT_MAX = 1000

NonEmpty = Annotated[str, Field(min_length=1)]
Taken = Annotated[Any, UNCHECKED]
QueueMode = Literal["steer", "followup", "collect", "interrupt"]


class ChatSendParams(ClosedModel):
    """``chat.send``: a user message into a session; ``idempotencyKey`` becomes the runId.

    Checked beyond the schema by the handler, as the reference: ``message or attachments
    required`` (a blank message needs an attachment), and each attachment (an object with
    ``mimeType`` and base64 ``content``, within the size limits).
    """

    session_key: Annotated[str, Field(min_length=1, max_length=512)]
    agent_id: NonEmpty | None = None
    session_id: Taken = None
    message: str
    mentions: Taken = None
    work_context: Taken = None
    intent: Taken = None
    thinking: str | None = None
    fast_mode: Taken = None
    fast_auto_on_seconds: Taken = None
    queue_mode: Annotated[QueueMode | None, AS_ENUM] = None
    deliver: Taken = None
    originating_channel: Taken = None
    originating_to: Taken = None
    originating_account_id: Taken = None
    originating_thread_id: Taken = None
    reply_to_id: Taken = None
    attachments: list[dict[str, Any]] | None = None
    tool_bindings: Taken = None
    timeout_ms: Annotated[int | None, Field(ge=0)] = None
    system_input_provenance: Taken = None
    system_provenance_receipt: Taken = None
    suppress_command_interpretation: Taken = None
    expected_leaf_entry_id: Taken = None
    expected_session_routing_contract: Taken = None
    expected_permission_mode: Taken = None
    expected_tool_overrides: Taken = None
    idempotency_key: NonEmpty


class ChatAbortParams(ClosedModel):
    """``chat.abort``: stop a session's runs (one, with ``runId``)."""

    session_key: NonEmpty
    run_id: NonEmpty | None = None
    agent_id: str | None = None
    preserve_side_runs: Taken = None


class ChatHistoryParams(ClosedModel):
    """``chat.history``: a session's visible messages, bounded."""

    session_key: NonEmpty
    agent_id: str | None = None
    cursor: Taken = None
    limit: Annotated[int | None, Field(ge=1, le=HISTORY_LIMIT_MAX)] = None
    max_bytes: Annotated[int | None, Field(ge=1024)] = None
    offset: Taken = None
    pending_before: Annotated[int | None, Field(ge=1)] = None
    input_run_ids: list[Any] | None = None
    message_id: Taken = None
    session_id: Taken = None
    max_chars: Annotated[int | None, Field(ge=1, le=500_000)] = None


class ChatMessageGetParams(ClosedModel):
    """``chat.message.get``: one message whole."""

    session_key: NonEmpty
    agent_id: str | None = None
    message_id: NonEmpty
    max_chars: Annotated[int | None, Field(ge=1, le=2_000_000)] = None


class ChatInjectParams(ClosedModel):
    """``chat.inject``: an assistant note in a session's transcript, no run."""

    session_key: NonEmpty
    agent_id: str | None = None
    message: NonEmpty
    label: Annotated[str | None, Field(max_length=100)] = None


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "chat.send": ChatSendParams,
    "chat.abort": ChatAbortParams,
    "chat.history": ChatHistoryParams,
    "chat.message.get": ChatMessageGetParams,
    "chat.inject": ChatInjectParams,
}
