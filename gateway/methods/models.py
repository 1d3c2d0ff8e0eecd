"""``models.*`` methods of the bundled gateway: the configured providers' catalog and
where their credentials come from (never a secret)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.events import now_ms
from gateway.errors import invalid_request
from gateway.methods.chat import _service
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods import ModelsListParams
from openclaw_desktop.protocol.methods.ops import ModelsAuthStatusParams

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = ["CAPABILITIES", "ModelsServices", "table"]

table = MethodTable()
"""The methods this module declares."""

#: The hello-ok ``features.capabilities`` this gateway honours (the real gateway's names):
#: ``models.list`` publishes the catalog with each model's availability, and takes a
#: ``sessionKey`` to scope it (every session sees the same providers here).
CAPABILITIES: tuple[str, ...] = ("published-model-catalog", "session-scoped-model-catalog")


class ModelsServices(Protocol):
    """What the ``models.*`` methods use of the gateway: the chat engine's providers."""

    @property
    def chat(self) -> ChatService | None: ...


def _js_type(value: object) -> str:
    """What the reference names a non-string ``agentId`` by (JavaScript's ``typeof``)."""
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else "object"


@table.method(Method.MODELS_LIST, scope=READ, params=ModelsListParams)
async def models_list(gw: ModelsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``models.list``: the models of the configured providers (``provider`` filters them;
    every agent and session sees the same catalog)."""
    p = params
    service = _service(gw)
    default = service.providers.model
    provider = p.get("provider")
    models = []
    for model in service.providers.models:
        if provider is not None and model.provider != provider:
            continue
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


@table.method(Method.MODELS_AUTH_STATUS, scope=READ, params=ModelsAuthStatusParams, check=False)
async def models_auth_status(gw: ModelsServices, peer: Peer, params: Any) -> Any:
    """``models.authStatus {agentId?, refresh?}``: which providers are configured and from
    where (no secrets). Like the reference it reads only ``agentId`` (other keys are not
    refused, nor params that are not an object, which is why it declares no params model:
    :class:`~openclaw_desktop.protocol.methods.ops.ModelsAuthStatusParams` lists what it
    reads), and this gateway has one agent, ``main``."""
    agent = params.get("agentId") if isinstance(params, dict) else None
    if agent is not None and agent != "main":
        name = agent if isinstance(agent, str) else _js_type(agent)
        raise invalid_request(
            f'unknown agent id "{name}"', {"code": "UNKNOWN_AGENT_ID", "agentId": name}
        )
    service = _service(gw)
    providers = sorted({m.provider for m in service.providers.models})
    return {
        "ts": now_ms(),
        "providers": [
            {"provider": name, "displayName": name, "status": "static"} for name in providers
        ],
        "sources": list(service.providers.sources),
        "offline": service.providers.pool is None,
    }
