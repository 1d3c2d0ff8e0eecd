"""asyncio + websockets transport: reconnecting gateway connections."""

from openclaw_desktop.transport.connection import EventListener, GatewayConnection, StatusListener
from openclaw_desktop.transport.options import (
    ConnectionOptions,
    ConnectionState,
    ConnectionStatus,
    Endpoint,
)
from openclaw_desktop.transport.retry import RetryPolicy

__all__ = [
    "ConnectionOptions",
    "ConnectionState",
    "ConnectionStatus",
    "Endpoint",
    "EventListener",
    "GatewayConnection",
    "RetryPolicy",
    "StatusListener",
]
