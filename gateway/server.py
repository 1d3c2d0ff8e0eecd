"""The socket side of the bundled gateway: websockets server, handshake, per-peer loops."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import uuid
from collections import Counter
from typing import Any

import websockets
from websockets.asyncio.server import Server, ServerConnection, serve

from gateway.advertise import GatewayAdvertiser
from gateway.config import GatewayConfig
from gateway.connect import admit
from gateway.core import GatewayCore
from gateway.handshake import ConnectRejection, parse_first_frame
from gateway.hub import now_ms
from gateway.peer import Peer
from gateway.state import GatewayState
from gateway.tls import ensure_certificate, server_context
from openclaw_desktop.protocol import (
    MAX_PAYLOAD_BYTES,
    MAX_PREAUTH_PAYLOAD_BYTES,
    FrameDecodeError,
    decode_frame,
)

__all__ = ["GatewayServer"]

log = logging.getLogger("gateway.server")

MAX_PREAUTH_PER_ADDRESS = 32
MAX_PREAUTH_TOTAL = 512
MAX_INFLIGHT_PER_PEER = 512
MAX_INVALID_FRAMES = 100


class GatewayServer:
    """Serves the gateway protocol until :meth:`close`."""

    def __init__(self, config: GatewayConfig) -> None:
        if config.auth_mode == "none" and config.bind != "loopback" and not _loopback_only(config):
            raise ValueError("auth mode 'none' is only allowed when bound to loopback")
        self.config = config
        self.state = GatewayState(config.state_dir / "gateway.sqlite3")
        self.tls_fingerprint: str | None = None
        self._ssl: ssl.SSLContext | None = None
        if config.tls:
            material = ensure_certificate(config.state_dir)
            self.tls_fingerprint = material.fingerprint
            self._ssl = server_context(material)
        self.core = GatewayCore(config, self.state, tls_fingerprint=self.tls_fingerprint)
        self._server: Server | None = None
        self._tick: asyncio.Task[None] | None = None
        self._preauth: Counter[str] = Counter()
        self._advertiser: GatewayAdvertiser | None = None
        self._closing = False
        self.port = config.port

    @property
    def url(self) -> str:
        """The loopback URL of this gateway."""
        return f"{'wss' if self._ssl else 'ws'}://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Bind and start serving (and advertising, when configured)."""
        self._server = await serve(
            self._handle,
            self.config.listen_hosts,  # type: ignore[arg-type]  # create_server takes a list
            self.config.port,
            ssl=self._ssl,
            max_size=MAX_PREAUTH_PAYLOAD_BYTES,
            compression=None,
            ping_interval=None,
            open_timeout=10,
            close_timeout=2,
            server_header=None,
        )
        sockets = list(self._server.sockets)
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self.core.config.port = self.port
        self._tick = asyncio.create_task(self._tick_loop(), name="gateway-tick")
        log.info("gateway listening on %s (%s)", self.url, ", ".join(self.config.listen_hosts))
        if self.config.advertise:
            self._advertiser = GatewayAdvertiser()
            try:
                await self._advertiser.start(
                    port=self.port,
                    display_name=self.config.display_name,
                    tls_fingerprint=self.tls_fingerprint,
                )
            except Exception as exc:  # advertising is best effort; serving is not
                log.warning("mDNS advertising unavailable: %s", exc)
                self._advertiser = None

    async def close(self, reason: str = "gateway stopping") -> None:
        """Stop within about two seconds: tell peers, fail invokes, close sockets."""
        if self._closing:
            return
        self._closing = True
        if self._advertiser is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._advertiser.stop(), 1.0)
        for peer in list(self.core.hub.peers.values()):
            peer.send_event("shutdown", {"reason": reason}, seq=not peer.is_node)
        self.core.router.fail_all("gateway shutting down")
        if self._tick is not None:
            self._tick.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tick
        if self._server is not None:
            self._server.close(close_connections=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)
        self.state.close()

    async def serve_forever(self) -> None:
        """Serve until cancelled."""
        if self._server is None:
            await self.start()
        assert self._server is not None
        await self._server.serve_forever()

    async def _tick_loop(self) -> None:
        interval = self.config.tick_interval_ms / 1000
        while True:
            await asyncio.sleep(interval)
            payload = {"ts": now_ms()}
            for peer in list(self.core.hub.peers.values()):
                peer.send_event("tick", payload)

    async def _handle(self, ws: ServerConnection) -> None:
        address = str(ws.remote_address[0]) if ws.remote_address else "?"
        if (
            self._preauth[address] >= MAX_PREAUTH_PER_ADDRESS
            or sum(self._preauth.values()) >= MAX_PREAUTH_TOTAL
        ):
            await ws.close(1013, "too many pending handshakes")
            return
        self._preauth[address] += 1
        try:
            peer = await self._handshake(ws, address)
        finally:
            self._preauth[address] -= 1
            if self._preauth[address] <= 0:
                del self._preauth[address]
        if peer is not None:
            await self._serve_peer(ws, peer)

    async def _handshake(self, ws: ServerConnection, address: str) -> Peer | None:
        nonce, ts = str(uuid.uuid4()), now_ms()
        challenge = {
            "type": "event",
            "event": "connect.challenge",
            "payload": {"nonce": nonce, "ts": ts},
        }
        try:
            await ws.send(_dumps(challenge))
            async with asyncio.timeout(self.config.handshake_timeout_ms / 1000):
                data = await ws.recv()
        except TimeoutError:
            await ws.close(1008, "handshake timeout")
            return None
        except websockets.ConnectionClosed:
            return None
        request_id: str | None = None
        try:
            request_id, params = parse_first_frame(data)
            return await admit(self.core, ws, request_id, params, nonce=nonce, address=address)
        except ConnectRejection as rejection:
            if rejection.respond and request_id is not None:
                with contextlib.suppress(websockets.ConnectionClosed):
                    await ws.send(
                        _dumps(
                            {"type": "res", "id": request_id, "ok": False, "error": rejection.error}
                        )
                    )
            await ws.close(rejection.close_code, rejection.close_reason[:120])
            return None

    async def _serve_peer(self, ws: ServerConnection, peer: Peer) -> None:
        ws.protocol.max_message_size = MAX_PAYLOAD_BYTES
        tasks: set[asyncio.Task[None]] = set()
        invalid = 0
        try:
            async for message in ws:
                try:
                    frame = decode_frame(message)
                except FrameDecodeError as exc:
                    invalid += 1
                    if invalid == 1:
                        log.warning("dropped invalid frame from %s: %s", peer.conn_id[:8], exc)
                    if invalid > MAX_INVALID_FRAMES:
                        await ws.close(1008, "too many invalid frames")
                        break
                    continue
                if frame["type"] != "req":
                    continue  # cancel frames and stray responses carry nothing for us yet
                if frame["method"] == "connect":
                    peer.respond(frame["id"], False, error=_already_connected())
                    continue
                if len(tasks) >= MAX_INFLIGHT_PER_PEER:
                    peer.respond(frame["id"], False, error=_busy())
                    continue
                task = asyncio.create_task(self.core.handle_request(peer, frame))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.core.hub.remove(peer)
            if peer.is_node:
                self.core.router.node_disconnected(peer)
            for task in list(tasks):
                task.cancel()
            await peer.stop()
            log.info("%s %s disconnected", peer.role, (peer.device_id or peer.conn_id)[:12])


def _loopback_only(config: GatewayConfig) -> bool:
    hosts = config.listen_hosts
    return all(h in ("127.0.0.1", "::1", "localhost") for h in hosts)


def _dumps(frame: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(frame).decode("utf-8")


def _already_connected() -> dict[str, Any]:
    from openclaw_desktop.protocol import ErrorCode, error_shape

    return error_shape(ErrorCode.INVALID_REQUEST, "connect already completed")


def _busy() -> dict[str, Any]:
    from openclaw_desktop.protocol import ErrorCode, error_shape

    return error_shape(
        ErrorCode.UNAVAILABLE, "too many requests in flight", retryable=True, retry_after_ms=100
    )
