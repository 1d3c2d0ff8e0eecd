"""Method handlers, one module per family; :data:`HANDLERS` maps names to handlers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from gateway.methods import chat, devices, nodes, sessions, system, talk
from gateway.peer import Peer

if TYPE_CHECKING:
    from gateway.core import GatewayCore

__all__ = ["HANDLERS", "Handler"]

Handler = Callable[["GatewayCore", Peer, Any], Awaitable[Any]]

HANDLERS: dict[str, Handler] = {
    **system.HANDLERS,
    **nodes.HANDLERS,
    **devices.HANDLERS,
    **chat.HANDLERS,
    **sessions.HANDLERS,
    **talk.HANDLERS,
}
