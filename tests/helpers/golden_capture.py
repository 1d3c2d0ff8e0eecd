"""Capture golden protocol frames from the REAL OpenClaw gateway.

Used by ``tools/capture_golden.py`` (which writes ``tests/fixtures/protocol/``) and by the
live drift test ``tests/interop/test_golden_frames.py`` (which captures the same set again and
compares it with the committed files).

The sockets here are raw ``websockets`` connections, not our transport: every frame is
recorded as the gateway sent it (``json.loads`` of the text message, key order kept), before
any model of ours has seen it. What we send is built by our own code, though: the ``connect``
params by :func:`openclaw_desktop.session.build_connect_params` with a real
:class:`~openclaw_desktop.identity.DeviceIdentity`, the other params by our wire models'
``to_wire()``. So a capture also proves that the real gateway accepts what we serialize.

The gateway must run with manual pairing (``manual_pairing=True``) and :data:`GATEWAY_ALLOW`.
The scenario, in order:

1. an operator connects: ``connect.challenge``, then ``NOT_PAIRED`` and the close; the device
   is approved with the real CLI (``openclaw devices approve``); it reconnects: ``hello-ok``;
2. a wrong shared token: ``AUTH_TOKEN_MISMATCH`` and the close;
3. a node connects: ``NOT_PAIRED`` (``device.pair.requested`` reaches the operator); the
   operator approves it with ``device.pair.approve`` (``device.pair.resolved``); the node
   reconnects: node ``hello-ok`` (``node.pair.requested``); the operator approves the surface
   with ``node.pair.approve`` (``node.pair.resolved``, on both sockets);
4. ``node.invoke`` four times: answered with ``payload``, with ``payloadJSON``, with a node
   error, and once first with a wrong ``nodeId``; then a late result and an unknown node;
5. the node's own requests (``node.event`` with ``payload`` and ``payloadJSON``,
   ``node.pending.pull``), a request without params, and a ``cancel`` frame;
6. optionally one chat turn against a fake model (``chat.send``, its ``chat``/``agent`` events);
7. it waits for ``tick`` (the gateway sends one every 30 s) and whatever ``presence`` and
   ``health`` events came meanwhile.

:func:`redact` then replaces secrets (tokens, nonces, signatures, the canvas capability URL)
and machine details (state paths, host name) with placeholders. Device ids stay: they are
hashes of public keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import re
import socket
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from openclaw_desktop.config.client_profile import cli_client, node_client, user_agent
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.protocol import (
    MIN_NODE_PROTOCOL_VERSION,
    AgentEvent,
    CancelFrame,
    ChatEvent,
    ChatSendAck,
    ChatSendParams,
    ConnectChallenge,
    ConnectParams,
    EventFrame,
    HelloOk,
    NodeEventResult,
    NodeInvokeCancel,
    NodeInvokeRequest,
    NodeInvokeResponse,
    OperatorScope,
    RequestFrame,
    ResponseFrame,
    Role,
    ShutdownEvent,
    TalkEvent,
    TickEvent,
)
from openclaw_desktop.protocol.base import WireModel
from openclaw_desktop.protocol.methods.nodes import (
    NodeEventParams,
    NodeInvokeParams,
    NodeInvokeProgressParams,
    NodeInvokeResultParams,
)
from openclaw_desktop.session import ConnectPlan, Credentials, build_connect_params, select_auth

__all__ = [
    "CAPTURE_FILES",
    "GATEWAY_ALLOW",
    "NODE_COMMANDS",
    "Capture",
    "CaptureError",
    "RecordingSocket",
    "capture_all",
    "drift",
    "event_drift",
    "iter_frames",
    "redact",
    "shape",
    "validate_frame",
]

GATEWAY_ALLOW = ("device.info", "device.status")
"""``gateway.nodes.commands.allow`` for the capture gateway (system.notify is allowed on linux)."""

NODE_COMMANDS = ("device.info", "device.status", "system.notify")
NODE_CAPS = ("device", "system")
NODE_PERMISSIONS = {"notifications": True, "camera": False}
#: The eight scopes the captures were made with: OperatorScope's but the sessions scopes.
OPERATOR_SCOPES = tuple(
    scope.value
    for scope in OperatorScope
    if scope not in (OperatorScope.SESSIONS_READ, OperatorScope.SESSIONS_WRITE)
)
OPERATOR_CAPS = ("tool-events", "exec-approvals", "plugin-approvals")
NODE_NAME = "golden-capture-node"
WRONG_TOKEN = "golden-capture-wrong-token"
NOTIFY = {"title": "T", "body": "B"}

CAPTURE_FILES: dict[str, str] = {
    "connect_challenge.json": "the first frame of every connection: connect.challenge",
    "hello_ok_operator_captured.json": "operator hello-ok (token auth, v3 signature, 8 scopes)",
    "hello_ok_node.json": "node hello-ok (after device.pair.approve)",
    "connect_not_paired_operator.json": "NOT_PAIRED res to a new operator, and the close",
    "connect_not_paired_node.json": "NOT_PAIRED res to a new node, and the close",
    "connect_token_mismatch.json": "AUTH_TOKEN_MISMATCH res to a wrong shared token, and the close",
    "node_invoke_request_captured.json": "node.invoke.request as received by our node",
    "node_invoke_results.json": "node.invoke.result requests, the gateway's acks, operator res",
    "gateway_events.json": "events: tick, presence, health, device.pair.*, node.pair.*, ...",
    "sent_frames.json": "frames we serialized, each with the real gateway's reply",
    "chat_run.json": "one chat turn with a fake model: the chat.send ack and its events",
}
"""Every file a capture writes, with what it holds."""

_TIMEOUT = 20.0
_TICK_TIMEOUT = 40.0
_CHAT_TIMEOUT = 90.0
_CAP_URL = re.compile(r"(/__openclaw__/cap/)[A-Za-z0-9_-]+")
_SECRET_KEYS = frozenset(
    {"token", "deviceToken", "bootstrapToken", "password", "signature", "nonce", "recoveryScope"}
)


class CaptureError(RuntimeError):
    """The real gateway did not answer as the capture scenario expects."""


# ------------------------------------------------------------------------- raw sockets


class RecordingSocket:
    """A raw websocket that records every frame it receives, in order, as parsed JSON."""

    def __init__(self, ws: ClientConnection, name: str) -> None:
        self.ws = ws
        self.name = name
        self.frames: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.close_code: int | None = None
        self.close_reason: str | None = None
        self.closed = asyncio.Event()
        self._changed = asyncio.Event()
        self._reader = asyncio.create_task(self._read(), name=f"golden-read-{name}")

    @classmethod
    async def open(cls, url: str, name: str) -> Self:
        """Connect to ``url`` (no frame is sent yet)."""
        ws = await connect(url, open_timeout=_TIMEOUT, max_size=None, user_agent_header=None)
        return cls(ws, name)

    async def _read(self) -> None:
        try:
            async for message in self.ws:
                self.frames.append(json.loads(message))
                self._notify()
        except ConnectionClosed:
            pass
        finally:
            received = self.ws.protocol.close_rcvd
            if received is not None:
                self.close_code, self.close_reason = received.code, received.reason
            self.closed.set()
            self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def mark(self) -> int:
        """The index the next received frame will have (for ``wait_for(since=...)``)."""
        return len(self.frames)

    async def wait_for(
        self,
        match: Callable[[dict[str, Any]], bool],
        what: str,
        *,
        since: int = 0,
        timeout: float = _TIMEOUT,
    ) -> dict[str, Any]:
        """The first frame from index ``since`` on that ``match``es, waiting for it if needed.

        Raises:
            CaptureError: the socket closed or ``timeout`` passed first.
        """
        deadline = time.monotonic() + timeout
        start = since
        while True:
            for frame in self.frames[start:]:
                if match(frame):
                    return frame
            start = len(self.frames)
            if self.closed.is_set():
                raise CaptureError(
                    f"{self.name}: closed ({self.close_code} {self.close_reason!r}) "
                    f"while waiting for {what}"
                )
            changed = self._changed
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise CaptureError(f"{self.name}: no {what} within {timeout:.0f} s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    async def wait_event(
        self, event: str, *, since: int = 0, timeout: float = _TIMEOUT
    ) -> dict[str, Any]:
        """The first ``event`` frame named ``event`` from index ``since`` on."""
        return await self.wait_for(
            lambda f: f.get("type") == "event" and f.get("event") == event,
            f"event {event}",
            since=since,
            timeout=timeout,
        )

    async def send(self, frame: dict[str, Any]) -> None:
        """Send one frame as JSON text (what our codec writes)."""
        self.sent.append(frame)
        await self.ws.send(json.dumps(frame, separators=(",", ":")))

    async def request(
        self, method: str, params: Any = None, *, timeout: float = _TIMEOUT
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Send a ``req`` serialized by :class:`RequestFrame` and wait for its ``res``."""
        frame = RequestFrame(id=str(uuid.uuid4()), method=method, params=params).to_wire()
        await self.send(frame)
        res = await self.wait_for(
            lambda f: f.get("type") == "res" and f.get("id") == frame["id"],
            f"res to {method}",
            timeout=timeout,
        )
        return frame, res

    async def wait_closed(self, timeout: float = _TIMEOUT) -> dict[str, Any]:
        """Wait for the gateway to close the socket; ``{code, reason}``."""
        try:
            await asyncio.wait_for(self.closed.wait(), timeout)
        except TimeoutError:
            raise CaptureError(f"{self.name}: the gateway did not close the socket") from None
        return {"code": self.close_code, "reason": self.close_reason}

    async def aclose(self) -> None:
        """Close from our side and stop the reader."""
        await self.ws.close()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await asyncio.wait_for(self._reader, 5)


