"""The ``health`` and ``status`` answers in the reference's shapes, from what this gateway has.

The real gateway reports agents, heartbeats, sessions, background tasks, channels, plugins
and its event loop; the real ``openclaw status --json`` reads ``sessions.byAgent`` and
``heartbeat.agents`` without a guard. Ours answers each part truthfully: its one agent and
its sessions from the state database; no heartbeat scheduler (so ``enabled: false``, the
reference's ``"disabled"`` interval), no channels, plugins, background tasks or system event
queue (empty, in the real shape). What it cannot measure (event-loop delay, V8 heap) it
leaves out, as the reference leaves out what it has not collected.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from gateway.chat.providers.base import ModelRef
from gateway.scopes import ADMIN
from gateway.state.sessions import ChatSession

__all__ = [
    "DEFAULT_AGENT_ID",
    "HEALTH_RECENT",
    "STATUS_RECENT",
    "AgentFacts",
    "health_answer",
    "status_answer",
]

#: The agent id the chat engine runs under unless configured otherwise.
DEFAULT_AGENT_ID = "main"

#: How many recent sessions ``health`` lists per agent (as the reference).
HEALTH_RECENT = 5
#: How many recent sessions ``status`` lists to ``operator.admin`` callers (as the reference).
STATUS_RECENT = 10
#: The reference's label of its default agent runtime, the one runtime this gateway has.
RUNTIME_LABEL = "OpenClaw Default"

#: The path the reference shows a caller without ``operator.admin``.
REDACTED = "[redacted]"

_TASK_STATUSES = ("queued", "running", "succeeded", "failed", "timed_out", "cancelled", "lost")
_TASK_RUNTIMES = ("subagent", "acp", "cli", "cron")
_AUDIT_CODES = (
    "stale_queued",
    "stale_running",
    "lost",
    "delivery_failed",
    "missing_cleanup",
    "inconsistent_timestamps",
)


class AgentFacts:
    """What ``health`` and ``status`` say about the agent: its id, where its sessions are
    kept, how many there are and the most recently updated ones (newest first)."""

    def __init__(
        self,
        agent_id: str,
        store_path: str,
        count: int,
        recent: Sequence[ChatSession],
        *,
        default_model: ModelRef | None = None,
        models: Sequence[ModelRef] = (),
    ) -> None:
        self.agent_id, self.store_path, self.count = agent_id, store_path, count
        self.recent = list(recent)
        #: The configured default model (None: offline, no provider) and every known model.
        self.default_model, self.models = default_model, list(models)


def _heartbeat_off() -> dict[str, Any]:
    """This gateway schedules no heartbeat runs: the reference's disabled summary."""
    return {"enabled": False, "every": "disabled", "everyMs": None}


def _health_sessions(facts: AgentFacts, now: int) -> dict[str, Any]:
    recent = [
        {
            "key": row.key,
            "updatedAt": row.updated_at_ms or None,
            "age": now - row.updated_at_ms if row.updated_at_ms else None,
        }
        for row in facts.recent[:HEALTH_RECENT]
    ]
    return {"path": facts.store_path, "count": facts.count, "recent": recent}


def health_answer(facts: AgentFacts, now: int, duration_ms: int) -> dict[str, Any]:
    """``health``: liveness, no channels, the agent with its (disabled) heartbeat and its
    sessions; ``modelRuntime`` not degraded (our providers load before we listen)."""
    sessions = _health_sessions(facts, now)
    return {
        "ok": True,
        "ts": now,
        "durationMs": duration_ms,
        "channels": {},
        "channelOrder": [],
        "channelLabels": {},
        "heartbeatSeconds": 0,
        "defaultAgentId": facts.agent_id,
        "agents": [
            {
                "agentId": facts.agent_id,
                "isDefault": True,
                "heartbeat": _heartbeat_off(),
                "sessions": sessions,
            }
        ],
        "sessions": sessions,
        "modelRuntime": {"degraded": False, "pendingAgents": []},
    }


def _tasks() -> dict[str, Any]:
    """No background task registry here: all counters zero, every bucket present."""
    return {
        "total": 0,
        "active": 0,
        "terminal": 0,
        "failures": 0,
        "byStatus": dict.fromkeys(_TASK_STATUSES, 0),
        "byRuntime": dict.fromkeys(_TASK_RUNTIMES, 0),
    }


def _task_audit() -> dict[str, Any]:
    return {"total": 0, "warnings": 0, "errors": 0, "byCode": dict.fromkeys(_AUDIT_CODES, 0)}


