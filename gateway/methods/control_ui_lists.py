"""Control UI methods about the gateway as a whole: catalogues this gateway has none of
(session catalogues and groups, mentions, questions, projects, tasks and suggestions, user
preferences, Control UI plugins, plugin surfaces), ``system.info`` and ``update.status``.

Each answers the honest empty result in the reference's shape; see
:mod:`gateway.methods.control_ui`."""

from __future__ import annotations

import asyncio
import hashlib
from typing import TYPE_CHECKING, Any

from gateway.chat.params import Field
from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.methods.control_ui_host import system_info_payload
from gateway.methods.control_ui_params import NON_EMPTY, check_closed, check_empty, string_items
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, READ, WRITE
from openclaw_desktop.protocol import ErrorCode, error_shape

if TYPE_CHECKING:
    from gateway.app import GatewayApp

__all__ = ["QUESTIONS", "table"]

table = MethodTable()
"""The methods this module declares."""

#: The scope ``question.list`` needs (the reference's ``operator.questions``).
QUESTIONS = "operator.questions"

_TASK_STATUSES = ("queued", "running", "completed", "failed", "cancelled", "timed_out")


# ----------------------------------------------------------------- gateway-wide catalogues


@table.method("sessions.catalog.list", scope=READ)
async def sessions_catalog_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.catalog.list {catalogId?, agentId?, ...}``: external session catalogues
    (coding-agent hosts); there are none here."""
    check_closed(
        "sessions.catalog.list",
        params,
        {
            "catalogId": NON_EMPTY,
            "metadataOnly": Field("boolean"),
            "cursors": Field("object"),
            "agentId": NON_EMPTY,
            "progressId": Field("string", min_length=1, max_length=128),
            "allowPartialResults": Field("boolean"),
            "search": Field("string"),
            "limitPerHost": Field("integer", minimum=1),
            "hostIds": Field("array"),
        },
    )
    return {"catalogs": []}


@table.method("sessions.groups.list", scope=READ)
async def sessions_groups_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.groups.list {}``: custom session groups (none here)."""
    check_empty("sessions.groups.list", params)
    return {"groups": [], "sectionOrder": []}


@table.method("sessions.groups.defaults", scope=WRITE)
async def sessions_groups_defaults(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.groups.defaults {}``: per-group defaults (none here)."""
    check_empty("sessions.groups.defaults", params)
    return {"defaults": []}


@table.method("mentions.list", scope=READ)
async def mentions_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``mentions.list {}``: the mention inbox of this gateway instance (empty here)."""
    check_empty("mentions.list", params)
    return {"gatewayInstanceId": core.boot_id, "revision": 0, "items": []}


@table.method("question.list", scope=QUESTIONS)
async def question_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``question.list {}``: questions the agent asked the operator (the agent asks none)."""
    check_empty("question.list", params)
    return {"questions": []}


@table.method("projects.list", scope=READ)
async def projects_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``projects.list {includeObserved?}``: the agent has no workspace or projects here."""
    p = check_closed("projects.list", params, {"includeObserved": Field("boolean")})
    result: dict[str, Any] = {"projects": []}
    if p.get("includeObserved"):
        result["observedProjects"] = []
    else:
        result["recents"] = []
    return result


@table.method("taskSuggestions.list", scope=READ)
async def task_suggestions_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``taskSuggestions.list {sessionKey?, agentId?}``: none are made here."""
    check_closed(
        "taskSuggestions.list",
        params,
        {
            "sessionKey": Field("string", min_length=1, max_length=512),
            "agentId": Field("string", min_length=1, max_length=128),
        },
    )
    return {"suggestions": []}


@table.method("tasks.list", scope=READ)
async def tasks_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``tasks.list {status?, agentId?, sessionKey?, limit?, cursor?, sortBy?}``: the task
    ledger (background tasks are not kept here: empty)."""
    method = "tasks.list"
    p = check_closed(
        method,
        params,
        {
            "status": Field("any"),
            "agentId": NON_EMPTY,
            "sessionKey": NON_EMPTY,
            "limit": Field("integer", minimum=1, maximum=500),
            "cursor": Field("string", max_length=512),
            "sortBy": Field("string", enum=("updatedAt", "endedAt")),
        },
    )
    status = p.get("status")
    if status is not None and status not in _TASK_STATUSES:
        if not isinstance(status, list):
            raise invalid_params(
                method,
                "at /status: must be equal to constant; at /status: must match a schema in "
                "anyOf; at /status: must be array",
            )
        for index, item in enumerate(status):
            if item not in _TASK_STATUSES:
                where = f"at /status/{index}:"
                raise invalid_params(
                    method,
                    f"at /status: must be equal to constant; at /status: must match a schema "
                    f"in anyOf; {where} must be equal to constant; {where} must match a schema "
                    "in anyOf",
                )
    return {"tasks": []}


@table.method("users.prefs.get", scope=READ)
async def users_prefs_get(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``users.prefs.get {keys?}``: the operator's saved UI preferences (none are saved
    here: no entries)."""
    method = "users.prefs.get"
    p = check_closed(method, params, {"keys": Field("array")})
    if "keys" in p:
        string_items(method, "keys", p["keys"], max_items=32, pattern="^.{1,256}$", unique=True)
    return {"status": "ok", "entries": {}}


# ------------------------------------------------------------------ plugins, host, update

#: The Control UI plugin catalogue (no plugins here) and its revision (a digest of it).
_CONTROL_UI_PLUGINS: dict[str, Any] = {"plugins": [], "diagnostics": []}
_CONTROL_UI_REVISION = hashlib.sha256(repr(_CONTROL_UI_PLUGINS).encode()).hexdigest()


@table.method("plugins.controlUi.list", scope=READ)
async def plugins_control_ui_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``plugins.controlUi.list {}``: plugin modules for the Control UI (none here)."""
    check_empty("plugins.controlUi.list", params)
    return {"revision": _CONTROL_UI_REVISION, "plugins": [], "diagnostics": []}


@table.method("plugin.surface.refresh", scope=READ)
async def plugin_surface_refresh(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``plugin.surface.refresh {surface, observedUrl?}``: a fresh URL for a plugin surface
    (canvas…); this gateway hosts none, so every surface is unavailable (as the reference
    answers for a surface it does not host)."""
    surface = params.get("surface") if isinstance(params, dict) else None
    if not isinstance(surface, str) or not surface.strip():
        raise invalid_request("surface required")
    raise MethodError(
        error_shape(ErrorCode.UNAVAILABLE, f"{surface.strip()} plugin surface unavailable")
    )


@table.method("system.info", scope=READ)
async def system_info(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``system.info {}``: this host and this gateway process (machine, OS, CPU, memory,
    disk of the state dir)."""
    check_empty("system.info", params)
    return await asyncio.to_thread(
        system_info_payload,
        port=core.config.port,
        state_dir=core.config.state_dir,
        instance_id=core.boot_id,
        uptime_ms=core.uptime_ms(),
    )


@table.method("update.status", scope=ADMIN)
async def update_status(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``update.status {refreshCheckout?}``: the bundled gateway updates with the app, not
    by itself: no update sentinel, none available, no channel."""
    check_closed("update.status", params, {"refreshCheckout": Field("boolean")})
    return {"sentinel": None, "updateAvailable": None}