# ---------------------------------------------------------------------------- the capture


@dataclass
class Capture:
    """Everything one run recorded, keyed by fixture file name (see :data:`CAPTURE_FILES`)."""

    files: dict[str, Any] = field(default_factory=dict)
    gateway_version: str = ""
    gateway_build: str = ""
    secrets: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)


def operator_plan(ident: DeviceIdentity, token: str) -> ConnectPlan:
    """What our operator sessions send (as the SDK client does), with a shared token."""
    return ConnectPlan(
        client=cli_client(instance_id="golden-capture-operator"),
        role=Role.OPERATOR,
        auth=select_auth(
            Credentials(shared_token=token), role=Role.OPERATOR, requested_scopes=OPERATOR_SCOPES
        ),
        signer=ident,
        caps=OPERATOR_CAPS,
        locale="en-US",
        user_agent=user_agent(),
    )


def node_plan(ident: DeviceIdentity, token: str) -> ConnectPlan:
    """What our node session sends, with a small fixed surface that includes system.notify."""
    return ConnectPlan(
        client=node_client(NODE_NAME, instance_id=NODE_NAME),
        role=Role.NODE,
        auth=select_auth(Credentials(shared_token=token), role=Role.NODE, requested_scopes=()),
        signer=ident,
        caps=NODE_CAPS,
        commands=NODE_COMMANDS,
        permissions=NODE_PERMISSIONS,
        path_env="/usr/local/bin:/usr/bin:/bin",
        min_protocol=MIN_NODE_PROTOCOL_VERSION,
        user_agent=user_agent(),
    )


