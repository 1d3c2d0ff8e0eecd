"""``sessions.*`` (and ``commands.list``) params, in the reference's property order.

Properties the bundled gateway takes without acting on them are :data:`UNCHECKED`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, WireModel
from openclaw_desktop.protocol.methods.schema import NULLABLE, UNCHECKED

__all__ = [
    "PARAMS",
    "CommandsListParams",
    "SessionsCreateParams",
    "SessionsDeleteParams",
    "SessionsDescribeParams",
    "SessionsListParams",
    "SessionsMessagesSubscribeParams",
    "SessionsMessagesUnsubscribeParams",
    "SessionsPatchParams",
    "SessionsResetParams",
]

NonEmpty = Annotated[str, Field(min_length=1)]
Taken = Annotated[Any, UNCHECKED]
NullableText = Annotated[str | None, NULLABLE]


class SessionsListParams(ClosedModel):
    """``sessions.list`` (and ``sessions.subscribe``): filters and a page."""

    limit: Annotated[int | None, Field(ge=1)] = None
    offset: Annotated[int | None, Field(ge=0)] = None
    active_minutes: Annotated[int | None, Field(ge=1)] = None
    active_only: bool | None = None
    require_last_interaction: bool | None = None
    sort_by: Literal["updatedAt", "lastInteractionAt", "activity"] | None = None
    include_global: bool | None = None
    include_unknown: bool | None = None
    exclude_subagents: bool | None = None
    exclude_cron: bool | None = None
    exclude_system: bool | None = None
    configured_agents_only: bool | None = None
    include_derived_titles: bool | None = None
    include_last_message: bool | None = None
    include_activity_summary: bool | None = None
    label: str | None = None
    project_id: NonEmpty | None = None
    workspace_dir: NonEmpty | None = None
    group: str | None = None
    pinned: bool | None = None
    board_face: Literal["chat", "dashboard"] | None = None
    has_board: bool | None = None
    creator_id: NonEmpty | None = None
    owner_id: NonEmpty | None = None
    owner_first: bool | None = None
    involving_me: bool | None = None
    profile_relation: Taken = None
    involving_profile_id: NonEmpty | None = None
    include_people: bool | None = None
    spawned_by: NonEmpty | None = None
    agent_id: NonEmpty | None = None
    search: str | None = None
    archived: Taken = None


class SessionsDescribeParams(ClosedModel):
    """``sessions.describe``: one session's row."""

    key: NonEmpty
    agent_id: NonEmpty | None = None
    include_derived_titles: bool | None = None
    include_last_message: bool | None = None


class CommandsListParams(ClosedModel):
    """``commands.list``: the slash commands."""

    session_key: NonEmpty | None = None
    agent_id: NonEmpty | None = None
    provider: NonEmpty | None = None
    scope: Literal["text", "native", "both"] | None = None
    include_args: bool | None = None


class SessionsCreateParams(ClosedModel):
    """``sessions.create``: a new session, optionally with a first message."""

    key: Annotated[str | None, Field(min_length=1, max_length=512)] = None
    idempotency_key: NonEmpty | None = None
    agent_id: str | None = None
    label: Annotated[str | None, Field(min_length=1, max_length=512)] = None
    display_name: Taken = None
    title_source: Taken = None
    category: Taken = None
    model: NonEmpty | None = None
    agent_runtime: Taken = None
    context_window: Taken = None
    thinking_level: NonEmpty | None = None
    fast_mode: Taken = None
    visibility: Taken = None
    parent_session_key: Taken = None
    timeout_ms: Taken = None
    task: Taken = None
    message: str | None = None
    mentions: Taken = None
    attachments: Taken = None


class SessionsPatchParams(ClosedModel):
    """``sessions.patch``: change a session's settings and display (``null`` clears)."""

    key: NonEmpty
    agent_id: str | None = None
    expected_session_id: NonEmpty | None = None
    expected_lifecycle_revision: Taken = None
    expected_permission_mode: Taken = None
    expected_sandbox_mode: Taken = None
    expected_native_runtime_consent: Taken = None
    expected_tool_overrides: Taken = None
    expected_marked_unread_at: Taken = None
    label: Annotated[str | None, NULLABLE, Field(max_length=512)] = None
    auto_label: Taken = None
    icon: NullableText = None
    color: NullableText = None
    category: Annotated[str | None, NULLABLE, Field(max_length=512)] = None
    board_face: Taken = None
    board_presentation: Taken = None
    status_note: Taken = None
    attention: Taken = None
    ttl_minutes: Taken = None
    archived: bool | None = None
    pinned: bool | None = None
    unread: bool | None = None
    context_window: Taken = None
    thinking_level: Annotated[str | None, NULLABLE, Field(min_length=1)] = None
    fast_mode: Taken = None
    tool_overrides: Taken = None
    verbose_level: Taken = None
    trace_level: Taken = None
    reasoning_level: Taken = None
    response_usage: Taken = None
    elevated_level: Taken = None
    exec_host: Taken = None
    exec_security: Taken = None
    exec_ask: Taken = None
    exec_node: Taken = None
    permission_mode: Taken = None
    sandbox_mode: Taken = None
    native_runtime_consent: Taken = None
    model: NullableText = None
    agent_runtime: Taken = None
    completion_owner_session_key: Taken = None
    inherited_tool_policy_version: Taken = None
    inherited_tool_allow: Taken = None
    inherited_tool_deny: Taken = None
    send_policy: Taken = None


class SessionsResetParams(ClosedModel):
    """``sessions.reset``: a new session id and an empty transcript."""

    key: NonEmpty
    agent_id: str | None = None
    reason: Literal["new", "reset"] | None = None
    expected_session_id: Taken = None


class SessionsDeleteParams(ClosedModel):
    """``sessions.delete``: the session goes, its transcript is archived."""

    key: NonEmpty
    agent_id: str | None = None
    delete_transcript: bool | None = None
    expected_session_id: Taken = None
    expected_lifecycle_revision: Taken = None
    expected_session_updated_at: Taken = None
    emit_lifecycle_hooks: Taken = None
    archived_only: bool | None = None


class SessionsMessagesSubscribeParams(ClosedModel):
    """``sessions.messages.subscribe``: one session's ``session.message`` events (with
    ``includeApprovals: true``, which only ``true`` may be, also a replay of its pending
    approvals)."""

    key: NonEmpty
    agent_id: NonEmpty | None = None
    include_approvals: Literal[True] | None = None


class SessionsMessagesUnsubscribeParams(ClosedModel):
    """``sessions.messages.unsubscribe``: no more of that session's events."""

    key: NonEmpty
    agent_id: NonEmpty | None = None


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "sessions.list": SessionsListParams,
    "sessions.subscribe": SessionsListParams,
    "sessions.messages.subscribe": SessionsMessagesSubscribeParams,
    "sessions.messages.unsubscribe": SessionsMessagesUnsubscribeParams,
    "sessions.describe": SessionsDescribeParams,
    "commands.list": CommandsListParams,
    "sessions.create": SessionsCreateParams,
    "sessions.patch": SessionsPatchParams,
    "sessions.reset": SessionsResetParams,
    "sessions.delete": SessionsDeleteParams,
}
