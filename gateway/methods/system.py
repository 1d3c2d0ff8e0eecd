"""``health``, ``status`` and ``system-presence``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gateway import __version__
from gateway.hub import Hub, now_ms
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
from gateway.state import ChatSessions
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods.ops import HealthParams, StatusParams, SystemPresenceParams

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = ["SystemServices", "health_report", "table"]

table = MethodTable()
"""The methods this module declares."""


class SystemServices(Protocol):
    """What ``health``, ``status`` and ``system-presence`` use of the gateway."""

    @property
    def hub(self) -> Hub: ...
    @property
    def chat(self) -> ChatService | None: ...
    @property
    def chat_sessions(self) -> ChatSessions:
        """The stored chat sessions index, counted and listed for the agent."""

    @property
    def db_path(self) -> Path:
        """The state database file, reported as the sessions' store path."""


def _agent_facts(gw: SystemServices) -> AgentFacts:
    """The one agent (``main`` until the chat engine is up: the id it runs under) and its
    sessions, newest first (as many as ``status`` lists; ``health`` shows fewer), and the
    models for ``status``."""
    agent_id = gw.chat.agent_id if gw.chat is not None else DEFAULT_AGENT_ID
    sessions = gw.chat_sessions
    providers = gw.chat.providers if gw.chat is not None else None
    return AgentFacts(
        agent_id,
        str(gw.db_path),
        sessions.count(),
        sessions.list(STATUS_RECENT),
        default_model=providers.model if providers is not None else None,
        models=providers.models if providers is not None else (),
    )


@table.method(Method.HEALTH, scope=READ, role="any", params=HealthParams, check=False)
async def health(gw: SystemServices, peer: Peer, params: Any) -> Any:
    """``health``: liveness, the agent, its heartbeat and sessions (the reference's shape;
    like it, any params are accepted: ``probe`` changes nothing here, there are no
    channels to probe)."""
    return health_report(gw)


def health_report(gw: SystemServices) -> dict[str, Any]:
    """The health snapshot in the reference's shape: the ``health`` answer, and what the
    ``health`` event and ``hello-ok.snapshot.health`` carry (the same on the real gateway)."""
    started = time.perf_counter()
    facts = _agent_facts(gw)
    return health_answer(facts, now_ms(), int((time.perf_counter() - started) * 1000))


@table.method(Method.STATUS, scope=READ, params=StatusParams, check=False)
async def status(gw: SystemServices, peer: Peer, params: Any) -> Any:
    """``status``: the reference's status summary (``includeCliProjection: true`` adds the
    roster the real ``openclaw status`` reads); like it, any params are accepted."""
    wants_projection = isinstance(params, dict) and params.get("includeCliProjection") is True
    return status_answer(
        _agent_facts(gw),
        version=__version__,
        scopes=peer.scopes,
        cli_projection=wants_projection,
        now=now_ms(),
    )


@table.method(Method.SYSTEM_PRESENCE, scope=READ, params=SystemPresenceParams, check=False)
async def system_presence(gw: SystemServices, peer: Peer, params: Any) -> Any:
    """``system-presence``: the presence list."""
    return gw.hub.presence()
