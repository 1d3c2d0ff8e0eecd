"""``sessions.*`` and ``models.*`` methods of the bundled gateway."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any

from gateway.chat.events import now_ms
from gateway.chat.params import Field, check
from gateway.errors import invalid_request
from gateway.methods.chat import _canonical, _service
from gateway.peer import Peer
from gateway.rpc import MethodTable
from gateway.scopes import ADMIN, READ, WRITE
from gateway.state import ChatSession

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.core import GatewayCore

__all__ = ["session_row", "table"]

table = MethodTable()
"""The methods this module declares."""

_PATCH_IGNORED = (
    "expectedSessionId",
    "expectedLifecycleRevision",
    "expectedPermissionMode",
    "expectedSandboxMode",
    "expectedNativeRuntimeConsent",
    "expectedToolOverrides",
    "expectedMarkedUnreadAt",
    "autoLabel",
    "icon",
    "color",
    "category",
    "boardFace",
    "boardPresentation",
    "statusNote",
    "attention",
    "ttlMinutes",
    "archived",
    "pinned",
    "unread",
    "contextWindow",
    "fastMode",
    "toolOverrides",
    "verboseLevel",
    "traceLevel",
    "reasoningLevel",
    "responseUsage",
    "elevatedLevel",
    "execHost",
    "execSecurity",
    "execAsk",
    "execNode",
    "permissionMode",
    "sandboxMode",
    "nativeRuntimeConsent",
    "agentRuntime",
    "completionOwnerSessionKey",
    "inheritedToolPolicyVersion",
    "inheritedToolAllow",
    "inheritedToolDeny",
    "sendPolicy",
)


def session_row(service: ChatService, row: ChatSession) -> dict[str, Any]:
    """One ``sessions.list`` entry."""
    provider, _, model = (row.model or "").partition("/")
    default = service.providers.model
    active = service.active_run_ids(row.key)
    entry: dict[str, Any] = {
        "key": row.key,
        "sessionId": row.session_id,
        "agentId": row.agent_id,
        "kind": "direct",
        "isMain": row.key == f"agent:{row.agent_id}:main",
        "createdAt": row.created_at_ms,
        "updatedAt": row.updated_at_ms,
        "status": "running" if active else row.status,
        "abortedLastRun": row.aborted_last_run,
        "inputTokens": row.input_tokens,
        "outputTokens": row.output_tokens,
        "totalTokens": row.input_tokens + row.output_tokens,
        "compactionCount": row.compactions,
        "modelProvider": provider or (default.provider if default else None),
        "model": model or (default.model if default else None),
        "contextTokens": default.context_window if default else None,
        "hasActiveRun": bool(active),
        "activeRunIds": active,
    }
    for name, value in (
        ("label", row.label),
        ("thinkingLevel", row.thinking),
        ("lastRunId", row.last_run_id),
    ):
        if value is not None:
            entry[name] = value
    return entry


@table.method("sessions.list", scope=READ)
async def sessions_list(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.list {limit?, offset?}``."""
    p = check(
        "sessions.list",
        params,
        {
            "limit": Field("integer", minimum=1),
            "offset": Field("integer", minimum=0),
            "label": Field("string"),
        },
        ignored=(
            "activeMinutes",
            "activeOnly",
            "requireLastInteraction",
            "sortBy",
            "includeGlobal",
            "includeUnknown",
            "excludeSubagents",
            "excludeCron",
            "excludeSystem",
            "configuredAgentsOnly",
            "includeDerivedTitles",
            "includeLastMessage",
            "includeActivitySummary",
            "projectId",
            "workspaceDir",
            "group",
            "pinned",
        ),
    )
    service = _service(core)
    limit, offset = min(p.get("limit", 100), 1000), p.get("offset", 0)
    rows = service.sessions.list(limit, offset)
    if p.get("label") is not None:
        rows = [r for r in rows if r.label == p["label"]]
    total = service.sessions.count()
    default = service.providers.model
    return {
        "ts": now_ms(),
        "count": len(rows),
        "totalCount": total,
        "limitApplied": limit,
        "nextOffset": offset + len(rows) if offset + len(rows) < total else None,
        "hasMore": offset + len(rows) < total,
        "defaults": {
            "modelProvider": default.provider if default else None,
            "model": default.model if default else None,
            "contextTokens": default.context_window if default else None,
        },
        "sessions": [session_row(service, r) for r in rows],
    }


def _model_ref(service: ChatService, wanted: str) -> str:
    for model in service.providers.models:
        if wanted in (model.ref, model.model):
            return model.ref
    known = ", ".join(m.ref for m in service.providers.models) or "none (offline mode)"
    raise invalid_request(f"unknown model {wanted!r}; available: {known}")