async def handshake(
    url: str, plan: ConnectPlan, name: str
) -> tuple[RecordingSocket, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Open a socket and send our signed ``connect``: ``(socket, challenge, sent, res)``."""
    sock = await RecordingSocket.open(url, name)
    challenge = await sock.wait_event("connect.challenge")
    params = build_connect_params(plan, ConnectChallenge.model_validate(challenge["payload"]))
    sent, res = await sock.request("connect", params)
    return sock, challenge, sent, res


async def rejected(
    url: str, plan: ConnectPlan, name: str, code: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A handshake the gateway must refuse with ``details.code == code``: ``(sent, {frame,
    close})``."""
    sock, _challenge, sent, res = await handshake(url, plan, name)
    try:
        details = (res.get("error") or {}).get("details") or {}
        if res.get("ok") or details.get("code") != code:
            raise CaptureError(f"{name}: expected {code}, got {res}")
        close = await sock.wait_closed()
    finally:
        await sock.aclose()
    return sent, {"frame": res, "close": close}


def _ok(name: str, res: dict[str, Any]) -> dict[str, Any]:
    if res.get("ok") is not True:
        raise CaptureError(f"{name} was refused: {res}")
    return res


async def capture_all(
    url: str,
    token: str,
    approve_device: Callable[[str], Any],
    *,
    chat: bool = False,
    tick_timeout: float = _TICK_TIMEOUT,
) -> Capture:
    """Run the whole scenario against a manual-pairing gateway (see the module docstring).

    Args:
        url: ``ws://127.0.0.1:PORT`` of a real gateway started with ``manual_pairing=True``
            and ``allow=GATEWAY_ALLOW``.
        token: its shared token.
        approve_device: approves a device pairing request with the real CLI (blocking; it is
            run in a thread), e.g. ``lambda rid: gw.cli("devices", "approve", rid)``.
        chat: also run one chat turn (the gateway must use a fake model: ``fake_llm_port``)
            and record its ack and events (``chat_run.json``).
        tick_timeout: how long to wait for the first ``tick`` after the operator's hello-ok.

    Raises:
        CaptureError: a step did not go as expected (the message says which).
    """
    cap = Capture(secrets={token, WRONG_TOKEN})
    files = cap.files
    sent: dict[str, Any] = {}

    # 1. Operator: NOT_PAIRED, approved with the real CLI, then hello-ok.
    op_ident = DeviceIdentity.generate()
    sock, challenge, connect_sent, res = await handshake(url, operator_plan(op_ident, token), "op")
    files["connect_challenge.json"] = challenge
    try:
        if res.get("ok") or (res.get("error") or {}).get("code") != "NOT_PAIRED":
            raise CaptureError(f"a new operator should get NOT_PAIRED, got {res}")
        files["connect_not_paired_operator.json"] = {
            "frame": res,
            "close": await sock.wait_closed(),
        }
    finally:
        await sock.aclose()
    request_id = res["error"]["details"]["requestId"]
    await asyncio.to_thread(approve_device, request_id)
    op, _challenge, connect_sent, hello = await handshake(url, operator_plan(op_ident, token), "op")
    try:
        _ok("operator connect", hello)
        files["hello_ok_operator_captured.json"] = hello
        hello_at = time.monotonic()
        cap.secrets.add(hello["payload"]["auth"].get("deviceToken") or token)
        cap.gateway_version = hello["payload"]["server"]["version"]
        cap.gateway_build = hello["payload"]["server"].get("buildId", "")
        sent["connect (operator)"] = {
            "sent": connect_sent,
            "reply_in": "hello_ok_operator_captured.json",
        }

        # 2. A wrong shared token.
        _sent, files["connect_token_mismatch.json"] = await rejected(
            url,
            operator_plan(DeviceIdentity.generate(), WRONG_TOKEN),
            "wrong",
            "AUTH_TOKEN_MISMATCH",
        )

        # 3. Node: NOT_PAIRED, approved by our operator over RPC, then hello-ok.
        node_ident = DeviceIdentity.generate()
        mark = op.mark()
        _sent, files["connect_not_paired_node.json"] = await rejected(
            url, node_plan(node_ident, token), "node", "PAIRING_REQUIRED"
        )
        node_request = files["connect_not_paired_node.json"]["frame"]["error"]["details"]
        events: dict[str, Any] = {}
        events["device.pair.requested"] = await op.wait_event("device.pair.requested", since=mark)
        mark = op.mark()
        params = {"requestId": node_request["requestId"]}
        frame, res = await op.request("device.pair.approve", params)
        sent["device.pair.approve"] = {"sent": frame, "reply": _ok("device.pair.approve", res)}
        events["device.pair.resolved"] = await op.wait_event("device.pair.resolved", since=mark)

        mark = op.mark()
        node, _challenge, node_connect, node_hello = await handshake(
            url, node_plan(node_ident, token), "node"
        )
        try:
            _ok("node connect", node_hello)
            files["hello_ok_node.json"] = node_hello
            cap.secrets.add(node_hello["payload"]["auth"].get("deviceToken") or token)
            sent["connect (node)"] = {"sent": node_connect, "reply_in": "hello_ok_node.json"}
            await _node_part(cap, op, node, node_ident.device_id, mark, events, sent)
        finally:
            await node.aclose()

        # 6. One chat turn (while the first tick is still on its way).
        if chat:
            files["chat_run.json"] = await _chat_part(op, sent)

        # 7. tick, presence and health on the operator socket.
        remaining = max(1.0, tick_timeout - (time.monotonic() - hello_at))
        events["tick"] = await op.wait_event("tick", timeout=remaining)
        for name in ("presence", "health"):
            found = [f for f in op.frames if f.get("event") == name]
            if found:
                events[name] = found[0]
            else:
                cap.notes.append(f"no {name} event reached the operator during the capture")
        files["gateway_events.json"] = events
        files["sent_frames.json"] = sent
    finally:
        await op.aclose()
    return cap


async def _node_part(
    cap: Capture,
    op: RecordingSocket,
    node: RecordingSocket,
    node_id: str,
    mark: int,
    events: dict[str, Any],
    sent: dict[str, Any],
) -> None:
    """Steps 3 (surface approval) to 5 of the scenario, with both sockets connected."""
    files = cap.files
    surface = await op.wait_event("node.pair.requested", since=mark)
    events["node.pair.requested"] = surface
    frame, res = await op.request("node.pair.list", {})
    sent["node.pair.list"] = {"sent": frame, "reply": _ok("node.pair.list", res)}
    mark, node_mark = op.mark(), node.mark()
    frame, res = await op.request(
        "node.pair.approve", {"requestId": surface["payload"]["requestId"]}
    )
    sent["node.pair.approve"] = {"sent": frame, "reply": _ok("node.pair.approve", res)}
    events["node.pair.resolved"] = await op.wait_event("node.pair.resolved", since=mark)
    events["node.pair.resolved (to the node)"] = await node.wait_event(
        "node.pair.resolved", since=node_mark
    )
    for frame in node.frames:
        name = frame.get("event")
        if frame.get("type") == "event" and name and name.startswith("voicewake."):
            events.setdefault(f"{name} (to the node)", frame)

    # 4. node.invoke, answered in each accepted form.
    requests: dict[str, Any] = {}
    acks: dict[str, Any] = {}
    responses: dict[str, Any] = {}

    async def invoke(
        key: str, answer: Callable[[str], list[dict[str, Any]]], target: str = node_id
    ) -> dict[str, Any]:
        """One operator node.invoke; the node answers with the result params from ``answer``."""
        params = NodeInvokeParams(
            node_id=target,
            command="system.notify",
            params=NOTIFY,
            timeout_ms=15_000,
            idempotency_key=f"golden-{key}",
        ).to_wire()
        node_mark = node.mark()
        op_call = asyncio.create_task(op.request("node.invoke", params))
        if target != node_id:
            frame, res = await op_call
            sent[f"node.invoke ({key})"] = {"sent": frame, "reply": res}
            return res
        request = await node.wait_event("node.invoke.request", since=node_mark)
        results = answer(request["payload"]["id"])
        for index, params in enumerate(results):
            name = key if index == len(results) - 1 else f"{key} (first)"
            frame, ack = await node.request("node.invoke.result", params)
            requests[name], acks[name] = frame, ack
        frame, res = await op_call
        sent[f"node.invoke ({key})"] = {"sent": frame, "reply": res}
        return request

    def result(invoke_id: str, **kw: Any) -> dict[str, Any]:
        return NodeInvokeResultParams(id=invoke_id, node_id=node_id, **kw).to_wire()

    first = await invoke("payload", lambda i: [result(i, ok=True, payload={"delivered": True})])
    files["node_invoke_request_captured.json"] = first
    responses["payload"] = sent["node.invoke (payload)"]["reply"]
    await invoke(
        "payloadJSON",
        lambda i: [result(i, ok=True, payload_json=json.dumps({"delivered": True, "via": "json"}))],
    )
    responses["payloadJSON"] = sent["node.invoke (payloadJSON)"]["reply"]
    await invoke(
        "error",
        lambda i: [result(i, ok=False, error={"code": "UNAVAILABLE", "message": "no display"})],
    )
    responses["node error"] = sent["node.invoke (error)"]["reply"]
    await invoke(
        "wrong nodeId",
        lambda i: [
            NodeInvokeResultParams(id=i, node_id="0" * 64, ok=True, payload={}).to_wire(),
            result(i, ok=True, payload={"delivered": True}),
        ],
    )
    late_id = first["payload"]["id"]
    frame, ack = await node.request("node.invoke.result", result(late_id, ok=True, payload={}))
    requests["late"], acks["late"] = frame, ack
    responses["unknown node"] = await invoke("unknown node", lambda i: [], target="f" * 64)
    files["node_invoke_results.json"] = {
        "requests": requests,
        "acks": acks,
        "operator_responses": responses,
    }

    # 5. The node's own requests, a request without params, and a cancel frame.
    for key, params in {
        "node.event (payload)": NodeEventParams(
            event="node.presence.alive", payload={"trigger": "manual"}
        ),
        "node.event (payloadJSON)": NodeEventParams(
            event="node.presence.alive", payload_json=json.dumps({"trigger": "manual"})
        ),
    }.items():
        frame, res = await node.request("node.event", params.to_wire())
        sent[key] = {"sent": frame, "reply": _ok(key, res)}
    frame, res = await node.request("node.pending.pull", {})
    sent["node.pending.pull"] = {"sent": frame, "reply": _ok("node.pending.pull", res)}
    frame, res = await op.request("health")
    sent["health (no params)"] = {"sent": frame, "reply": _ok("health", res)}
    cancel = {"type": "cancel", "id": str(uuid.uuid4())}
    await op.send(cancel)
    frame, res = await op.request("status")
    sent["cancel"] = {"sent": cancel, "reply": None, "then": {"sent": frame, "reply": res}}
    _ok("status after a cancel frame", res)


async def _chat_part(op: RecordingSocket, sent: dict[str, Any]) -> dict[str, Any]:
    """One chat turn: the ``chat.send`` ack and every event up to the run's final ``chat``."""
    params = ChatSendParams(
        session_key="main", message="hello golden", idempotency_key=str(uuid.uuid4())
    ).to_wire()
    mark = op.mark()
    frame, ack = await op.request("chat.send", params, timeout=_CHAT_TIMEOUT)
    sent["chat.send"] = {"sent": frame, "reply": _ok("chat.send", ack)}
    run_id = ack["payload"]["runId"]

    def final(f: dict[str, Any]) -> bool:
        payload = f.get("payload") or {}
        return (
            f.get("event") == "chat"
            and payload.get("runId") == run_id
            and (payload.get("state") in ("final", "error", "aborted"))
        )

    end = await op.wait_for(final, "the final chat event", since=mark, timeout=_CHAT_TIMEOUT)
    if end["payload"]["state"] != "final":
        raise CaptureError(f"the chat run did not finish: {end}")
    frames = op.frames[mark : op.frames.index(end) + 1]
    events = [
        f
        for f in frames
        if f.get("type") == "event" and f.get("event") not in ("tick", "presence", "health")
    ]
    return {"send_ack": ack, "events": events}


# ------------------------------------------------------------------------------ redaction


def redact(value: Any, capture: Capture, *, state_dir: Path | None = None) -> Any:
    """A copy of ``value`` with secrets and machine details replaced by placeholders.

    * the values of ``token``, ``deviceToken``, ``bootstrapToken``, ``password``,
      ``signature``, ``nonce`` and ``recoveryScope`` become ``"<redacted:KEY>"``;
    * every known secret (shared token, issued device tokens) inside any string becomes
      ``<redacted:token>``, the canvas capability in ``/__openclaw__/cap/...`` too;
    * ``state_dir`` becomes ``<state-dir>`` and this machine's host name ``<host>``.
    """
    host = socket.gethostname()

    def text(s: str) -> str:
        for secret in capture.secrets:
            if secret:
                s = s.replace(secret, "<redacted:token>")
        s = _CAP_URL.sub(r"\1<redacted:capability>", s)
        if state_dir is not None:
            s = s.replace(str(state_dir), "<state-dir>")
        if host and len(host) > 2:
            s = s.replace(host, "<host>")
        return s

    def walk(v: Any, key: str | None = None) -> Any:
        if isinstance(v, Mapping):
            return {k: walk(item, k) for k, item in v.items()}
        if isinstance(v, list):
            return [walk(item) for item in v]
        if isinstance(v, str):
            if key in _SECRET_KEYS and v:
                return f"<redacted:{key}>"
            return text(v)
        return v

    return walk(value)


# ---------------------------------------------------------------------------------- shapes


def shape(value: Any) -> Any:
    """The structure of a JSON value: key sets and value types, not the values.

    Objects map each key to its shape; arrays become the sorted list of their distinct
    element shapes; scalars become ``"string"``, ``"number"``, ``"boolean"`` or ``"null"``.
    """
    if isinstance(value, Mapping):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        distinct = {json.dumps(shape(item), sort_keys=True) for item in value}
        return [json.loads(item) for item in sorted(distinct)]
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


#: Keys the real gateway's own schema marks optional (``Optional(...)`` in its health and
#: process vitals): it sends them only when it has the figure (``cpuBreakdown`` only after
#: enough samples, so a busy machine's capture may lack it). Their absence is not drift.
OPTIONAL_KEYS = (
    "*/eventLoop/cpuBreakdown",
    "*/eventLoop/cpuBreakdown/*",
    "*/memory/externalBytes",
    "*/memory/arrayBuffersBytes",
)


def _optional(path: str) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in OPTIONAL_KEYS)


