"""One authenticated connection, as the gateway sees it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

from gateway.nodes.inventory import NodeInventory
from gateway.wire_check import check_event, check_frame, checking_events
from openclaw_desktop.protocol import CloseCode, ErrorCode, EventName, error_shape

__all__ = ["Peer", "PeerTransport"]

log = logging.getLogger("gateway.peer")

#: How long a peer that stopped reading gets to take our close frame.
SLOW_CONSUMER_CLOSE_S = 3.0


class PeerTransport(Protocol):
    """What a peer writes to (:class:`gateway.peer_transport.WebSocketTransport`)."""

    async def send(self, data: bytes) -> bool:
        """Write one text frame; False once the connection is closed."""
        ...

    async def close(self, code: int, reason: str) -> None:
        """Close the connection (closing handshake)."""
        ...

    def abort(self) -> None:
        """Cut the connection at once."""
        ...


@dataclass(eq=False)
class Peer:
    """An authenticated client: operator or node.

    Sends are queued and written by one writer task, so a slow reader cannot stall the
    gateway; past ``max_buffered_bytes`` of unsent data the peer is disconnected (1008).
    The peer owns that queue, not the socket: frames go to its :class:`PeerTransport`.
    """

    transport: PeerTransport
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
    #: How the connect authenticated (``token``, ``device-token``, ``bootstrap-token``...).
    auth_method: str = ""
    #: What a node reported about itself on this connection (``pathEnv``, host stats...).
    inventory: NodeInventory = field(default_factory=NodeInventory)
    max_buffered_bytes: int = 50 * 1024 * 1024
    _seq: int = 0
    _queue: asyncio.Queue[bytes | Callable[[], object] | None] = field(
        default_factory=asyncio.Queue
    )
    _buffered: int = 0
    _writer: asyncio.Task[None] | None = None
    _dropper: asyncio.Task[None] | None = None
    closed: bool = False

    @property
    def is_node(self) -> bool:
        """Role node."""
        return self.role == "node"

    @property
    def managing_device_id(self) -> str | None:
        """The caller's device as device management sees it: only a session authenticated
        with its device token speaks for its device (the real ``callerDeviceId``)."""
        return self.device_id if self.auth_method == "device-token" else None

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

    def after_sent(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once every frame queued so far was written to the socket (not
        at all if the connection closes first)."""
        if not self.closed:
            self._queue.put_nowait(callback)

    async def drain(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until everything queued so far was written."""
        if self._writer is None or self._writer.done():
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._queue.join()

    async def close(self, code: int, reason: str, *, drain_s: float = 1.0) -> None:
        """Close the connection once what was queued so far went out (waiting at most
        ``drain_s`` for it)."""
        await self.drain(drain_s)
        await self.transport.close(code, reason)

    def send_frame(self, frame: dict[str, Any]) -> None:
        """Queue one frame; one that cannot be encoded is logged and dropped (see
        :meth:`respond`, which answers instead)."""
        if self.closed:
            return
        if checking_events():
            check_frame(frame)
        try:
            data = orjson.dumps(frame)
        except orjson.JSONEncodeError as exc:
            log.warning("dropped a %s frame to %s: %s", frame.get("type"), self.conn_id[:8], exc)
            return
        self._queue_bytes(data)

    def _queue_bytes(self, data: bytes) -> None:
        self._buffered += len(data)
        if self._buffered > self.max_buffered_bytes:
            log.warning("peer %s is not reading; disconnecting", self.conn_id[:8])
            self.closed = True
            self._dropper = asyncio.get_running_loop().create_task(self._drop_slow_consumer())
            return
        self._queue.put_nowait(data)

    async def _drop_slow_consumer(self) -> None:
        """Close (1008, as the real gateway) a peer that stopped reading; if even the close
        frame cannot be written in time, cut the connection."""
        try:
            async with asyncio.timeout(SLOW_CONSUMER_CLOSE_S):
                await self.transport.close(CloseCode.POLICY_VIOLATION, "slow consumer")
        except TimeoutError:
            self.transport.abort()

    def send_event(
        self,
        event: EventName,
        payload: Any,
        *,
        seq: bool = True,
        state_version: dict[str, int] | None = None,
        checked: bool = False,
    ) -> None:
        """Queue an event; operator events carry a per-connection ``seq``. With
        ``OPENCLAW_GATEWAY_CHECK_EVENTS=1`` its payload is checked against the protocol's
        event model first (:func:`gateway.wire_check.check_event`), unless the caller did
        (``checked``: the hub checks a broadcast once for all its peers)."""
        if not checked and checking_events():
            check_event(event, payload)
        frame: dict[str, Any] = {"type": "event", "event": event, "payload": payload}
        if seq and not self.is_node:
            self._seq += 1
            frame["seq"] = self._seq
        if state_version is not None:
            frame["stateVersion"] = state_version
        self.send_frame(frame)

    def respond(self, request_id: Any, ok: bool, payload: Any = None, error: Any = None) -> None:
        """Queue a response (``request_id`` is echoed as received, normally a string).

        Always queues exactly one answer: an id that cannot be encoded (a mistyped one, nested
        deeper than JSON encoding goes) is answered as ``"invalid"``, the gateway's id for
        frames without a usable one, and a payload or error that cannot be encoded is
        replaced by ``UNAVAILABLE response could not be encoded``.
        """
        if self.closed:
            return
        frame: dict[str, Any] = {"type": "res", "id": request_id, "ok": ok}
        if ok:
            if payload is not None:
                frame["payload"] = payload
        else:
            frame["error"] = error
        if checking_events():
            check_frame(frame)
        data = _encoded(frame)
        if data is None and not isinstance(request_id, str):
            frame["id"] = "invalid"
            data = _encoded(frame)
        if data is None:
            log.warning("the response %s to %s could not be encoded", ok, self.conn_id[:8])
            fallback = error_shape(ErrorCode.UNAVAILABLE, "response could not be encoded")
            data = orjson.dumps({"type": "res", "id": frame["id"], "ok": False, "error": fallback})
        self._queue_bytes(data)

    async def _write_loop(self) -> None:
        try:
            while True:
                item = await self._queue.get()
                try:
                    if item is None:
                        return
                    if callable(item):
                        try:
                            item()
                        except Exception:
                            log.exception("after-send callback failed")
                        continue
                    self._buffered -= len(item)
                    if not await self.transport.send(item):
                        return
                finally:
                    self._queue.task_done()
        finally:
            self.closed = True
            self._discard_queue()

    def _discard_queue(self) -> None:
        """Drop what can no longer be sent (so :meth:`drain` never waits for it)."""
        while True:
            try:
                self._queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            self._queue.task_done()
            self._buffered = 0


def _encoded(frame: dict[str, Any]) -> bytes | None:
    """``frame`` as JSON, or None when it cannot be encoded (nested deeper than orjson's
    254 levels, or holding a value JSON has no form for)."""
    try:
        return orjson.dumps(frame)
    except orjson.JSONEncodeError:
        return None
