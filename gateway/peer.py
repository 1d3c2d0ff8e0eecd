"""One authenticated connection, as the gateway sees it."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import orjson
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

__all__ = ["Peer"]

log = logging.getLogger("gateway.peer")


@dataclass(eq=False)
class Peer:
    """An authenticated client: operator or node.

    Sends are queued and written by one writer task, so a slow reader cannot stall the
    gateway; past ``max_buffered_bytes`` of unsent data the peer is disconnected (1013).
    """

    ws: ServerConnection
    conn_id: str
    role: str
    scopes: list[str]
    client: dict[str, Any]
    device_id: str | None
    remote_ip: str
    caps: list[str] = field(default_factory=list)
    #: Commands the node declared (after policy filtering).
    declared_commands: list[str] = field(default_factory=list)
    #: Commands currently invokable (declared and approved).
    commands: list[str] = field(default_factory=list)
    permissions: dict[str, bool] = field(default_factory=dict)
    connected_at_ms: int = 0
    max_buffered_bytes: int = 50 * 1024 * 1024
    _seq: int = 0
    _queue: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    _buffered: int = 0
    _writer: asyncio.Task[None] | None = None
    closed: bool = False

    @property
    def is_node(self) -> bool:
        """Role node."""
        return self.role == "node"

    @property
    def platform(self) -> str:
        """``client.platform``."""
        return str(self.client.get("platform") or "")

    @property
    def device_family(self) -> str | None:
        """``client.deviceFamily``."""
        value = self.client.get("deviceFamily")
        return str(value) if value else None

    def start(self) -> None:
        """Start the writer task."""
        self._writer = asyncio.create_task(
            self._write_loop(), name=f"peer-writer-{self.conn_id[:8]}"
        )

    async def stop(self) -> None:
        """Stop the writer (after flushing what is queued)."""
        self.closed = True
        if self._writer is not None:
            self._queue.put_nowait(None)
            try:
                async with asyncio.timeout(2):
                    await self._writer
            except (TimeoutError, asyncio.CancelledError):
                self._writer.cancel()

    def send_frame(self, frame: dict[str, Any]) -> None:
        """Queue one frame."""
        if self.closed:
            return
        data = orjson.dumps(frame)
        self._buffered += len(data)
        if self._buffered > self.max_buffered_bytes:
            log.warning("peer %s is not reading; disconnecting", self.conn_id[:8])
            self.closed = True
            asyncio.get_running_loop().create_task(self.ws.close(1013, "slow consumer"))
            return
        self._queue.put_nowait(data)

    def send_event(
        self,
        event: str,
        payload: Any,
        *,
        seq: bool = True,
        state_version: dict[str, int] | None = None,
    ) -> None:
        """Queue an event; operator events carry a per-connection ``seq``."""
        frame: dict[str, Any] = {"type": "event", "event": event, "payload": payload}
        if seq and not self.is_node:
            self._seq += 1
            frame["seq"] = self._seq
        if state_version is not None:
            frame["stateVersion"] = state_version
        self.send_frame(frame)

    def respond(self, request_id: str, ok: bool, payload: Any = None, error: Any = None) -> None:
        """Queue a response."""
        frame: dict[str, Any] = {"type": "res", "id": request_id, "ok": ok}
        if ok:
            if payload is not None:
                frame["payload"] = payload
        else:
            frame["error"] = error
        self.send_frame(frame)

    async def _write_loop(self) -> None:
        while True:
            data = await self._queue.get()
            if data is None:
                return
            self._buffered -= len(data)
            try:
                await self.ws.send(data.decode("utf-8"))
            except ConnectionClosed:
                self.closed = True
                return
