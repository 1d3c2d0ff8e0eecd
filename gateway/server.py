"""The socket side of the bundled gateway: websockets server, handshake, per-peer loops."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import ssl
import uuid
from typing import Any

import orjson
import websockets
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from gateway.app import GatewayApp
from gateway.config import GatewayConfig
from gateway.connect import GatewayServerConnection, admit
from gateway.handshake import REQUEST_FRAME_SCHEMA, ConnectRejection, parse_first_frame
from gateway.handshake.jsonschema_errors import collect_errors, format_errors
from gateway.hub import now_ms
from gateway.peer import Peer
from gateway.preauth import PreauthBudget
from gateway.proxies import (
    PROXY_ATTRIBUTION_GUIDANCE,
    TrustedProxies,
    normalize_ip,
    proxy_attribution_required,
)
from gateway.request_gate import may_nest_too_deep, too_deep_to_parse
from gateway.state import GatewayState, read_or_create_shared_token
from gateway.wire_check import check_event, checking_events
from openclaw_desktop.protocol import (
    MAX_PAYLOAD_BYTES,
    MAX_PREAUTH_PAYLOAD_BYTES,
    CloseCode,
    ErrorCode,
    EventName,
    error_shape,
)

__all__ = ["GatewayServer"]

#: bind() errors meaning this host has no IPv6 (or no ::1).
_NO_IPV6 = frozenset({errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT})
log = logging.getLogger("gateway.server")

MAX_INFLIGHT_PER_PEER = 512
#: close() returns within this many seconds.
CLOSE_BUDGET_S = 1.5
#: Unparsable frames are logged once, then every this many.
INVALID_FRAME_LOG_EVERY = 1000


class GatewayServer:
    """Serves the gateway protocol until :meth:`close`."""

    def __init__(self, config: GatewayConfig) -> None:
        if config.auth_mode == "none" and not _loopback_only(config):
            raise ValueError("auth mode 'none' is only allowed when bound to loopback")
        if config.auth_mode == "password" and not config.password:
            raise ValueError("auth mode 'password' needs a password")
        if config.auth_mode == "token" and not config.token:
            # Generated on first start (0600 file in the state dir), reused afterwards.
            config.token = read_or_create_shared_token(config.state_dir)
        self.config = config
        self.state = GatewayState(config.state_dir / "gateway.sqlite3")
        self.tls_fingerprint: str | None = None
        self._ssl: ssl.SSLContext | None = None
        if config.tls:
            from gateway.tls import ensure_certificate, server_context

            material = ensure_certificate(config.state_dir)
            self.tls_fingerprint = material.fingerprint
            self._ssl = server_context(material)
        self.app = GatewayApp(config, self.state, tls_fingerprint=self.tls_fingerprint)
        self._server: Server | None = None
        self._tick: asyncio.Task[None] | None = None
        #: Connections between the upgrade and the end of connect (gateway.preauth).
        self.preauth = PreauthBudget()
        self._proxies = TrustedProxies(
            config.trusted_proxies, allow_real_ip_fallback=config.allow_real_ip_fallback
        )
        self._warned_unattributable = False
        self._advertiser: Any = None
        self._closing = False
        self.port = config.port

    @property
    def url(self) -> str:
        """The loopback URL of this gateway."""
        return f"{'wss' if self._ssl else 'ws'}://127.0.0.1:{self.port}"

    async def start(self) -> None:
        """Bind and start serving (and advertising, when configured)."""
        from gateway.chat_host import start_chat

        # Chat first: a client that connects the moment the port opens (a window
        # reconnecting after a crash) must find chat.* ready, not "chat is starting".
        if self.app.chat is None:
            self.app.chat = await start_chat(self.app)
        try:
            hosts = await self._bind(self.config.listen_hosts)
        except BaseException:
            chat, self.app.chat = self.app.chat, None
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await chat.aclose()
            raise
        assert self._server is not None
        sockets = list(self._server.sockets)
        if sockets:
            self.port = sockets[0].getsockname()[1]
        self.app.config.port = self.port
        self._tick = asyncio.create_task(self._tick_loop(), name="gateway-tick")
        log.info("gateway listening on %s (%s)", self.url, ", ".join(hosts))
        if self.config.advertise:
            from gateway.advertise import GatewayAdvertiser

            self._advertiser = GatewayAdvertiser()
            try:
                await self._advertiser.start(
                    port=self.port,
                    display_name=self.config.display_name,
                    tls_fingerprint=self.tls_fingerprint,
                    interfaces=self.config.mdns_interfaces,
                    full=self.config.mdns_mode == "full",
                )
            except Exception as exc:  # advertising is best effort; serving is not
                log.warning("mDNS advertising unavailable: %s", exc)
                self._advertiser = None

    async def _bind(self, hosts: list[str]) -> list[str]:
        """Serve on ``hosts`` (IPv4 only when this host has no IPv6); the hosts served."""
        try:
            self._server = await self._serve(hosts)
        except OSError as exc:
            # A host without IPv6 (disabled in the kernel, or no ::1) still serves IPv4.
            ipv4 = [h for h in hosts if ":" not in h]
            if exc.errno not in _NO_IPV6 or not ipv4 or ipv4 == hosts:
                raise
            log.warning("IPv6 is unavailable here (%s): serving on %s only", exc, ", ".join(ipv4))
            self._server = await self._serve(ipv4)
            return ipv4
        return hosts

    async def _serve(self, hosts: list[str]) -> Server:
        return await serve(
            self._handle,
            hosts,  # type: ignore[arg-type]  # create_server takes a list
            self.config.port,
            ssl=self._ssl,
            max_size=MAX_PREAUTH_PAYLOAD_BYTES,
            compression=None,
            create_connection=GatewayServerConnection,
            ping_interval=None,
            open_timeout=10,
            close_timeout=2,
            server_header=None,
            process_request=self._attribute,
        )

    async def close(self, reason: str = "gateway stopping") -> None:
        """Stop within two seconds (:data:`CLOSE_BUDGET_S`): tell peers, fail invokes, close
        sockets (peers that do not finish the closing handshake in time are cut off)."""
        if self._closing:
            return
        self._closing = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CLOSE_BUDGET_S
        if self._server is not None:
            self._server.server.close()  # no new connections; live ones get a goodbye first
        if self._advertiser is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self._advertiser.stop()
        peers = list(self.app.hub.peers.values())
        for peer in peers:
            peer.send_event(EventName.SHUTDOWN, {"reason": reason}, seq=not peer.is_node)
        self.app.router.fail_all("gateway shutting down")
        if self._tick is not None:
            self._tick.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tick
        # Let the failed invokes answer their operators, then flush what is queued (bounded),
        # so nobody is left waiting on a request the closing socket swallowed.
        await asyncio.sleep(0)
        await asyncio.gather(*(peer.drain(0.4) for peer in peers))
        await self.app.pairing.drain(0.3)
        if self.app.talk is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self.app.talk.aclose()
        if self.app.chat is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(1.0):
                    await self.app.chat.aclose()
        if self._server is not None:
            self._server.close(close_connections=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.1, deadline - loop.time() - 0.2)):
                    await self._server.wait_closed()
            for connection in list(self._server.all_connections):
                connection.transport.abort()  # did not answer our close frame in time
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.2):
                    await self._server.wait_closed()
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
            for peer in list(self.app.hub.peers.values()):
                peer.send_event(EventName.TICK, payload)
            self.app.hub.health_changed(self.app.health_snapshot())

    def _attribute(self, connection: ServerConnection, request: Request) -> Response | None:
        """The upgrade hook: who the client is (:mod:`gateway.proxies`). Forwarded headers
        that no trusted proxy vouches for get the real gateway's HTTP 403."""
        peer = str(connection.remote_address[0]) if connection.remote_address else ""
        attribution = self._proxies.attribute(peer, request.headers)
        if attribution is None:
            if not self._warned_unattributable:  # once: the log must not grow with a flood
                self._warned_unattributable = True
                log.warning(
                    "refused an upgrade from %s: its forwarded client headers name no client "
                    "a trusted proxy (--trusted-proxy) vouches for. %s",
                    peer,
                    PROXY_ATTRIBUTION_GUIDANCE,
                )
            return proxy_attribution_required()
        if isinstance(connection, GatewayServerConnection):
            connection.attribution = attribution
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        assert isinstance(ws, GatewayServerConnection)
        if ws.attribution is not None:
            address = ws.attribution.client_ip
        else:
            address = normalize_ip(str(ws.remote_address[0])) if ws.remote_address else "?"
        wait_s = self.config.handshake_timeout_ms / 1000
        if not await self.preauth.acquire(address, ws, wait_s):
            if not ws.gone:
                await ws.close(CloseCode.TRY_AGAIN_LATER, "too many pending handshakes")
            return
        try:
            peer = await self._handshake(ws, address)
        finally:
            self.preauth.release(address, ws)
        if peer is not None:
            await self._serve_peer(ws, peer)

    async def _handshake(self, ws: GatewayServerConnection, address: str) -> Peer | None:
        nonce, ts = str(uuid.uuid4()), now_ms()
        challenge = {
            "type": "event",
            "event": EventName.CONNECT_CHALLENGE,
            "payload": {"nonce": nonce, "ts": ts},
        }
        if checking_events():  # as every event sent
            check_event(EventName.CONNECT_CHALLENGE, challenge["payload"])
        try:
            await ws.send(_dumps(challenge))
            self.preauth.challenged(address, ws)
            async with asyncio.timeout(self.config.handshake_timeout_ms / 1000):
                data = await ws.recv()
        except TimeoutError:
            await ws.close(CloseCode.POLICY_VIOLATION, "handshake timeout")
            return None
        except websockets.ConnectionClosed:
            return None
        request_id: str | None = None
        try:
            request_id, params = parse_first_frame(data)
            return await admit(self.app, ws, request_id, params, nonce=nonce, address=address)
        except ConnectRejection as rejection:
            # The rejection knows the id when parse_first_frame refused a non-connect request.
            response = rejection.response_frame(request_id)
            if response is not None:
                with contextlib.suppress(websockets.ConnectionClosed):
                    await ws.send(_dumps(response))
            await ws.close(rejection.close_code, rejection.close_reason[:120])
            return None
        except Exception:  # a bug must not take the server down: close this one socket
            log.exception("connect from %s failed", address)
            await ws.close(CloseCode.INTERNAL_ERROR, "internal error")
            return None

    async def _serve_peer(self, ws: ServerConnection, peer: Peer) -> None:
        ws.protocol.max_message_size = MAX_PAYLOAD_BYTES
        tasks: set[asyncio.Task[None]] = set()
        invalid = 0
        try:
            while True:
                message = await ws.recv(decode=False)
                try:
                    parsed = orjson.loads(message)
                except orjson.JSONDecodeError as exc:
                    if too_deep_to_parse(peer, message, exc):  # answered, not dropped
                        continue
                    # As the real gateway: logged and dropped; the connection stays.
                    invalid += 1
                    if invalid == 1 or invalid % INVALID_FRAME_LOG_EVERY == 0:
                        log.warning(
                            "dropped %d unparsable frame(s) from %s: %s",
                            invalid,
                            peer.conn_id[:8],
                            exc,
                        )
                    continue
                frame = _request_frame(peer, parsed)
                if frame is None:
                    continue
                if frame["method"] == "connect":
                    peer.respond(frame["id"], False, error=_already_connected())
                    continue
                if len(tasks) >= MAX_INFLIGHT_PER_PEER:
                    peer.respond(frame["id"], False, error=_busy())
                    continue
                task = asyncio.create_task(
                    self.app.handle_request(peer, frame, may_nest=may_nest_too_deep(message))
                )
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except websockets.ConnectionClosed:
            pass
        finally:
            self.app.hub.remove(peer)
            if peer.is_node:
                self.app.nodes.node_disconnected(peer)
            if self.app.talk is not None:
                self.app.talk.connection_gone(peer.conn_id)
            for task in list(tasks):
                task.cancel()
            await peer.stop()
            log.info("%s %s disconnected", peer.role, (peer.device_id or peer.conn_id)[:12])