@table.method("sessions.create", scope=WRITE)
async def sessions_create(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.create {key?, label?, model?, thinkingLevel?, message?}``."""
    p = check(
        "sessions.create",
        params,
        {
            "key": Field("string", min_length=1, max_length=512),
            "idempotencyKey": Field("string", min_length=1),
            "agentId": Field("string"),
            "label": Field("string", min_length=1, max_length=200),
            "model": Field("string", min_length=1),
            "thinkingLevel": Field("string", min_length=1),
            "message": Field("string"),
        },
        ignored=(
            "displayName",
            "titleSource",
            "category",
            "agentRuntime",
            "contextWindow",
            "fastMode",
            "visibility",
            "parentSessionKey",
            "timeoutMs",
            "task",
            "mentions",
            "attachments",
        ),
    )
    service = _service(core)
    raw_key = p.get("key") or f"agent:{service.agent_id}:dashboard:{uuid.uuid4()}"
    key = _canonical(service, raw_key)
    model = _model_ref(service, p["model"]) if p.get("model") else None
    row = service.sessions.ensure(key, service.agent_id, now_ms(), label=p.get("label"))
    row = (
        service.sessions.update(
            key, now_ms(), model=model or row.model, thinking=p.get("thinkingLevel") or row.thinking
        )
        or row
    )
    await service.transcript(key)
    run_started = False
    if p.get("message"):
        service.send(key, p.get("idempotencyKey") or str(uuid.uuid4()), p["message"])
        run_started = True
    return {
        "ok": True,
        "key": key,
        "sessionId": row.session_id,
        "entry": session_row(service, row),
        "runStarted": run_started,
    }


@table.method("sessions.patch", scope=WRITE)
async def sessions_patch(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.patch {key, label?, model?, thinkingLevel?}``."""
    p = check(
        "sessions.patch",
        params,
        {
            "key": Field("string", required=True, min_length=1),
            "agentId": Field("string"),
            "label": Field("string", max_length=200, nullable=True),
            "model": Field("string", nullable=True),
            "thinkingLevel": Field("string"),
        },
        ignored=_PATCH_IGNORED,
    )
    service = _service(core)
    key = _canonical(service, p["key"])
    if service.sessions.get(key) is None:
        raise invalid_request(f"unknown session {key}")
    changes: dict[str, Any] = {}
    if "label" in p:
        changes["label"] = p["label"] or None
    if "model" in p:
        changes["model"] = _model_ref(service, p["model"]) if p["model"] else None
    if "thinkingLevel" in p:
        changes["thinking"] = p["thinkingLevel"] or None
    row = service.sessions.update(key, now_ms(), **changes)
    assert row is not None
    service.sessions_changed(key, "patch")
    return {"ok": True, "key": key, "entry": session_row(service, row)}


@table.method("sessions.reset", scope=ADMIN)
async def sessions_reset(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.reset {key, reason?}``: a new session id and an empty transcript (the old
    one is archived, not deleted)."""
    p = check(
        "sessions.reset",
        params,
        {
            "key": Field("string", required=True, min_length=1),
            "agentId": Field("string"),
            "reason": Field("string", enum=("new", "reset")),
        },
        ignored=("expectedSessionId",),
    )
    service = _service(core)
    key = _canonical(service, p["key"])
    service.abort(key)
    service.sessions.ensure(key, service.agent_id, now_ms())
    await asyncio.to_thread(service.store.reset, key)
    row = service.sessions.renew(key, now_ms())
    assert row is not None
    service.sessions_changed(key, "reset")
    return {"ok": True, "key": key, "entry": session_row(service, row)}


@table.method("sessions.delete", scope=ADMIN)
async def sessions_delete(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.delete {key}``: the index row goes, the transcript is archived."""
    p = check(
        "sessions.delete",
        params,
        {
            "key": Field("string", required=True, min_length=1),
            "agentId": Field("string"),
            "deleteTranscript": Field("boolean"),
        },
        ignored=(
            "expectedSessionId",
            "expectedLifecycleRevision",
            "expectedSessionUpdatedAt",
            "emitLifecycleHooks",
            "archivedOnly",
        ),
    )
    service = _service(core)
    key = _canonical(service, p["key"])
    service.abort(key)
    existed = service.sessions.delete(key)
    await asyncio.to_thread(service.store.delete, key)
    service.sessions_changed(key, "delete")
    return {"ok": True, "key": key, "deleted": existed}


@table.method("models.list", scope=READ)
async def models_list(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``models.list``: the models of the configured providers."""
    check(
        "models.list",
        params,
        {"view": Field("string"), "preparedOnly": Field("boolean"), "refresh": Field("boolean")},
    )
    service = _service(core)
    default = service.providers.model
    models = []
    for model in service.providers.models:
        entry: dict[str, Any] = {
            "id": model.model,
            "name": model.name or model.model,
            "provider": model.provider,
            "contextWindow": model.context_window,
            "reasoning": model.reasoning,
            "input": ["text", "image"] if model.vision else ["text"],
            "available": True,
        }
        if default is not None and model.ref == default.ref:
            entry["tags"] = ["default"]
        models.append(entry)
    return {"models": models}


@table.method("models.authStatus", scope=READ)
async def models_auth_status(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``models.authStatus``: which providers are configured and from where (no secrets)."""
    check("models.authStatus", params, {})
    service = _service(core)
    providers = sorted({m.provider for m in service.providers.models})
    return {
        "ts": now_ms(),
        "providers": [
            {"provider": name, "displayName": name, "status": "static"} for name in providers
        ],
        "sources": list(service.providers.sources),
        "offline": service.providers.pool is None,
    }