def drift(committed: Any, fresh: Any, path: str = "") -> list[str]:
    """Where the structure of ``fresh`` differs from ``committed`` (both plain JSON values).

    Keys added or missing anywhere, and changed value types, are drift. Three things are not,
    because they carry no structure: a ``null`` on either side (optional, nullable fields such
    as ``eventLoop.degradedSinceMs``), an empty array on either side, and a key the reference
    schema marks optional (:data:`OPTIONAL_KEYS`) being present on one side only.
    """
    if committed is None or fresh is None:
        return []
    if isinstance(committed, Mapping) and isinstance(fresh, Mapping):
        out = [
            f"{path}/{key}: missing now"
            for key in committed
            if key not in fresh and not _optional(f"{path}/{key}")
        ]
        out += [
            f"{path}/{key}: new"
            for key in fresh
            if key not in committed and not _optional(f"{path}/{key}")
        ]
        for key in committed:
            if key in fresh:
                out += drift(committed[key], fresh[key], f"{path}/{key}")
        return out
    if isinstance(committed, list) and isinstance(fresh, list):
        if not committed or not fresh:
            return []
        old = {json.dumps(shape(item), sort_keys=True): item for item in committed}
        new = {json.dumps(shape(item), sort_keys=True): item for item in fresh}
        if set(old) == set(new):
            return []
        if len(old) == len(new) == 1:
            return drift(next(iter(old.values())), next(iter(new.values())), f"{path}[]")
        return [f"{path}[]: element shapes {sorted(old)} -> {sorted(new)}"]
    if shape(committed) != shape(fresh):
        return [f"{path}: {shape(committed)} -> {shape(fresh)}"]
    return []


