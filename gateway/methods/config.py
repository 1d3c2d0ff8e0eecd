"""``config.get``: this gateway's configuration, laid out as the reference lays out its own
(``gateway.*``, ``discovery.*``, ``models.providers``, ``agents.defaults``) and redacted: the
shared token and password show only that they are set, provider credentials not at all."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.providers.config import PROVIDERS_FILE
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods import EmptyParams

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.config import GatewayConfig

__all__ = ["REDACTED", "ConfigServices", "redacted_config", "table"]

table = MethodTable()
"""The methods this module declares."""

#: What stands in for a secret (the reference's placeholder).
REDACTED = "__OPENCLAW_REDACTED__"


class ConfigServices(Protocol):
    """What ``config.get`` uses of the gateway: its settings and the chat engine's
    providers (None until it is up)."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def chat(self) -> ChatService | None: ...


def _gateway_section(config: GatewayConfig) -> dict[str, Any]:
    auth: dict[str, Any] = {"mode": config.auth_mode}
    if config.auth_mode == "token":
        auth["token"] = REDACTED
    elif config.auth_mode == "password":
        auth["password"] = REDACTED
    nodes: dict[str, Any] = {"commands": {"allow": list(config.nodes_allow)}}
    if config.nodes_deny:
        nodes["commands"]["deny"] = list(config.nodes_deny)
    nodes["pairing"] = {"autoApproveLocal": config.auto_approve_local}
    section: dict[str, Any] = {
        "mode": "local",
        "port": config.port,
        "bind": config.bind,
        "auth": auth,
        "nodes": nodes,
        "tls": {"enabled": config.tls},
    }
    if config.trusted_proxies:
        section["trustedProxies"] = list(config.trusted_proxies)
    if config.allow_real_ip_fallback:
        section["allowRealIpFallback"] = True
    return section


def redacted_config(gw: ConfigServices) -> dict[str, Any]:
    """The configuration document (no secret in it)."""
    config = gw.config
    mdns = config.mdns_mode or ("full" if config.advertise else "off")
    document: dict[str, Any] = {
        "gateway": _gateway_section(config),
        "discovery": {"mdns": {"mode": mdns}},
    }
    if gw.chat is not None:
        providers: dict[str, Any] = {}
        for model in gw.chat.providers.models:
            entry = providers.setdefault(model.provider, {"models": []})
            entry["models"].append(
                {
                    "id": model.model,
                    "name": model.name or model.model,
                    "reasoning": model.reasoning,
                    "input": ["text", "image"] if model.vision else ["text"],
                    "contextWindow": model.context_window,
                }
            )
        document["models"] = {"providers": providers}
        default = gw.chat.providers.model
        if default is not None:
            document["agents"] = {"defaults": {"model": {"primary": default.ref}}}
    return document


@table.method(Method.CONFIG_GET, scope=READ, params=EmptyParams)
async def config_get(gw: ConfigServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``config.get``: the configuration, redacted (see the module docstring)."""
    document = redacted_config(gw)
    raw = json.dumps(document, indent=1) + "\n"
    digest = "sha256:" + hashlib.sha256(raw.encode("utf-8")).hexdigest()
    # Our configuration is the command line plus one file, providers.json (the models):
    # that file is what ``path`` names, and ``exists`` says whether it is there.
    path = gw.config.state_dir / PROVIDERS_FILE
    return {
        "path": str(path),
        "exists": path.is_file(),
        "raw": raw,
        "parsed": document,
        "sourceConfig": document,
        "resolved": document,
        "valid": True,
        "runtimeConfig": document,
        "config": document,
        "hash": digest,
        "issues": [],
        "warnings": [],
        "legacyIssues": [],
    }
