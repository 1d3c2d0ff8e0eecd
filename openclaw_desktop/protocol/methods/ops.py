"""``models.list``, ``cron.*``, ``exec.approvals.*``, ``logs.tail`` and the other operations'
params, in the reference's property order.

The open models (``health``, ``status``, ``system-presence``, ``models.authStatus``) list
what the gateway reads of params the reference serves whatever they hold, objects or not;
the gateway does not declare them on its method table, because the derived schema
(``type: object``) would refuse params that are not an object, which the reference serves.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, OpenModel, WireModel

__all__ = [
    "PARAMS",
    "CronListParams",
    "EmptyParams",
    "ExecApprovalsNodeGetParams",
    "ExecApprovalsNodeSetParams",
    "HealthParams",
    "LogsTailParams",
    "ModelsAuthStatusParams",
    "ModelsListParams",
    "StatusParams",
    "SystemPresenceParams",
]

NonEmpty = Annotated[str, Field(min_length=1)]


class ModelsListParams(ClosedModel):
    """``models.list`` (its ``allOf``/``not`` refusing ``preparedOnly`` with ``refresh``
    is not a property schema: the gateway's handler checks it)."""

    agent_id: NonEmpty | None = None
    session_key: NonEmpty | None = None
    auth_profile_id: NonEmpty | None = None
    provider: NonEmpty | None = None
    include_details: bool | None = None
    include_provider_capabilities: bool | None = None
    include_default_models: bool | None = None
    prepared_only: bool | None = None
    refresh: bool | None = None
    view: Literal["default", "configured", "provider-config", "all"] | None = None


class ModelsAuthStatusParams(OpenModel):
    """``models.authStatus``: the reference declares a closed schema but its handler
    checks none, so any params are served; what it reads is listed (any value: a
    non-string ``agentId`` is named by its JavaScript type in the refusal)."""

    refresh: Any = None
    agent_id: Any = None


class CronListParams(ClosedModel):
    """``cron.list``: a page of cron jobs, filtered and sorted."""

    session_key: NonEmpty | None = None
    session_agent_id: NonEmpty | None = None
    include_disabled: bool | None = None
    limit: Annotated[int | None, Field(ge=1, le=200)] = None
    offset: Annotated[int | None, Field(ge=0)] = None
    query: str | None = None
    enabled: Literal["all", "enabled", "disabled"] | None = None
    schedule_kind: Literal["all", "at", "every", "cron", "on-exit", "stream"] | None = None
    last_run_status: Literal["all", "ok", "error", "skipped", "unknown"] | None = None
    trigger: Literal["all", "conditional", "unconditional"] | None = None
    sort_by: Literal["nextRunAtMs", "updatedAtMs", "name"] | None = None
    sort_dir: Literal["asc", "desc"] | None = None
    agent_id: NonEmpty | None = None
    compact: bool | None = None
    include_delivery_previews: bool | None = None


class ExecApprovalsNodeGetParams(ClosedModel):
    """``exec.approvals.node.get``: a node's exec policy."""

    node_id: NonEmpty


class ExecApprovalsNodeSetParams(ClosedModel):
    """``exec.approvals.node.set`` without its ``oneOf`` (``file``, or ``native`` with
    ``baseHash``: the gateway's handler checks it)."""

    node_id: NonEmpty
    file: dict[str, Any] | None = None
    native: dict[str, Any] | None = None
    base_hash: NonEmpty | None = None


class LogsTailParams(ClosedModel):
    """``logs.tail``: the newest lines of the gateway's log, from ``cursor`` when given."""

    cursor: Annotated[int | None, Field(ge=0)] = None
    limit: Annotated[int | None, Field(ge=1, le=5000)] = None
    max_bytes: Annotated[int | None, Field(ge=1, le=1_000_000)] = None


class EmptyParams(ClosedModel):
    """The params of a method that takes none (``agents.list``, ``config.get``,
    ``cron.status``, ``exec.approvals.get``): an empty closed object."""


class HealthParams(OpenModel):
    """``health``: served whatever its params hold (the reference checks none); ``probe:
    true`` asks for a fresh snapshot instead of the cached one."""

    probe: Any = None


class StatusParams(OpenModel):
    """``status``: served whatever its params hold; ``includeCliProjection: true`` adds
    the roster ``openclaw status`` reads, ``includeChannelSummary: false`` leaves the
    channel summary out."""

    include_channel_summary: Any = None
    include_cli_projection: Any = None


class SystemPresenceParams(OpenModel):
    """``system-presence``: served whatever its params hold (it reads none)."""


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "models.list": ModelsListParams,
    "models.authStatus": ModelsAuthStatusParams,
    "health": HealthParams,
    "status": StatusParams,
    "system-presence": SystemPresenceParams,
    "cron.list": CronListParams,
    "exec.approvals.node.get": ExecApprovalsNodeGetParams,
    "exec.approvals.node.set": ExecApprovalsNodeSetParams,
    "logs.tail": LogsTailParams,
    "agents.list": EmptyParams,
    "config.get": EmptyParams,
    "cron.status": EmptyParams,
    "exec.approvals.get": EmptyParams,
}
