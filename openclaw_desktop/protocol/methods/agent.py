"""``agent`` and ``agent.wait`` params, in the reference's property order (its error order
follows it); ``agents.list`` takes none (``EmptyParams``, in
:mod:`openclaw_desktop.protocol.methods.ops`).

Properties the bundled gateway takes without acting on them are :data:`UNCHECKED`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, WireModel
from openclaw_desktop.protocol.methods.schema import UNCHECKED

__all__ = ["PARAMS", "AgentParams", "AgentWaitParams"]

NonEmpty = Annotated[str, Field(min_length=1)]
Taken = Annotated[Any, UNCHECKED]


class AgentParams(ClosedModel):
    """``agent``: one agent turn; ``idempotencyKey`` becomes the runId.

    Checked beyond the schema by the handler, as the reference: an ``agentId`` other than
    the gateway's agent (``unknown agent id "<id>"``), and each attachment. The delivery,
    channel, workspace and prompt-mode properties are taken, not acted on (no channels,
    one model pool); ``provider`` and ``model`` are checked but not acted on either.
    """

    message: NonEmpty
    agent_id: NonEmpty | None = None
    provider: str | None = None
    model: str | None = None
    to: Taken = None
    reply_to: Taken = None
    session_id: str | None = None
    session_key: str | None = None
    expected_existing_session_id: Taken = None
    thinking: str | None = None
    deliver: bool | None = None
    attachments: list[Any] | None = None
    channel: Taken = None
    reply_channel: Taken = None
    account_id: Taken = None
    reply_account_id: Taken = None
    thread_id: Taken = None
    group_id: Taken = None
    group_channel: Taken = None
    group_space: Taken = None
    timeout: Annotated[int | None, Field(ge=0)] = None
    best_effort_deliver: Taken = None
    lane: Taken = None
    cwd: Taken = None
    cleanup_bundle_mcp_on_run_end: Taken = None
    model_run: Taken = None
    prompt_mode: Taken = None
    extra_system_prompt: Taken = None
    bootstrap_context_mode: Taken = None
    bootstrap_context_run_kind: Taken = None
    acp_turn_source: Taken = None
    internal_runtime_handoff_id: Taken = None
    internal_execution_identity_retry: Taken = None
    internal_execution_identity_recovery_attempt: Taken = None
    exec_approval_followup_expected_session_id: Taken = None
    internal_events: Taken = None
    input_provenance: Taken = None
    suppress_prompt_persistence: Taken = None
    session_effects: Taken = None
    source_reply_delivery_mode: Taken = None
    disable_message_tool: Taken = None
    swarm_collector: Taken = None
    swarm_output_schema: Taken = None
    force_restart_safe_tools: Taken = None
    force_code_mode_tools: Taken = None
    voice_wake_trigger: Taken = None
    idempotency_key: NonEmpty
    label: Annotated[str | None, Field(min_length=1, max_length=512)] = None


class AgentWaitParams(ClosedModel):
    """``agent.wait``: wait for a run's end, at most ``timeoutMs``."""

    run_id: NonEmpty
    timeout_ms: Annotated[int | None, Field(ge=0)] = None


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "agent": AgentParams,
    "agent.wait": AgentWaitParams,
}
