"""Wires the chat service into a running gateway: node access for the agent's tools, the
event broadcast, and the model providers found at start."""

from __future__ import annotations

import logging
import os
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.service import ChatService, ProviderChoice
from gateway.chat.session_rows import session_row
from gateway.hub import Hub, now_ms
from gateway.scopes import ADMIN_NODE_COMMANDS
from openclaw_desktop.protocol import EventName

if TYPE_CHECKING:
    from gateway.app import GatewayApp
    from gateway.nodes.catalog import NodeCatalog

__all__ = ["AgentNodeAccess", "NodeHost", "start_chat"]

log = logging.getLogger("gateway.chat")


class NodeHost(Protocol):
    """What :class:`AgentNodeAccess` uses of the gateway: the connected peers (its nodes)
    and the node catalog (its invoker)."""

    @property
    def hub(self) -> Hub: ...
    @property
    def nodes(self) -> NodeCatalog: ...


class AgentNodeAccess:
    """The connected nodes as the agent's tools see them
    (:class:`gateway.chat.tools.NodeAccess`)."""

    def __init__(self, host: NodeHost) -> None:
        self._host = host

    def list_nodes(self) -> list[dict[str, Any]]:
        """Connected nodes with their invokable commands."""
        return [
            {
                "nodeId": peer.device_id,
                "displayName": peer.client.get("displayName"),
                "platform": peer.platform,
                "commands": list(peer.commands),
            }
            for peer in self._host.hub.nodes.values()
        ]

    async def invoke(
        self, node_id: str, command: str, params: Any, timeout_ms: int
    ) -> dict[str, Any]:
        """``node.invoke`` with the same policy checks as an operator's call (the node
        catalog's invoker); an aborted run stops the node's command too."""
        if command in ADMIN_NODE_COMMANDS:
            raise PermissionError(f"{command} needs an operator's admin rights; not for the agent")
        return await self._host.nodes.invoker.invoke(
            node_id,
            command,
            params,
            timeout_ms=timeout_ms,
            idempotency_key=str(uuid.uuid4()),
            cancel_on_abandon=True,
        )


async def load_provider_choice(app: GatewayApp) -> ProviderChoice:
    """The model providers present at start (offline when none)."""
    from gateway.chat.providers.config import ProviderConfigError, load_providers

    try:
        setup = await load_providers(
            app.config.state_dir, dict(os.environ), probe_ollama=app.config.probe_ollama
        )
    except ProviderConfigError as exc:
        # A typo in providers.json must not keep the gateway (and its nodes) down: serve
        # offline and say why, in the log and in models.authStatus.
        log.error("model providers not loaded: %s", exc)
        return ProviderChoice(sources=[f"providers.json is invalid: {exc}"])
    for source in setup.sources:
        log.info("model provider: %s", source)
    if setup.pool is None:
        log.warning("no model provider configured: chat runs in offline mode (slash commands)")
    return ProviderChoice(setup.pool, setup.default_model, list(setup.models), list(setup.sources))


#: The run lifecycle phases the real gateway also announces as ``sessions.changed``.
_SESSION_PHASES = frozenset({"start", "model", "end", "error"})


async def start_chat(app: GatewayApp) -> ChatService:
    """Create the chat service of the gateway ``app``."""
    providers = await load_provider_choice(app)

    def broadcast(event: EventName, payload: dict[str, Any], tool_events: bool) -> None:
        app.hub.broadcast(event, payload, cap="tool-events" if tool_events else None)
        app.hub.send_timings.observe(event, payload)
        data = payload.get("data") if event == EventName.AGENT else None
        phase = data.get("phase") if isinstance(data, dict) else None
        if payload.get("stream") == "lifecycle" and phase in _SESSION_PHASES:
            # As the real gateway: a run's start, model and end reach session subscribers.
            ended = None
            if phase in ("end", "error") and isinstance(data, dict):
                ended = "aborted" if data.get("aborted") else "done" if phase == "end" else "failed"
            key = str(payload.get("sessionKey"))
            sessions_changed(key, None, phase, payload.get("runId"), ended)

    def sessions_changed(
        key: str,
        reason: str | None,
        phase: str | None = None,
        run_id: Any = None,
        ended: str | None = None,
    ) -> None:
        # As the real gateway: the agent, and the session's row while it exists (a deleted
        # session's event has none); only sessions.subscribe'd connections get it.
        if not app.hub.sessions.any():
            return
        payload: dict[str, Any] = {"sessionKey": key, "agentId": service.agent_id}
        if reason is not None:
            payload["reason"] = reason
        if phase is not None:
            payload["phase"] = phase
            payload["runId"] = run_id
        payload["ts"] = now_ms()
        row = service.sessions.get(key)
        if row is not None:
            entry = session_row(service, row)
            if ended is not None:  # the run is over: as the row says a moment later
                others = [r for r in entry["activeRunIds"] if r != run_id]
                entry.update(activeRunIds=others, hasActiveRun=bool(others))
                entry["status"] = "running" if others else ended
            payload["session"] = entry
            payload["updatedAt"] = row.updated_at_ms
            payload["sessionId"] = row.session_id
        app.hub.broadcast(EventName.SESSIONS_CHANGED, payload)

    service = ChatService(
        app.config.state_dir / "sessions",
        app.state.sessions,
        broadcast,
        AgentNodeAccess(app),
        providers,
        on_sessions_changed=sessions_changed,
    )
    await service.recover_interrupted()
    return service
