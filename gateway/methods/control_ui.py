"""The methods the real Control UI (the real gateway's web app) calls on its normal path.

Each takes the reference's closed params (declared as the models of
:mod:`openclaw_desktop.protocol.methods.control_ui`), needs the reference's scope and answers
in its result shape; a handler gets only the services its module's protocol names
(:class:`ControlUiServices`,
:class:`~gateway.methods.control_ui_lists.ControlUiListsServices`). Where this gateway has
the feature the answer comes from it (``chat.startup`` is chat.history's first page,
``chat.metadata`` lists the configured models and the chat's slash commands,
``system.info`` describes this host, ``agent.identity.get`` our one agent); where it has
none (boards, progress cards, projects, questions, tasks, task suggestions, session groups,
branches, companions, GitHub, mentions, Control UI plugins, plugin surfaces, updates) the
answer is the honest empty one in the real shape.

The per-session and chat methods are declared here, the gateway-wide ones (catalogues,
``system.info``, ``update.status``) in :mod:`gateway.methods.control_ui_lists`; :data:`table`
holds both.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.methods import chat as chat_methods
from gateway.methods import control_ui_lists
from gateway.methods.closed import derived_schema, hand_read, model_checked, schema_problems
from gateway.methods.sessions import slash_commands
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ
from openclaw_desktop.protocol import ErrorCode, Method, error_shape
from openclaw_desktop.protocol.methods.control_ui import (
    AgentIdentityGetParams,
    ChatMetadataParams,
    ChatStartupParams,
    ChatStartupShortLinkParams,
    SessionPullRequestsSubscribeParams,
    SessionsGithubOptionsParams,
    SessionsObserverVisibilityParams,
    SessionsViewersSetParams,
    SessionTargetParams,
)

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = ["ControlUiServices", "table"]

_table = MethodTable()


class ControlUiServices(Protocol):
    """What the per-session and chat Control UI methods use of the gateway: the chat
    engine (``chat.startup`` hands the same services to chat.history's handler)."""

    @property
    def chat(self) -> ChatService | None: ...


#: ``chat.startup``'s union: chat.history's params, or a short chat link.
_STARTUP_SCHEMA: dict[str, Any] = {
    "anyOf": [derived_schema(ChatStartupParams), derived_schema(ChatStartupShortLinkParams)]
}
_SHORT_ID_RE = re.compile(r"^[0-9a-f]{8,32}$")
#: The identity that owns every session here (one operator, no profiles).
_OWNER = {
    "type": "human",
    "id": "gateway-owner",
    "identity": {"type": "profile", "id": "gateway-owner"},
}


def _service(gw: ControlUiServices) -> ChatService:
    """The chat engine, or ``UNAVAILABLE chat is starting`` (as the chat methods)."""
    if gw.chat is None:
        raise MethodError(error_shape(ErrorCode.UNAVAILABLE, "chat is starting", retryable=True))
    return gw.chat


def _known_agent(service: ChatService, agent_id: str | None) -> None:
    """Refuse an ``agentId`` that is not this gateway's one agent (the reference's words)."""
    if agent_id is not None and agent_id != service.agent_id:
        raise invalid_request(f'Unknown agent id "{agent_id}"')


def _session_target(gw: ControlUiServices, p: dict[str, Any]) -> tuple[ChatService, str]:
    """Checked ``{sessionKey, agentId?}``: the service and the canonical key."""
    service = _service(gw)
    _known_agent(service, p.get("agentId"))
    return service, chat_methods.canonical_key(service, p["sessionKey"])


# ------------------------------------------------------------------------ the agent, chat


@_table.method(Method.AGENT_IDENTITY_GET, scope=READ, params=AgentIdentityGetParams)
async def agent_identity_get(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``agent.identity.get {agentId?, sessionKey?}``: the agent's display identity (this
    gateway's agent has no configured name or avatar: the defaults, as the reference)."""
    agent_id = params.get("agentId") or _service(gw).agent_id
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


@_table.method(Method.CHAT_METADATA, scope=READ, params=ChatMetadataParams)
async def chat_metadata(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``chat.metadata {agentId?, authProfileId?, sessionKey?}``: the models a chat can
    use and its slash commands."""
    p = params
    service = _service(gw)
    _known_agent(service, p.get("agentId"))
    result: dict[str, Any] = {"models": _models(service), "commands": slash_commands()}
    if "sessionKey" in p:
        # A session's runtime can be chosen (there is one runtime here: never locked).
        result["runtimeSelectionLocked"] = False
    return result


def _startup_params(params: Any) -> dict[str, Any]:
    """``chat.startup``'s union checked (refused in the reference's words): chat.history's
    params, or a short chat link (refused: no session here has one)."""
    problems = schema_problems(_STARTUP_SCHEMA, params)
    if problems is not None:
        raise invalid_params("chat.startup", problems)
    if schema_problems(derived_schema(ChatStartupParams), params) is None:
        return model_checked("chat.startup", ChatStartupParams, params)
    short = model_checked("chat.startup", ChatStartupShortLinkParams, params)
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


@_table.method(Method.CHAT_STARTUP, scope=READ, params=ChatStartupParams, check=False)
async def chat_startup(gw: ControlUiServices, peer: Peer, params: Any) -> Any:
    """``chat.startup {sessionKey, limit?, maxBytes?, ...}``: a chat's first page (as
    chat.history) with the model defaults, in one call.

    Its params are checked here, not declared: the reference's schema is a union of two
    objects (:data:`_STARTUP_SCHEMA`), the page is chat.history's own handler's answer."""
    p = _startup_params(params)
    history_params = {k: p[k] for k in ("sessionKey", "agentId", "limit", "maxChars") if k in p}
    history = chat_methods.table["chat.history"]
    page = await history.handler(gw, peer, history.checked_params(history_params))
    service = _service(gw)
    key = chat_methods.canonical_key(service, p["sessionKey"])
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


@_table.method(Method.BOARD_GET, scope=READ, params=SessionTargetParams)
async def board_get(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``board.get {sessionKey, agentId?}``: the session's board (boards are not kept here:
    always empty)."""
    key = _session_target(gw, params)[1]
    return {"sessionKey": key, "revision": 0, "tabs": [], "widgets": []}


@_table.method(Method.PROGRESS_CARD_GET, scope=READ, params=SessionTargetParams)
async def progress_card_get(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``progressCard.get {sessionKey, agentId?}``: no progress cards here (``card: null``)."""
    _session_target(gw, params)
    return {"card": None}


@_table.method(Method.SESSION_DISCUSSION_INFO, scope=READ, params=SessionTargetParams)
async def session_discussion_info(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``session.discussion.info {sessionKey, agentId?}``: no discussions here."""
    _session_target(gw, params)
    return {"state": "none"}


@_table.method(Method.SESSIONS_BRANCHES_LIST, scope=READ, params=SessionTargetParams)
async def sessions_branches_list(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``sessions.branches.list {sessionKey, agentId?}``: transcripts do not branch here."""
    _session_target(gw, params)
    return {"branches": []}


@_table.method(Method.SESSIONS_COMPANION_STATE, scope=READ, params=SessionTargetParams)
async def sessions_companion_state(
    gw: ControlUiServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.companion.state {sessionKey, agentId?}``: no session companion here."""
    _session_target(gw, params)
    return {"exchanges": []}


@_table.method(Method.SESSION_MEMBERS_LIST_EVIDENCE, scope=READ, params=SessionTargetParams)
async def session_members_list_evidence(
    gw: ControlUiServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``session.members.listEvidence {sessionKey, agentId?}``: who may see a session: its
    one owner (sessions are not shared here); unknown sessions are refused."""
    service, key = _session_target(gw, params)
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


@_table.method(Method.SESSIONS_GITHUB_OPTIONS, scope=READ, params=SessionsGithubOptionsParams)
async def sessions_github_options(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``sessions.github.options {sessionKey, agentId?, idempotencyKey?}``: no GitHub
    account or publication here (all null); unknown sessions are refused as the reference."""
    service, key = _session_target(gw, params)
    if service.sessions.get(key) is None:
        raise MethodError(
            error_shape(ErrorCode.FORBIDDEN, "GitHub publication session was not found.")
        )
    return {"personal": None, "shared": None, "pendingPersonal": None, "latestShared": None}


@_table.method(Method.SESSIONS_VIEWERS_SET, scope=READ, params=SessionsViewersSetParams)
async def sessions_viewers_set(gw: ControlUiServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``sessions.viewers.set {sessionKeys, agentId?}``: the sessions this connection shows,
    acknowledged with their canonical keys (viewer presence is not broadcast here)."""
    method = "sessions.viewers.set"
    service = _service(gw)
    _known_agent(service, params.get("agentId"))
    canonical: list[str] = []
    for raw in params["sessionKeys"]:
        if not raw.strip():
            raise invalid_request(f"invalid {method} params")
        canonical.append(chat_methods.canonical_key(service, raw.strip()))
    return {"sessionKeys": list(dict.fromkeys(canonical))}


@_table.method(
    Method.CONTROL_UI_SESSION_PULL_REQUESTS_SUBSCRIBE,
    scope=READ,
    params=SessionPullRequestsSubscribeParams,
    check=False,
)
async def session_pull_requests_subscribe(gw: ControlUiServices, peer: Peer, params: Any) -> Any:
    """``controlUi.sessionPullRequests.subscribe {sessionKeys, refreshSessionKeys?}``: pull
    requests of sessions (none here: nothing is ever sent); ``subscribed`` says whether any
    key was named, as the reference.

    Read by hand, as the reference (it has no schema for these params: other properties
    are ignored, every problem is one ``invalid ... params``): the model reads them."""
    wanted = hand_read(SessionPullRequestsSubscribeParams.lenient(params).subscription)
    return {"subscribed": bool(wanted.session_keys)}


@_table.method(
    Method.SESSIONS_OBSERVER_VISIBILITY, scope=READ, params=SessionsObserverVisibilityParams
)
async def sessions_observer_visibility(
    gw: ControlUiServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.observer.visibility {visible}``: acknowledged (observers are not tracked)."""
    return {"ok": True}


table = MethodTable.merge(_table, control_ui_lists.table)
"""The methods of this module and of :mod:`gateway.methods.control_ui_lists`."""
