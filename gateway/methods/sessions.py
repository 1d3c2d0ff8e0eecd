"""``sessions.*`` methods of the bundled gateway."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.events import now_ms
from gateway.chat.offline import SLASH_HELP
from gateway.chat.session_rows import session_row
from gateway.errors import invalid_request
from gateway.methods.chat import ChatEngine, _service, canonical_key
from gateway.methods.closed import model_checked
from gateway.methods.session_display import (
    display_changes,
    listed_by_display,
    require_archived,
)
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import (
    ADMIN,
    READ,
    sessions_create_scope,
    sessions_delete_scope,
    sessions_patch_scope,
)
from gateway.state import ChatSession
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods import (
    CommandsListParams,
    SessionsCreateParams,
    SessionsDeleteParams,
    SessionsDescribeParams,
    SessionsListParams,
    SessionsPatchParams,
    SessionsResetParams,
)

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = [
    "SessionsServices",
    "list_result",
    "requested_agent",
    "slash_commands",
    "table",
]

table = MethodTable()
"""The methods this module declares."""


class SessionsServices(ChatEngine, Protocol):
    """What the ``sessions.*`` methods and ``commands.list`` use of the gateway: the chat
    engine (its session index, transcripts and runs)."""


#: Filters naming what no session of this gateway has (a parent, a project, a board, an
#: owner other than the gateway's): given, they select nothing.
_SELECT_NOTHING = (
    "spawnedBy",
    "projectId",
    "workspaceDir",
    "hasBoard",
    "boardFace",
    "creatorId",
    "ownerId",
    "involvingProfileId",
    "profileRelation",
)


def _listed(service: ChatService, p: dict[str, Any], raw: Any) -> list[ChatSession]:
    """Every session the filters select, newest first."""
    rows = service.sessions.list(service.sessions.count() or 1, 0)
    given = raw if isinstance(raw, dict) else {}
    if any(given.get(name) is not None for name in _SELECT_NOTHING):
        return []
    rows = listed_by_display(rows, given)
    if p.get("agentId") is not None:
        rows = [r for r in rows if r.agent_id == p["agentId"]]
    if p.get("label") is not None:
        rows = [r for r in rows if r.label == p["label"]]
    if p.get("activeOnly"):
        rows = [r for r in rows if service.active_run_ids(r.key)]
    if p.get("search"):
        needle = p["search"].casefold()
        rows = [r for r in rows if needle in f"{r.key} {r.label or ''}".casefold()]
    return rows


def list_result(service: ChatService, params: Any, method: str = "sessions.list") -> dict[str, Any]:
    """The ``sessions.list`` answer to ``params`` (refused as the reference when invalid,
    naming ``method``: ``sessions.subscribe`` validates the same params)."""
    p = model_checked(method, SessionsListParams, params)
    limit, offset = min(p.get("limit", 100), 1000), p.get("offset", 0)
    selected = _listed(service, p, params)
    rows = selected[offset : offset + limit]
    total = len(selected)
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


@table.method(Method.SESSIONS_LIST, scope=READ, params=SessionsListParams, check=False)
async def sessions_list(gw: SessionsServices, peer: Peer, params: Any) -> Any:
    """``sessions.list {limit?, offset?, agentId?, label?, search?, activeOnly?, ...}``.

    Its params are checked by :func:`list_result`, not declared: the ``archived`` and
    ``profileRelation`` filters are properties the model admits unchecked (a boolean or
    ``"all"``), which a declared check would leave out of what the handler gets."""
    return list_result(_service(gw), params)


def requested_agent(service: ChatService, key: str, agent_id: str | None) -> None:
    """Refuse an ``agentId`` that is not this gateway's agent or not the key's (the
    reference's words)."""
    if agent_id is not None and agent_id != service.agent_id:
        raise invalid_request(f'Unknown agent id "{agent_id}"')
    parts = key.split(":")
    if agent_id is not None and len(parts) >= 3 and parts[0] == "agent" and parts[1] != agent_id:
        raise invalid_request(f'agent "{agent_id}" does not match session key agent "{parts[1]}"')


@table.method(Method.SESSIONS_DESCRIBE, scope=READ, params=SessionsDescribeParams)
async def sessions_describe(gw: SessionsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``sessions.describe {key, agentId?}``: one session's row, or ``{session: null}``."""
    service = _service(gw)
    if not p["key"].strip():
        raise invalid_request("key required")
    requested_agent(service, p["key"].strip(), p.get("agentId"))
    row = service.sessions.get(canonical_key(service, p["key"].strip()))
    return {"session": session_row(service, row) if row is not None else None}


@table.method(Method.COMMANDS_LIST, scope=READ, params=CommandsListParams)
async def commands_list(gw: SessionsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``commands.list {sessionKey?, agentId?, provider?, scope?, includeArgs?}``: the slash
    commands this gateway's chat runs itself (text commands; none is channel-native)."""
    if p.get("scope") == "native":
        return {"commands": []}
    return {"commands": slash_commands()}


def slash_commands() -> list[dict[str, Any]]:
    """The chat's slash commands as ``commands.list`` entries (from its own help text)."""
    out: list[dict[str, Any]] = []
    for line in SLASH_HELP.splitlines():
        usage, sep, description = line.partition(" — ")
        if not sep or not usage.startswith("/"):
            continue
        name, _, args = usage[1:].partition(" ")
        out.append(
            {
                "name": name,
                "textAliases": [f"/{name}"],
                "description": description.strip(),
                "category": "status" if name == "help" else "tools",
                "source": "native",
                "scope": "text",
                "acceptsArgs": bool(args.strip()),
            }
        )
    return out


def _model_ref(service: ChatService, wanted: str) -> str:
    for model in service.providers.models:
        if wanted in (model.ref, model.model):
            return model.ref
    known = ", ".join(m.ref for m in service.providers.models) or "none (offline mode)"
    raise invalid_request(f"unknown model {wanted!r}; available: {known}")


@table.method(Method.SESSIONS_CREATE, scope=sessions_create_scope, params=SessionsCreateParams)
async def sessions_create(gw: SessionsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``sessions.create {key?, label?, model?, thinkingLevel?, message?}``."""
    service = _service(gw)
    raw_key = p.get("key") or f"agent:{service.agent_id}:dashboard:{uuid.uuid4()}"
    key = canonical_key(service, raw_key)
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


@table.method(Method.SESSIONS_PATCH, scope=sessions_patch_scope, params=SessionsPatchParams)
async def sessions_patch(gw: SessionsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``sessions.patch {key, label?, model?, thinkingLevel?, archived?, pinned?, unread?,
    icon?, color?, category?, expectedSessionId?}``: the other reference fields are accepted
    and not applied."""
    service = _service(gw)
    key = canonical_key(service, p["key"])
    current = service.sessions.get(key)
    if current is None:
        raise invalid_request(f"unknown session {key}")
    is_main = key == f"agent:{current.agent_id}:main"
    changes = display_changes(p, current, is_main=is_main, now=now_ms())
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


@table.method(Method.SESSIONS_RESET, scope=ADMIN, params=SessionsResetParams)
async def sessions_reset(gw: SessionsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``sessions.reset {key, reason?}``: a new session id and an empty transcript (the old
    one is archived, not deleted)."""
    service = _service(gw)
    key = canonical_key(service, p["key"])
    service.abort(key)
    service.sessions.ensure(key, service.agent_id, now_ms())
    await asyncio.to_thread(service.store.reset, key)
    row = service.sessions.renew(key, now_ms())
    assert row is not None
    service.sessions_changed(key, "reset")
    return {"ok": True, "key": key, "entry": session_row(service, row)}


@table.method(Method.SESSIONS_DELETE, scope=sessions_delete_scope, params=SessionsDeleteParams)
async def sessions_delete(gw: SessionsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``sessions.delete {key}``: the index row goes, the transcript is archived."""
    service = _service(gw)
    key = canonical_key(service, p["key"])
    if p.get("archivedOnly") is True:
        require_archived(service.sessions.get(key), key)
    service.abort(key)
    existed = service.sessions.delete(key)
    await asyncio.to_thread(service.store.delete, key)
    service.sessions_changed(key, "delete")
    return {"ok": True, "key": key, "deleted": existed}
