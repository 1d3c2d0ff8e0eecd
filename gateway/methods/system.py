"""``health``, ``status`` and ``system-presence``."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from gateway import __version__
from gateway.hub import now_ms
from gateway.methods.status_report import (
    DEFAULT_AGENT_ID,
    STATUS_RECENT,
    AgentFacts,
    health_answer,
    status_answer,
)
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ

if TYPE_CHECKING:
    from gateway.app import GatewayApp

__all__ = ["table"]

table = MethodTable()
"""The methods this module declares."""


def _agent_facts(core: GatewayApp) -> AgentFacts:
    """The one agent (``main`` until the chat engine is up: the id it runs under) and its
    sessions, newest first (as many as ``status`` lists; ``health`` shows fewer), and the
    models for ``status``."""
    agent_id = core.chat.agent_id if core.chat is not None else DEFAULT_AGENT_ID
    sessions = core.state.sessions
    providers = core.chat.providers if core.chat is not None else None
    return AgentFacts(
        agent_id,
        str(core.state.db_path),
        sessions.count(),
        sessions.list(STATUS_RECENT),
        default_model=providers.model if providers is not None else None,
        models=providers.models if providers is not None else (),
    )


@table.method("health", scope=READ, role="any")
async def health(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``health``: liveness, the agent, its heartbeat and sessions (the reference's shape;
    like it, any params are accepted: ``probe`` changes nothing here, there are no
    channels to probe)."""
    started = time.perf_counter()
    facts = _agent_facts(core)
    return health_answer(facts, now_ms(), int((time.perf_counter() - started) * 1000))


@table.method("status", scope=READ)
async def status(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``status``: the reference's status summary (``includeCliProjection: true`` adds the
    roster the real ``openclaw status`` reads); like it, any params are accepted."""
    wants_projection = isinstance(params, dict) and params.get("includeCliProjection") is True
    return status_answer(
        _agent_facts(core),
        version=__version__,
        scopes=peer.scopes,
        cli_projection=wants_projection,
        now=now_ms(),
    )


@table.method("system-presence", scope=READ)
async def system_presence(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``system-presence``: the presence list."""
    return core.hub.presence()