# ---------------------------------------------------------------------------- validation

EVENT_PAYLOADS: dict[str, type[WireModel]] = {
    "connect.challenge": ConnectChallenge,
    "tick": TickEvent,
    "shutdown": ShutdownEvent,
    "chat": ChatEvent,
    "agent": AgentEvent,
    "talk.event": TalkEvent,
    "node.invoke.request": NodeInvokeRequest,
    "node.invoke.cancel": NodeInvokeCancel,
}
"""The payload model of each event that has one (others are checked as frames only)."""

REQUEST_PARAMS: dict[str, type[WireModel]] = {
    "connect": ConnectParams,
    "chat.send": ChatSendParams,
    "node.invoke": NodeInvokeParams,
    "node.invoke.result": NodeInvokeResultParams,
    "node.invoke.progress": NodeInvokeProgressParams,
    "node.event": NodeEventParams,
}
"""The params model of each request whose params we model."""

RESULT_PAYLOADS: dict[str, type[WireModel]] = {
    "connect": HelloOk,
    "chat.send": ChatSendAck,
    "node.invoke": NodeInvokeResponse,
    "node.event": NodeEventResult,
}
"""The model of a successful ``res`` payload, by the method of its request."""


def validate_frame(frame: Any, *, method: str | None = None) -> list[WireModel]:
    """Validate one frame with the models for its kind; returns the models, outermost first.

    ``req`` -> :class:`RequestFrame` and its params model; ``res`` -> :class:`ResponseFrame`
    and, for ``method``, its result model or :class:`ErrorShape`; ``event`` ->
    :class:`EventFrame` and its payload model; ``cancel`` -> :class:`CancelFrame`.

    Raises:
        pydantic.ValidationError: the frame or its payload does not fit.
        ValueError: not a frame.
    """
    kind = frame.get("type") if isinstance(frame, Mapping) else None
    models: list[WireModel] = []
    if kind == "req":
        req = RequestFrame.model_validate(frame)
        models.append(req)
        params_model = REQUEST_PARAMS.get(req.method)
        if params_model is not None:
            models.append(params_model.model_validate(req.params))
    elif kind == "res":
        res = ResponseFrame.model_validate(frame)
        models.append(res)
        if res.error is not None:
            models.append(res.error)
        elif method in RESULT_PAYLOADS:
            models.append(RESULT_PAYLOADS[method].model_validate(res.payload))
    elif kind == "event":
        event = EventFrame.model_validate(frame)
        models.append(event)
        payload_model = EVENT_PAYLOADS.get(event.event)
        if payload_model is not None:
            models.append(payload_model.model_validate(event.payload))
    elif kind == "cancel":
        models.append(CancelFrame.model_validate(frame))
    else:
        raise ValueError(f"not a frame: {str(frame)[:200]}")
    return models


