"""The methods the real Control UI (the real gateway's web app) calls on its normal path.

Each takes the reference's closed params, needs the reference's scope and answers in its
result shape. Where this gateway has the feature the answer comes from it (``chat.startup``
is chat.history's first page, ``chat.metadata`` lists the configured models and the chat's
slash commands, ``system.info`` describes this host, ``agent.identity.get`` our one agent);
where it has none (boards, progress cards, projects, questions, tasks, task suggestions,
session groups, branches, companions, GitHub, mentions, Control UI plugins, plugin
surfaces, updates) the answer is the honest empty one in the real shape.

The per-session and chat methods are declared here, the gateway-wide ones (catalogues,
``system.info``, ``update.status``) in :mod:`gateway.methods.control_ui_lists`; :data:`table`
holds both.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gateway.chat.params import Field
from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.methods import chat as chat_methods
from gateway.methods import control_ui_lists
from gateway.methods.control_ui_params import (
    NON_EMPTY,
    check_closed,
    problem_text,
    string_items,
)
from gateway.methods.sessions import slash_commands
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ
from openclaw_desktop.protocol import ErrorCode, error_shape

if TYPE_CHECKING:
    from gateway.app import GatewayApp
    from gateway.chat.service import ChatService

__all__ = ["table"]

_table = MethodTable()

_KEY = Field("string", required=True, min_length=1)
#: ``{sessionKey, agentId?}``: the target of most per-session Control UI reads.
_SESSION_TARGET = {"sessionKey": _KEY, "agentId": NON_EMPTY}
#: ``chat.history``'s params (the first branch of ``chat.startup``'s union).
_HISTORY_FIELDS = {
    "sessionKey": _KEY,
    "agentId": NON_EMPTY,
    "cursor": Field("string"),
    "limit": Field("integer", minimum=1, maximum=1000),
    "maxBytes": Field("integer", minimum=1024),
    "offset": Field("integer", minimum=0),
    "pendingBefore": Field("integer", minimum=1),
    "inputRunIds": Field("array"),
    "messageId": NON_EMPTY,
    "sessionId": NON_EMPTY,
    "maxChars": Field("integer", minimum=1, maximum=500_000),
}
#: The short-link branch of ``chat.startup``'s union.
_SHORT_LINK_FIELDS = {
    "shortId": Field("string", required=True, min_length=1),
    "slugHint": NON_EMPTY,
    "agentId": Field("string", required=True, min_length=1),
    "limit": Field("integer", minimum=1, maximum=1000),
    "maxBytes": Field("integer", minimum=1024),
}
_SHORT_ID_RE = re.compile(r"^[0-9a-f]{8,32}$")
#: The identity that owns every session here (one operator, no profiles).
_OWNER = {
    "type": "human",
    "id": "gateway-owner",
    "identity": {"type": "profile", "id": "gateway-owner"},
}


def _service(core: GatewayApp) -> ChatService:
    return chat_methods._service(core)


def _canonical(service: ChatService, key: str) -> str:
    return chat_methods._canonical(service, key)


def _known_agent(service: ChatService, agent_id: str | None) -> None:
    """Refuse an ``agentId`` that is not this gateway's one agent (the reference's words)."""
    if agent_id is not None and agent_id != service.agent_id:
        raise invalid_request(f'Unknown agent id "{agent_id}"')


def _session_target(method: str, core: GatewayApp, params: Any) -> tuple[ChatService, str]:
    """``{sessionKey, agentId?}`` checked: the service and the canonical key."""
    p = check_closed(method, params, _SESSION_TARGET)
    service = _service(core)
    _known_agent(service, p.get("agentId"))
    return service, _canonical(service, p["sessionKey"])


# ------------------------------------------------------------------------ the agent, chat


@_table.method("agent.identity.get", scope=READ)
async def agent_identity_get(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``agent.identity.get {agentId?, sessionKey?}``: the agent's display identity (this
    gateway's agent has no configured name or avatar: the defaults, as the reference)."""
    p = check_closed(
        "agent.identity.get", params, {"agentId": NON_EMPTY, "sessionKey": Field("string")}
    )
    agent_id = p.get("agentId") or _service(core).agent_id
    return {"agentId": agent_id, "name": "Assistant", "nameSource": "default", "avatar": "A"}


