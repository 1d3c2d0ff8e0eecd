"""The socket under a :class:`~gateway.peer.Peer`: the server wraps each admitted
websockets connection in a :class:`WebSocketTransport`, so the peer owns a send queue and
never the socket."""

from __future__ import annotations

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

__all__ = ["WebSocketTransport"]


class WebSocketTransport:
    """Writes a peer's frames to its websockets connection and closes it."""

    def __init__(self, ws: ServerConnection) -> None:
        self._ws = ws

    async def send(self, data: bytes) -> bool:
        """Write one text frame; False once the connection is closed."""
        try:
            await self._ws.send(data, text=True)
        except ConnectionClosed:
            return False
        return True

    async def close(self, code: int, reason: str) -> None:
        """The closing handshake (websockets bounds it by its ``close_timeout``)."""
        await self._ws.close(code, reason)

    def abort(self) -> None:
        """Cut the connection at once, without a closing handshake."""
        self._ws.transport.abort()
