"""``health``, ``status`` and ``system-presence``."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from gateway import __version__
from gateway.hub import now_ms
from gateway.peer import Peer
from gateway.rpc import MethodTable
from gateway.scopes import READ

if TYPE_CHECKING:
    from gateway.core import GatewayCore

__all__ = ["table"]

table = MethodTable()
"""The methods this module declares."""


@table.method("health", scope=READ, role="any")
async def health(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``health``: cheap liveness with a few counters."""
    started = time.perf_counter()
    return {
        "ok": True,
        "ts": now_ms(),
        "durationMs": int((time.perf_counter() - started) * 1000),
        "gateway": {"version": __version__, "uptimeMs": core.uptime_ms()},
        "nodes": {"connected": len(core.hub.nodes)},
        "clients": {"connected": len(core.hub.peers)},
    }


@table.method("status", scope=READ)
async def status(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``status``: what the gateway is doing."""
    return {
        "runtimeVersion": __version__,
        "runtime": "openclaw-desktop bundled gateway",
        "pid": os.getpid(),
        "uptimeMs": core.uptime_ms(),
        "authMode": core.config.auth_mode,
        "bind": core.config.bind,
        "tls": {"enabled": core.config.tls, "fingerprintSha256": core.tls_fingerprint},
        "nodes": {
            "connected": len(core.hub.nodes),
            "paired": len(core.state.nodes.list_approved()),
        },
        "clients": {"connected": len(core.hub.peers)},
        "invokes": {"pending": core.router.pending_count},
    }


@table.method("system-presence", scope=READ)
async def system_presence(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``system-presence``: the presence list."""
    return core.hub.presence()