def _cli_projection(agent_id: str) -> dict[str, Any]:
    """What ``openclaw status`` asks for with ``includeCliProjection``: the agent roster,
    no update channel, and no memory plugin (this gateway loads no plugins)."""
    return {
        "agents": {
            "defaultId": agent_id,
            "ownership": "sole",
            "selectionRequired": False,
            "rows": [{"id": agent_id}],
        },
        "updateChannel": None,
        "memoryPlugin": {"enabled": False, "slot": None, "reason": "plugins disabled"},
    }


_NO_DEFAULTS: dict[str, Any] = {"model": None, "contextTokens": None}


def _model_defaults(facts: AgentFacts) -> dict[str, Any]:
    """The default model's id and context window (both null offline: no model at all)."""
    default = facts.default_model
    if default is None:
        return dict(_NO_DEFAULTS)
    return {"model": default.model, "contextTokens": default.context_window}


def _session_model(facts: AgentFacts, row: ChatSession) -> ModelRef | None:
    """The model a session runs on: its own choice, else the default."""
    for model in facts.models:
        if row.model in (model.ref, model.model):
            return model
    return facts.default_model


def _status_row(facts: AgentFacts, row: ChatSession, now: int) -> dict[str, Any]:
    """One ``sessions.recent`` row in the reference's shape. Token figures only when runs
    were counted (the reference's ``totalTokensFresh``); no cache or verbosity levels here."""
    model = _session_model(facts, row)
    default = facts.default_model
    context = model.context_window if model is not None else None
    total = row.input_tokens + row.output_tokens
    counted = total > 0
    entry: dict[str, Any] = {
        "agentId": row.agent_id,
        "key": row.key,
        "kind": "direct",
        "sessionId": row.session_id,
        "updatedAt": row.updated_at_ms or None,
        "age": now - row.updated_at_ms if row.updated_at_ms else None,
    }
    if row.thinking is not None:
        entry["thinkingLevel"] = row.thinking
    if row.aborted_last_run:
        entry["abortedLastRun"] = True
    if counted:
        entry |= {"inputTokens": row.input_tokens, "outputTokens": row.output_tokens}
    overridden = model is not None and default is not None and model.ref != default.ref
    entry |= {
        "totalTokens": total if counted else None,
        "totalTokensFresh": counted,
        "remainingTokens": max(0, context - total) if counted and context else None,
        "percentUsed": min(999, round(total / context * 100)) if counted and context else None,
        "model": model.model if model is not None else None,
        "configuredModel": default.ref if default is not None else None,
        "selectedModel": model.ref if model is not None else None,
        "modelSelectionReason": "session override" if overridden else None,
        "runtime": RUNTIME_LABEL,
        "contextTokens": context,
        "flags": _flags(row),
    }
    return entry


def _flags(row: ChatSession) -> list[str]:
    """The reference's session flags for what this gateway records."""
    flags = [f"think:{row.thinking}"] if row.thinking else []
    if row.aborted_last_run:
        flags.append("aborted")
    return [*flags, f"id:{row.session_id}"]


def status_answer(
    facts: AgentFacts,
    *,
    version: str,
    scopes: Sequence[str],
    cli_projection: bool,
    now: int,
) -> dict[str, Any]:
    """``status``: the reference's summary. Session details (paths, session rows, model
    defaults) are for ``operator.admin`` callers, as on the reference; others get the
    counts, the redacted path and empty rows."""
    sensitive = ADMIN in scopes
    path = facts.store_path if sensitive else REDACTED
    rows = (
        [_status_row(facts, row, now) for row in facts.recent[:STATUS_RECENT]] if sensitive else []
    )
    answer: dict[str, Any] = {"runtimeVersion": version}
    if cli_projection:
        answer["cliProjection"] = _cli_projection(facts.agent_id)
    answer |= {
        "hostDesktop": {"enabled": False, "state": "disabled"},
        "heartbeat": {
            "defaultAgentId": facts.agent_id,
            "agents": [{"agentId": facts.agent_id, **_heartbeat_off(), "waitingForRoute": False}],
        },
        "channelSummary": [],
        "queuedSystemEvents": [],
        "degradedSecretOwners": [],
        "degradedPlugins": [],
        "tasks": _tasks(),
        "taskAudit": _task_audit(),
        "sessions": {
            "paths": [facts.store_path] if sensitive else [],
            "count": facts.count,
            "defaults": _model_defaults(facts) if sensitive else _NO_DEFAULTS,
            "recent": rows,
            "byAgent": [
                {"agentId": facts.agent_id, "path": path, "count": facts.count, "recent": rows}
            ],
        },
        "modelRuntime": {"degraded": False, "pendingAgents": []},
        "workerPools": {},
        "pid": os.getpid(),
    }
    return answer