def iter_frames(name: str, data: Any) -> Iterator[tuple[str, dict[str, Any], str | None]]:
    """``(label, frame, method)`` for every frame in the fixture file ``name`` holding ``data``.

    ``method`` is the method of the request a ``res`` answers (so that :func:`validate_frame`
    can pick the result model), else None. Knows every fixture layout in
    ``tests/fixtures/protocol``; a file that is not frames (``node_pair_list_entry.json``,
    ``capture.json``) yields nothing.
    """
    if name in ("node_pair_list_entry.json", "capture.json"):
        return
    if name == "connect_rejections.json":
        for row in data:
            yield f"{name}:{row['case']}", row["frame"], "connect"
    elif name.startswith("connect_") and "frame" in data:
        yield name, data["frame"], "connect"
    elif name in ("chat_events.json", "chat_run.json"):
        yield f"{name}:send_ack", data["send_ack"], "chat.send"
        for index, frame in enumerate(data["events"]):
            yield f"{name}:events[{index}]", frame, None
    elif name == "gateway_events.json":
        for key, frame in data.items():
            yield f"{name}:{key}", frame, None
    elif name == "node_invoke_results.json":
        for key in data["requests"]:
            yield f"{name}:requests:{key}", data["requests"][key], None
            yield f"{name}:acks:{key}", data["acks"][key], "node.invoke.result"
        for key, frame in data["operator_responses"].items():
            yield f"{name}:operator_responses:{key}", frame, "node.invoke"
    elif name == "sent_frames.json":
        for key, entry in data.items():
            for part, exchange in (("", entry), (" then", entry.get("then"))):
                if exchange is None:
                    continue
                sent = exchange["sent"]
                method = sent.get("method") if sent.get("type") == "req" else None
                yield f"{name}:{key}{part}:sent", sent, None
                if isinstance(exchange.get("reply"), dict):
                    yield f"{name}:{key}{part}:reply", exchange["reply"], method
    elif name.startswith("hello_ok_"):
        yield name, data, "connect"
    else:
        yield name, data, None


