"""A scripted WebSocket server on 127.0.0.1 for transport tests.

Real sockets, real websockets framing; each connection runs a coroutine the test supplies,
so a test can make the "gateway" misbehave in ways the real one will not on demand (go
silent, skip seq numbers, send garbage, close with 1012). Interop tests cover the real one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.identity.payload import build_payload_v3, signature_token
from openclaw_desktop.identity.verify import normalize_public_key, verify_signature
from openclaw_desktop.node import NodeContext, NodeSession, build_dispatcher
from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode, Role
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection, RetryPolicy

Handler = Callable[["ScriptedPeer"], Awaitable[None]]


def hello_payload(
    *,
    role: str = "operator",
    scopes: list[str] | None = None,
    device_token: str | None = None,
    tick_interval_ms: int = 30_000,
    max_payload: int = 26_214_400,
) -> dict[str, Any]:
    """A minimal, valid ``hello-ok`` payload."""
    auth: dict[str, Any] = {"method": "token", "role": role, "scopes": scopes or []}
    if device_token:
        auth["deviceToken"] = device_token
        auth["issuedAtMs"] = 1
    return {
        "type": "hello-ok",
        "protocol": 4,
        "server": {"version": "scripted", "connId": uuid.uuid4().hex},
        "features": {"methods": ["health"], "events": ["tick"]},
        "snapshot": {"presence": [], "health": {}, "stateVersion": {"presence": 1, "health": 1}},
        "auth": auth,
        "policy": {
            "maxPayload": max_payload,
            "maxBufferedBytes": 52_428_800,
            "tickIntervalMs": tick_interval_ms,
        },
    }


@dataclass
class ScriptedPeer:
    """One accepted connection, seen from the scripted gateway."""

    ws: ServerConnection
    index: int
    received: list[dict[str, Any]] = field(default_factory=list)

    async def send(self, frame: dict[str, Any] | str | bytes) -> None:
        """Send a frame (dicts are JSON-encoded; str/bytes go out raw)."""
        data = json.dumps(frame) if isinstance(frame, dict) else frame
        await self.ws.send(data)

    async def recv(self, timeout: float = 5.0) -> dict[str, Any]:
        """The next frame from the client, decoded."""
        async with asyncio.timeout(timeout):
            raw = await self.ws.recv()
        frame: dict[str, Any] = json.loads(raw)
        self.received.append(frame)
        return frame

    async def challenge(
        self, nonce: str = "nonce-1", ts: int = 1_796_000_000_000
    ) -> dict[str, Any]:
        """Send ``connect.challenge`` and return the client's ``connect`` request."""
        await self.send(
            {"type": "event", "event": "connect.challenge", "payload": {"nonce": nonce, "ts": ts}}
        )
        frame = await self.recv()
        assert frame["method"] == "connect", frame
        return frame

    async def accept(self, **hello: Any) -> dict[str, Any]:
        """Run the handshake successfully; returns the connect request."""
        connect = await self.challenge()
        await self.send(
            {"type": "res", "id": connect["id"], "ok": True, "payload": hello_payload(**hello)}
        )
        return connect

    async def reject(self, error: dict[str, Any], close_code: int = 1008) -> dict[str, Any]:
        """Answer ``connect`` with an error and close, as the real gateway does."""
        connect = await self.challenge()
        await self.send({"type": "res", "id": connect["id"], "ok": False, "error": error})
        await self.ws.close(close_code, error.get("message", "")[:100])
        return connect

    def invoke_results(self) -> list[dict[str, Any]]:
        """The params of every ``node.invoke.result`` the node sent so far."""
        return [f["params"] for f in self.received if f.get("method") == "node.invoke.result"]

    async def invoke_result(self, invoke_id: str, timeout: float = 20) -> dict[str, Any]:
        """The one ``node.invoke.result`` for ``invoke_id``, waiting (bounded) for it."""
        async with asyncio.timeout(timeout):
            while True:
                found = [r for r in self.invoke_results() if r.get("id") == invoke_id]
                if found:
                    assert len(found) == 1, found
                    return found[0]
                await asyncio.sleep(0.01)

    async def serve_requests(self, answer: Callable[[dict[str, Any]], Any] | None = None) -> None:
        """Answer each request with ``answer(frame)`` (default ``{"echo": params}``)."""
        with contextlib.suppress(Exception):
            while True:
                frame = await self.recv(timeout=60)
                if frame.get("type") != "req":
                    continue
                payload = answer(frame) if answer else {"echo": frame.get("params")}
                await self.send({"type": "res", "id": frame["id"], "ok": True, "payload": payload})


