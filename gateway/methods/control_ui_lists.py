"""Control UI methods about the gateway as a whole: catalogues this gateway has none of
(session catalogues and groups, mentions, questions, projects, tasks and suggestions, user
preferences, Control UI plugins, plugin surfaces), ``system.info`` and ``update.status``.

Each answers the honest empty result in the reference's shape; see
:mod:`gateway.methods.control_ui`."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any, Protocol

from gateway.config import GatewayConfig
from gateway.errors import MethodError
from gateway.methods.closed import hand_read
from gateway.methods.control_ui_host import system_info_payload
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, QUESTIONS, READ, WRITE
from openclaw_desktop.protocol import ErrorCode, Method, error_shape
from openclaw_desktop.protocol.methods.control_ui import (
    PluginSurfaceRefreshParams,
    ProjectsListParams,
    SessionsCatalogListParams,
    TasksListParams,
    TaskSuggestionsListParams,
    UpdateStatusParams,
    UsersPrefsGetParams,
)
from openclaw_desktop.protocol.methods.ops import EmptyParams

__all__ = ["QUESTIONS", "ControlUiListsServices", "table"]

table = MethodTable()
"""The methods this module declares."""


class ControlUiListsServices(Protocol):
    """What the gateway-wide Control UI methods use of the gateway: this process's boot id
    (the mention inbox's instance, ``system.info``), its uptime and its port and state dir
    (``system.info``)."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def boot_id(self) -> str: ...
    def uptime_ms(self) -> int:
        """Milliseconds since the gateway started."""
        ...


# ----------------------------------------------------------------- gateway-wide catalogues


@table.method(Method.SESSIONS_CATALOG_LIST, scope=READ, params=SessionsCatalogListParams)
async def sessions_catalog_list(
    gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.catalog.list {catalogId?, agentId?, ...}``: external session catalogues
    (coding-agent hosts); there are none here."""
    return {"catalogs": []}


@table.method(Method.SESSIONS_GROUPS_LIST, scope=READ, params=EmptyParams)
async def sessions_groups_list(
    gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.groups.list {}``: custom session groups (none here)."""
    return {"groups": [], "sectionOrder": []}


@table.method(Method.SESSIONS_GROUPS_DEFAULTS, scope=WRITE, params=EmptyParams)
async def sessions_groups_defaults(
    gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.groups.defaults {}``: per-group defaults (none here)."""
    return {"defaults": []}


@table.method(Method.MENTIONS_LIST, scope=READ, params=EmptyParams)
async def mentions_list(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``mentions.list {}``: the mention inbox of this gateway instance (empty here)."""
    return {"gatewayInstanceId": gw.boot_id, "revision": 0, "items": []}


@table.method(Method.QUESTION_LIST, scope=QUESTIONS, params=EmptyParams)
async def question_list(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``question.list {}``: questions the agent asked the operator (the agent asks none)."""
    return {"questions": []}


@table.method(Method.PROJECTS_LIST, scope=READ, params=ProjectsListParams)
async def projects_list(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``projects.list {includeObserved?}``: the agent has no workspace or projects here."""
    result: dict[str, Any] = {"projects": []}
    if params.get("includeObserved"):
        result["observedProjects"] = []
    else:
        result["recents"] = []
    return result


@table.method(Method.TASK_SUGGESTIONS_LIST, scope=READ, params=TaskSuggestionsListParams)
async def task_suggestions_list(
    gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``taskSuggestions.list {sessionKey?, agentId?}``: none are made here."""
    return {"suggestions": []}


@table.method(Method.TASKS_LIST, scope=READ, params=TasksListParams)
async def tasks_list(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``tasks.list {status?, agentId?, sessionKey?, limit?, cursor?, sortBy?}``: the task
    ledger (background tasks are not kept here: empty)."""
    return {"tasks": []}


@table.method(Method.USERS_PREFS_GET, scope=READ, params=UsersPrefsGetParams)
async def users_prefs_get(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``users.prefs.get {keys?}``: the operator's saved UI preferences (none are saved
    here: no entries)."""
    return {"status": "ok", "entries": {}}


# ------------------------------------------------------------------ plugins, host, update

#: The Control UI plugin catalogue (no plugins here) and its revision (a digest of it).
_CONTROL_UI_PLUGINS: dict[str, Any] = {"plugins": [], "diagnostics": []}
_CONTROL_UI_REVISION = hashlib.sha256(repr(_CONTROL_UI_PLUGINS).encode()).hexdigest()


@table.method(Method.PLUGINS_CONTROL_UI_LIST, scope=READ, params=EmptyParams)
async def plugins_control_ui_list(
    gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``plugins.controlUi.list {}``: plugin modules for the Control UI (none here)."""
    return {"revision": _CONTROL_UI_REVISION, "plugins": [], "diagnostics": []}


@table.method(
    Method.PLUGIN_SURFACE_REFRESH, scope=READ, params=PluginSurfaceRefreshParams, check=False
)
async def plugin_surface_refresh(gw: ControlUiListsServices, peer: Peer, params: Any) -> Any:
    """``plugin.surface.refresh {surface, observedUrl?}``: a fresh URL for a plugin surface
    (canvas…); this gateway hosts none, so every surface is unavailable (as the reference
    answers for a surface it does not host).

    Read by hand, as the reference (it has no schema for these params: anything without a
    non-blank ``surface`` string is refused with ``surface required``): the model reads them."""
    surface = hand_read(PluginSurfaceRefreshParams.lenient(params).surface_name)
    raise MethodError(error_shape(ErrorCode.UNAVAILABLE, f"{surface} plugin surface unavailable"))


@table.method(Method.SYSTEM_INFO, scope=READ, params=EmptyParams)
async def system_info(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``system.info {}``: this host and this gateway process (machine, OS, CPU, memory,
    disk of the state dir)."""
    return await asyncio.to_thread(
        system_info_payload,
        port=gw.config.port,
        state_dir=gw.config.state_dir,
        instance_id=gw.boot_id,
        uptime_ms=gw.uptime_ms(),
    )


@table.method(Method.UPDATE_STATUS, scope=ADMIN, params=UpdateStatusParams)
async def update_status(gw: ControlUiListsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``update.status {refreshCheckout?}``: the bundled gateway updates with the app, not
    by itself: no update sentinel, none available, no channel."""
    return {"sentinel": None, "updateAvailable": None}