def _models(service: ChatService) -> list[dict[str, Any]]:
    """The configured models as ``chat.metadata`` lists them (no thinking levels here)."""
    default = service.providers.model
    out: list[dict[str, Any]] = []
    for model in service.providers.models:
        entry: dict[str, Any] = {
            "id": model.model,
            "name": model.name or model.model,
            "provider": model.provider,
            "contextWindow": model.context_window,
            "reasoning": model.reasoning,
        }
        if default is not None and model.ref == default.ref:
            entry["tags"] = ["default"]
        entry["thinkingLevels"] = [{"id": "off", "label": "off"}]
        entry["thinkingDefault"] = "off"
        entry["available"] = True
        out.append(entry)
    return out


@_table.method("chat.metadata", scope=READ)
async def chat_metadata(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``chat.metadata {agentId?, authProfileId?, sessionKey?}``: the models a chat can
    use and its slash commands."""
    # The schema's ``not: {required: [sessionKey, authProfileId]}``: both named, or not an
    # object at all (``required`` holds for a non-object), fails it too.
    both = not isinstance(params, dict | None) or (
        isinstance(params, dict) and "sessionKey" in params and "authProfileId" in params
    )
    try:
        p = check_closed(
            "chat.metadata",
            params,
            {
                "agentId": NON_EMPTY,
                "authProfileId": Field("string", min_length=1, max_length=256),
                "sessionKey": Field("string", min_length=1),
            },
        )
    except MethodError as exc:
        if not both:
            raise
        problem = problem_text(exc, "chat.metadata")
        raise invalid_params("chat.metadata", f"{problem}; must not be valid") from None
    if both:
        raise invalid_params("chat.metadata", "must not be valid")
    service = _service(core)
    _known_agent(service, p.get("agentId"))
    result: dict[str, Any] = {"models": _models(service), "commands": slash_commands()}
    if "sessionKey" in p:
        # A session's runtime can be chosen (there is one runtime here: never locked).
        result["runtimeSelectionLocked"] = False
    return result


def _startup_params(params: Any) -> dict[str, Any]:
    """``chat.startup``'s union: chat.history's params, or a short chat link."""
    try:
        return check_closed("chat.startup", params, _HISTORY_FIELDS)
    except MethodError as history_error:
        try:
            short = check_closed("chat.startup", params, _SHORT_LINK_FIELDS)
        except MethodError as short_error:
            problems = [
                problem_text(history_error, "chat.startup"),
                problem_text(short_error, "chat.startup"),
            ]
            joined = "; ".join(problems).split("; ")
            text = "; ".join(dict.fromkeys([*joined, "must match a schema in anyOf"]))
            raise invalid_params("chat.startup", text) from None
    short_id = short["shortId"].strip().lower()
    if not _SHORT_ID_RE.match(short_id):
        raise invalid_request("shortId must be 8-32 hexadecimal characters")
    # Session keys here carry no id suffix a short link could name.
    raise invalid_request(f"No session found: {short_id}")


def _defaults(service: ChatService) -> dict[str, Any]:
    model = service.providers.model
    out: dict[str, Any] = {}
    if model is not None:
        out = {
            "modelProvider": model.provider,
            "model": model.model,
            "contextTokens": model.context_window,
        }
    out["modelSelectionTarget"] = "session"
    return out


@_table.method("chat.startup", scope=READ)
async def chat_startup(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``chat.startup {sessionKey, limit?, maxBytes?, ...}``: a chat's first page (as
    chat.history) with the model defaults, in one call."""
    p = _startup_params(params)
    history_params = {k: p[k] for k in ("sessionKey", "agentId", "limit", "maxChars") if k in p}
    page = await chat_methods.chat_history(core, peer, history_params)
    service = _service(core)
    key = _canonical(service, p["sessionKey"])
    return {
        "sessionKey": page["sessionKey"],
        "messages": page["messages"],
        "pendingInputs": page["pendingInputs"],
        "hasMore": page["hasMore"],
        "totalMessages": page["totalMessages"],
        "defaults": _defaults(service),
        "sessionInfo": {
            **page.get("sessionInfo", {}),
            "key": key,
            "agentId": service.agent_id,
            "hasActiveRun": bool(service.active_run_ids(key)),
            "activeRunIds": service.active_run_ids(key),
        },
    }


# ------------------------------------------------------------------ per-session features


@_table.method("board.get", scope=READ)
async def board_get(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``board.get {sessionKey, agentId?}``: the session's board (boards are not kept here:
    always empty)."""
    key = _session_target("board.get", core, params)[1]
    return {"sessionKey": key, "revision": 0, "tabs": [], "widgets": []}


@_table.method("progressCard.get", scope=READ)
async def progress_card_get(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``progressCard.get {sessionKey, agentId?}``: no progress cards here (``card: null``)."""
    _session_target("progressCard.get", core, params)
    return {"card": None}


@_table.method("session.discussion.info", scope=READ)
async def session_discussion_info(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``session.discussion.info {sessionKey, agentId?}``: no discussions here."""
    _session_target("session.discussion.info", core, params)
    return {"state": "none"}


@_table.method("sessions.branches.list", scope=READ)
async def sessions_branches_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.branches.list {sessionKey, agentId?}``: transcripts do not branch here."""
    _session_target("sessions.branches.list", core, params)
    return {"branches": []}


@_table.method("sessions.companion.state", scope=READ)
async def sessions_companion_state(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.companion.state {sessionKey, agentId?}``: no session companion here."""
    _session_target("sessions.companion.state", core, params)
    return {"exchanges": []}


@_table.method("session.members.listEvidence", scope=READ)
async def session_members_list_evidence(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``session.members.listEvidence {sessionKey, agentId?}``: who may see a session: its
    one owner (sessions are not shared here); unknown sessions are refused."""
    service, key = _session_target("session.members.listEvidence", core, params)
    raw_key = params["sessionKey"]
    if service.sessions.get(key) is None:
        raise invalid_request(f"unknown session: {raw_key}")
    return {
        "sessionKey": key,
        "owner": _OWNER,
        "members": [],
        "identities": [{**_OWNER, "label": _OWNER["id"]}],
        "role": "admin",
        "allowedVisibilities": ["shared"],
    }


@_table.method("sessions.github.options", scope=READ)
async def sessions_github_options(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.github.options {sessionKey, agentId?, idempotencyKey?}``: no GitHub
    account or publication here (all null); unknown sessions are refused as the reference."""
    p = check_closed(
        "sessions.github.options",
        params,
        {**_SESSION_TARGET, "idempotencyKey": NON_EMPTY},
    )
    service = _service(core)
    _known_agent(service, p.get("agentId"))
    if service.sessions.get(_canonical(service, p["sessionKey"])) is None:
        raise MethodError(
            error_shape(ErrorCode.FORBIDDEN, "GitHub publication session was not found.")
        )
    return {"personal": None, "shared": None, "pendingPersonal": None, "latestShared": None}


@_table.method("sessions.viewers.set", scope=READ)
async def sessions_viewers_set(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.viewers.set {sessionKeys, agentId?}``: the sessions this connection shows,
    acknowledged with their canonical keys (viewer presence is not broadcast here)."""
    method = "sessions.viewers.set"
    p = check_closed(
        method, params, {"agentId": NON_EMPTY, "sessionKeys": Field("array", required=True)}
    )
    keys = string_items(method, "sessionKeys", p["sessionKeys"], max_items=32, max_length=512)
    service = _service(core)
    _known_agent(service, p.get("agentId"))
    canonical: list[str] = []
    for raw in keys:
        if not raw.strip():
            raise invalid_request(f"invalid {method} params")
        canonical.append(_canonical(service, raw.strip()))
    return {"sessionKeys": list(dict.fromkeys(canonical))}


@_table.method("controlUi.sessionPullRequests.subscribe", scope=READ)
async def session_pull_requests_subscribe(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``controlUi.sessionPullRequests.subscribe {sessionKeys, refreshSessionKeys?}``: pull
    requests of sessions (none here: nothing is ever sent); ``subscribed`` says whether any
    key was named, as the reference."""
    bad = invalid_request("invalid controlUi.sessionPullRequests.subscribe params")
    if not isinstance(params, dict) or "sessionKeys" not in params:
        raise bad
    keys = _pr_keys(params["sessionKeys"])
    refresh = (
        [] if params.get("refreshSessionKeys") is None else _pr_keys(params["refreshSessionKeys"])
    )
    if keys is None or refresh is None or not set(refresh) <= set(keys):
        raise bad
    return {"subscribed": bool(keys)}


def _pr_keys(value: Any) -> list[str] | None:
    if not isinstance(value, list) or len(value) > 200:
        return None
    keys: list[str] = []
    for entry in value:
        if not isinstance(entry, str) or not entry.strip() or len(entry.strip()) > 512:
            return None
        keys.append(entry.strip())
    return list(dict.fromkeys(keys))


@_table.method("sessions.observer.visibility", scope=READ)
async def sessions_observer_visibility(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``sessions.observer.visibility {visible}``: acknowledged (observers are not tracked)."""
    check_closed(
        "sessions.observer.visibility", params, {"visible": Field("boolean", required=True)}
    )
    return {"ok": True}


table = MethodTable.merge(_table, control_ui_lists.table)
"""The methods of this module and of :mod:`gateway.methods.control_ui_lists`."""
