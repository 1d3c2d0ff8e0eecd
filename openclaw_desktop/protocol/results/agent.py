"""Results of the agent methods (``agents.list``, ``agent``, ``agent.wait``,
``agent.identity.get``) and the model catalog (``models.*``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "AgentIdentityResult",
    "AgentResult",
    "AgentWaitResult",
    "AgentsListResult",
    "ModelsAuthStatusResult",
    "ModelsListResult",
]


class AgentsListResult(OpenModel):
    """``agents.list``: ``{defaultId, mainKey, scope, agents, ...}``."""

    default_id: str
    main_key: str
    scope: str
    agents: list[dict[str, Any]]
    ownership: str | None = None
    selection_required: bool | None = None


class AgentResult(OpenModel):
    """``agent``: answered twice, ``{runId, status: accepted, ...}`` at once and
    ``{runId, status, summary, result}`` when the run ends; both parse here."""

    run_id: str
    status: str
    session_key: str | None = None
    agent_id: str | None = None
    accepted_at: int | None = None
    summary: str | None = None
    result: dict[str, Any] | None = None


class AgentWaitResult(OpenModel):
    """``agent.wait``: ``{runId, status}`` (``ok``, ``error``, ``timeout``) and the end."""

    run_id: str
    status: str
    ended_at: int | None = None
    stop_reason: str | None = None
    terminal_reply: dict[str, Any] | None = None


class AgentIdentityResult(OpenModel):
    """``agent.identity.get``: ``{agentId, name, avatar, ...}``."""

    agent_id: str
    name: str | None = None
    avatar: str | None = None


class ModelsListResult(OpenModel):
    """``models.list``: ``{models}``."""

    models: list[dict[str, Any]]


class ModelsAuthStatusResult(OpenModel):
    """``models.authStatus``: ``{ts, providers}``, one row per model provider."""

    ts: int
    providers: list[dict[str, Any]]


RESULTS: dict[str, type[BaseModel]] = {
    "agents.list": AgentsListResult,
    "agent": AgentResult,
    "agent.wait": AgentWaitResult,
    "agent.identity.get": AgentIdentityResult,
    "models.list": ModelsListResult,
    "models.authStatus": ModelsAuthStatusResult,
}
"""Method name -> result model, for the agent family's methods."""