def connect_signature_valid(connect: dict[str, Any]) -> bool:
    """Whether the connect request's device proof verifies as a v3 signature."""
    params = connect["params"]
    device = params["device"]
    client = params["client"]
    payload = build_payload_v3(
        device_id=device["id"],
        client_id=client["id"],
        client_mode=client["mode"],
        role=params["role"],
        scopes=params.get("scopes", []),
        signed_at_ms=device["signedAt"],
        token=signature_token(params.get("auth")),
        nonce=device["nonce"],
        platform=client.get("platform"),
        device_family=client.get("deviceFamily"),
    )
    return verify_signature(normalize_public_key(device["publicKey"]), payload, device["signature"])


class ScriptedGateway:
    """Runs ``handler(peer)`` for each connection, in order of arrival."""

    def __init__(self, *handlers: Handler, default: Handler | None = None) -> None:
        self._handlers = list(handlers)
        self._default = default
        self.peers: list[ScriptedPeer] = []
        self.connected = asyncio.Event()
        self.port = 0

    @property
    def url(self) -> str:
        """``ws://127.0.0.1:<port>``."""
        return f"ws://127.0.0.1:{self.port}"

    async def _on_connection(self, ws: ServerConnection) -> None:
        index = len(self.peers)
        peer = ScriptedPeer(ws, index)
        self.peers.append(peer)
        self.connected.set()
        handler = self._handlers[index] if index < len(self._handlers) else self._default
        if handler is None:
            await ws.close(1013, "no more scripted connections")
            return
        with contextlib.suppress(Exception):
            await handler(peer)

    async def wait_for_peers(self, count: int, timeout: float = 10.0) -> None:
        """Wait until ``count`` connections arrived."""
        async with asyncio.timeout(timeout):
            while len(self.peers) < count:
                await asyncio.sleep(0.01)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ScriptedGateway]:
        """Serve on a random loopback port for the duration of the block."""
        async with serve(self._on_connection, "127.0.0.1", 0, max_size=2**26) as server:
            sock = next(iter(server.sockets))
            self.port = sock.getsockname()[1]
            yield self


def node_options(url: str, commands: Sequence[str], caps: Sequence[str]) -> ConnectionOptions:
    """A node's connection to a scripted gateway: shared token ``shared-1``, a fresh
    identity, ``commands`` and ``caps`` declared, fast retries."""
    return ConnectionOptions(
        url=url,
        role=Role.NODE,
        client=ClientInfo(id=ClientId.LINUX, version="t", platform="linux", mode=ClientMode.NODE),
        signer=DeviceIdentity.generate(),
        credentials=CredentialStore(MemorySecretStore()),
        shared_token="shared-1",
        commands=tuple(commands),
        caps=tuple(caps),
        min_protocol=3,
        retry=RetryPolicy(base_ms=20, early_ceiling_ms=100, pairing_poll_ms=50),
    )


@contextlib.asynccontextmanager
async def node_behind_script(
    ctx: NodeContext, commands: Sequence[str], caps: Sequence[str]
) -> AsyncIterator[tuple[ScriptedPeer, NodeSession]]:
    """Our node (the real connection, session and spec table for ``ctx``) connected to a
    scripted gateway that accepts it and answers its requests with ``{}``: the gateway's
    peer and the session, closed on exit."""
    peers: list[ScriptedPeer] = []

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept(role="node")
        peers.append(peer)
        await peer.serve_requests(lambda frame: {})

    gw = ScriptedGateway(script)
    async with gw.running():
        connection = GatewayConnection(node_options(gw.url, commands, caps))
        session = NodeSession(connection, build_dispatcher(ctx))
        connection.start()
        try:
            async with asyncio.timeout(10):
                while not peers:
                    await asyncio.sleep(0.01)
            yield peers[0], session
        finally:
            await session.aclose()
            await connection.aclose()