def _event_kind(frame: Mapping[str, Any]) -> str:
    payload = frame.get("payload") or {}
    data = payload.get("data") if isinstance(payload, Mapping) else None
    parts = [
        str(frame.get("event")),
        str(payload.get("state") or payload.get("stream") or "") if payload else "",
        str(data.get("phase") or "") if isinstance(data, Mapping) else "",
    ]
    return "/".join(parts)


def event_drift(committed: list[Any], fresh: list[Any], *, selection: bool = False) -> list[str]:
    """Drift between two event sequences whose length and interleaving vary (a chat run).

    Events are grouped by kind (event name, chat ``state`` or agent ``stream``, and
    ``data.phase``). Every kind must occur on both sides, and each committed event must have a
    fresh event of its kind with no :func:`drift`. With ``selection`` the committed events are
    an abridged selection (a transcription): fresh kinds and fields it lacks are not drift,
    but anything it has that the fresh events do not is.
    """
    old: dict[str, list[Any]] = {}
    new: dict[str, list[Any]] = {}
    for frame in committed:
        old.setdefault(_event_kind(frame), []).append(frame)
    for frame in fresh:
        new.setdefault(_event_kind(frame), []).append(frame)
    out = [f"{kind}: missing now" for kind in old if kind not in new]
    if not selection:
        out += [f"{kind}: new" for kind in new if kind not in old]
    for kind, frames in old.items():
        for index, frame in enumerate(frames):
            candidates = [
                [line for line in drift(frame, other) if not (selection and line.endswith(": new"))]
                for other in new.get(kind, [])
            ]
            if candidates and all(candidates):
                best = min(candidates, key=len)
                out += [f"{kind}[{index}]{line}" for line in best]
    return out