def _request_frame(peer: Peer, parsed: Any) -> dict[str, Any] | None:
    """The request in an authenticated peer's frame, or None after answering, as the real
    gateway does, ``INVALID_REQUEST invalid request frame: ...`` (``id`` echoed, else
    ``"invalid"``) for anything that is not a valid request frame."""
    errors = collect_errors(REQUEST_FRAME_SCHEMA, parsed)
    if not errors:
        frame: dict[str, Any] = parsed
        return frame
    echoed = parsed.get("id") if isinstance(parsed, dict) else None
    peer.respond(
        "invalid" if echoed is None else echoed,
        False,
        error=error_shape(
            ErrorCode.INVALID_REQUEST, f"invalid request frame: {format_errors(errors)}"
        ),
    )
    return None


def _loopback_only(config: GatewayConfig) -> bool:
    """Whether every listen address is a loopback one (``bind`` alone says nothing when
    ``hosts`` is set)."""
    for host in config.listen_hosts:
        if host == "localhost":
            continue
        try:
            if not ipaddress.ip_address(host.split("%")[0]).is_loopback:
                return False
        except ValueError:
            return False
    return True


def _dumps(frame: dict[str, Any]) -> str:
    return orjson.dumps(frame).decode("utf-8")


def _already_connected() -> dict[str, Any]:
    return error_shape(ErrorCode.INVALID_REQUEST, "connect already completed")


def _busy() -> dict[str, Any]:
    return error_shape(
        ErrorCode.UNAVAILABLE, "too many requests in flight", retryable=True, retry_after_ms=100
    )
