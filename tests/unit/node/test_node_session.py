"""Unit tests for NodeSession over a fake connection (no sockets)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from openclaw_desktop.errors import (
    ConnectionClosed,
    GatewayError,
    PayloadTooLarge,
    gateway_error_from_shape,
)
from openclaw_desktop.node import (
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
    NodeSession,
)
from openclaw_desktop.protocol import MAX_FRAME_DEPTH, encode_frame
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import ConnectionState, ConnectionStatus
from tests.helpers.session_builders import load_fixture


class FakeConnection:
    """Stands in for GatewayConnection: records listeners and requests."""

    def __init__(self, *, fail: bool = False) -> None:
        self.listeners: list[Callable[[EventReceived], None]] = []
        self.status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self.requests: list[tuple[str, Any, float | None]] = []
        self.fail = fail
        #: What other methods answer: a payload, or an exception to raise.
        self.answers: dict[str, Any] = {}
        self.replied = asyncio.Event()
        self.asked = asyncio.Event()

    def on_event(self, listener: Callable[[EventReceived], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener)

    def on_status(self, listener: Callable[[ConnectionStatus], None]) -> Callable[[], None]:
        self.status_listeners.append(listener)
        return lambda: self.status_listeners.remove(listener)

    async def request(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Any:
        self.requests.append((method, params, timeout_s))
        if method != "node.invoke.result":
            self.asked.set()
            answer = self.answers.get(method, {})
            if isinstance(answer, asyncio.Event):
                await answer.wait()
            if isinstance(answer, Exception):
                raise answer
            return answer
        self.replied.set()
        if self.fail:
            raise ConnectionClosed(1006, "gone")
        return {"ok": True}

    def emit(self, event: str, payload: Any) -> None:
        for listener in list(self.listeners):
            listener(EventReceived(event, payload, None, None))

    def set_status(self, state: ConnectionState) -> None:
        for listener in list(self.status_listeners):
            listener(ConnectionStatus(state))

    def results(self) -> list[Any]:
        return [p for m, p, _ in self.requests if m == "node.invoke.result"]

    async def next_reply(self) -> dict[str, Any]:
        await asyncio.wait_for(self.replied.wait(), timeout=5)
        self.replied.clear()
        method, params, timeout = self.requests[-1]
        assert method == "node.invoke.result"
        assert timeout == 15
        result: dict[str, Any] = params
        return result


class Gate:
    """A handler that blocks until released (or cancelled)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, params: Any) -> InvokeResult:
        self.started.set()
        await self.release.wait()
        return InvokeResult.success({"released": True})


async def echo(params: Any) -> InvokeResult:
    """Answers with its params."""
    return InvokeResult.success({"echo": params})


def make(conn: FakeConnection, gate: Gate | None = None) -> NodeSession:
    """A NodeSession with echo and gated commands."""
    registry = CommandRegistry(
        [CommandSpec("system.notify", "system"), CommandSpec("probe.wait", "probe")]
    )
    handlers = {"system.notify": echo, "probe.wait": gate or Gate()}
    return NodeSession(conn, InvokeDispatcher(registry, handlers, dict))  # type: ignore[arg-type]


def invoke(request_id: str, command: str, params: Any = None, **extra: Any) -> dict[str, Any]:
    """A node.invoke.request payload."""
    payload: dict[str, Any] = {"id": request_id, "nodeId": "node-1", "command": command, **extra}
    if params is not None:
        payload["paramsJSON"] = orjson.dumps(params).decode()
    return payload


async def test_real_invoke_request_is_answered_once() -> None:
    """The captured node.invoke.request runs its command and gets exactly one result."""
    conn = FakeConnection()
    session = make(conn)
    frame = load_fixture("node_invoke_request.json")
    conn.emit(frame["event"], frame["payload"])
    reply = await conn.next_reply()
    assert reply == {
        "id": "1fa60ae7-2f45-4ea9-a9b8-668ff2e10662",
        "nodeId": "e594b551…",
        "ok": True,
        "payload": {"echo": {"title": "T", "body": "B"}},
    }
    await session.aclose()
    assert len(conn.results()) == 1
    assert session.handled == 1


async def test_bad_params_json_is_invalid_request() -> None:
    """Unparsable paramsJSON is answered with INVALID_REQUEST, not dropped."""
    conn = FakeConnection()
    session = make(conn)
    conn.emit("node.invoke.request", {**invoke("i1", "system.notify"), "paramsJSON": "{oops"})
    reply = await conn.next_reply()
    assert reply["ok"] is False
    assert reply["error"]["code"] == "INVALID_REQUEST"
    assert reply["error"]["message"].startswith("paramsJSON is not valid JSON")
    await session.aclose()


async def test_unknown_command_is_answered() -> None:
    """An unknown command still gets a result (INVALID_REQUEST: unknown command)."""
    conn = FakeConnection()
    session = make(conn)
    conn.emit("node.invoke.request", invoke("i2", "system.run", {"cmd": "ls"}))
    reply = await conn.next_reply()
    assert reply["error"] == {
        "code": "INVALID_REQUEST",
        "message": "unknown command",
    }
    await session.aclose()


async def test_malformed_request_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """A request without an id cannot be answered; it is logged and dropped."""
    conn = FakeConnection()
    session = make(conn)
    with caplog.at_level(logging.WARNING, logger="openclaw.node"):
        conn.emit("node.invoke.request", {"command": "system.notify"})
        conn.emit("node.invoke.request", None)
    assert conn.requests == []
    assert [r.getMessage() for r in caplog.records] == ["ignored malformed node.invoke.request"] * 2
    await session.aclose()


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        (invoke("m1", "system.notify", timeoutMs="soon"), "timeoutMs: Input should be a valid"),
        (invoke("m2", ""), "command: String should have at least 1 character"),
        (invoke("m3", "system.notify", timeoutMs=-1), "timeoutMs: Input should be greater"),
        ({**invoke("m4", "system.notify"), "paramsJSON": 5}, "paramsJSON: Input should be"),
        ({"id": "m5", "command": "system.notify"}, "nodeId: Field required"),
    ],
)
async def test_request_with_an_id_and_a_bad_field_is_refused(
    payload: dict[str, Any], problem: str
) -> None:
    """A request that has an id but a bad field is answered once with INVALID_REQUEST
    naming the field (the gateway would otherwise wait out its timeout); no handler runs."""
    conn = FakeConnection()
    session = make(conn)
    conn.emit("node.invoke.request", payload)
    reply = await conn.next_reply()
    assert reply["id"] == payload["id"]
    assert reply["nodeId"] == payload.get("nodeId", "")
    assert reply["ok"] is False
    assert reply["error"]["code"] == "INVALID_REQUEST"
    assert reply["error"]["message"].startswith(f"invalid node.invoke.request: {problem}")
    await session.aclose()
    assert len(conn.results()) == 1
    assert session.handled == 0


class EncodingConnection(FakeConnection):
    """A FakeConnection that encodes each request as the real session does first."""

    async def request(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Any:
        encode_frame({"type": "req", "id": "1", "method": method, "params": params})
        return await super().request(method, params, timeout_s=timeout_s)


async def test_result_too_deep_to_send_is_answered_unavailable() -> None:
    """A handler's result nested past the frame limit cannot go out; the gateway gets one
    typed UNAVAILABLE instead of waiting out its timeout."""
    conn = EncodingConnection()
    session = make(conn)
    deep: Any = "x"
    for _ in range(MAX_FRAME_DEPTH):
        deep = [deep]
    conn.emit("node.invoke.request", invoke("d1", "system.notify", deep))
    reply = await conn.next_reply()
    assert reply["ok"] is False
    assert reply["error"] == {
        "code": "UNAVAILABLE",
        "message": f"result of system.notify cannot be sent: nested deeper than "
        f"{MAX_FRAME_DEPTH} levels",
    }
    await session.aclose()
    assert len(conn.results()) == 1


async def test_other_events_are_ignored() -> None:
    """Events other than invoke requests and cancels do nothing."""
    conn = FakeConnection()
    session = make(conn)
    conn.emit("tick", {"ts": 1})
    conn.emit("voicewake.changed", {"triggers": []})
    await session.aclose()
    assert conn.requests == []


async def test_gateway_cancel_answers_cancelled() -> None:
    """node.invoke.cancel stops the running command and answers CANCELLED."""
    conn = FakeConnection()
    gate = Gate()
    session = make(conn, gate)
    conn.emit("node.invoke.request", invoke("i3", "probe.wait"))
    await asyncio.wait_for(gate.started.wait(), timeout=5)
    conn.emit("node.invoke.cancel", {"invokeId": "i3", "nodeId": "node-1"})
    reply = await conn.next_reply()
    assert reply["error"] == {"code": "CANCELLED", "message": "invoke cancelled"}
    await session.aclose()


async def test_duplicate_request_runs_once() -> None:
    """A repeated invoke id while it runs does not start a second task."""
    conn = FakeConnection()
    gate = Gate()
    session = make(conn, gate)
    conn.emit("node.invoke.request", invoke("i4", "probe.wait"))
    conn.emit("node.invoke.request", invoke("i4", "probe.wait"))
    await asyncio.wait_for(gate.started.wait(), timeout=5)
    gate.release.set()
    reply = await conn.next_reply()
    assert reply["payload"] == {"released": True}
    await session.aclose()
    assert len(conn.results()) == 1


async def test_invoke_timeout_answers_timeout() -> None:
    """A command running past timeoutMs is stopped and answered with TIMEOUT."""
    conn = FakeConnection()
    session = make(conn)
    conn.emit("node.invoke.request", invoke("i5", "probe.wait", timeoutMs=1))
    reply = await conn.next_reply()
    assert reply["error"] == {"code": "TIMEOUT", "message": "node invoke timed out"}
    await session.aclose()


async def test_aclose_cancels_running_invokes_and_unsubscribes() -> None:
    """Closing the session answers running invokes with CANCELLED and stops listening."""
    conn = FakeConnection()
    gate = Gate()
    session = make(conn, gate)
    conn.emit("node.invoke.request", invoke("i6", "probe.wait"))
    await asyncio.wait_for(gate.started.wait(), timeout=5)
    await session.aclose()
    assert conn.listeners == []
    assert conn.status_listeners == []
    (params,) = conn.results()
    assert params["error"]["code"] == "CANCELLED"


async def test_delivery_failure_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    """If the result cannot be delivered the failure is logged and the session goes on."""
    conn = FakeConnection(fail=True)
    session = make(conn)
    with caplog.at_level(logging.WARNING, logger="openclaw.node"):
        conn.emit("node.invoke.request", invoke("i7", "system.notify", {"title": "T"}))
        await conn.next_reply()
        await session.aclose()
    assert any("could not deliver" in r.getMessage() for r in caplog.records)


class _CappedConnection(FakeConnection):
    """Refuses requests over ``limit`` bytes, as the session core does for maxPayload."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.refused = 0

    async def request(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Any:
        size = len(orjson.dumps({"type": "req", "id": "x", "method": method, "params": params}))
        if size > self.limit:
            self.refused += 1
            raise PayloadTooLarge(size, self.limit)
        return await super().request(method, params, timeout_s=timeout_s)


async def test_oversized_result_is_answered_with_payload_too_large(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A result over maxPayload is not dropped: the gateway gets PAYLOAD_TOO_LARGE with the
    limit, instead of waiting for an answer until its own timeout."""
    conn = _CappedConnection(limit=4096)
    session = make(conn)
    with caplog.at_level(logging.WARNING, logger="openclaw.node"):
        conn.emit("node.invoke.request", invoke("i9", "system.notify", {"blob": "x" * 10_000}))
        reply = await conn.next_reply()
        await session.aclose()
    assert conn.refused == 1
    assert reply["id"] == "i9" and reply["ok"] is False
    assert reply["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert "4096 bytes" in reply["error"]["message"]
    assert len(conn.results()) == 1
    assert any("too large to send" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------- command surface approval

PAIRING_CHANGED = gateway_error_from_shape(
    {
        "code": "UNAVAILABLE",
        "message": "node pairing changed while invocation was active",
        "retryable": True,
        "details": {"code": "PAIRING_CHANGED"},
    }
)


async def check_surface(conn: FakeConnection, session: NodeSession) -> list[str]:
    """Report CONNECTED and wait for the surface check to finish; returns listener calls."""
    seen: list[str] = []
    session.surface_listeners.append(seen.append)
    conn.set_status(ConnectionState.CONNECTED)
    await asyncio.wait_for(conn.asked.wait(), timeout=5)
    task = session._surface_check
    if task is not None:
        await task
    return seen


async def test_surface_pending_while_gateway_answers_pairing_changed() -> None:
    """PAIRING_CHANGED from the pending queue means the surface awaits operator approval."""
    conn = FakeConnection()
    conn.answers["node.pending.pull"] = PAIRING_CHANGED
    session = make(conn)
    assert session.surface == "unknown"
    assert await check_surface(conn, session) == ["pending"]
    assert session.surface == "pending"
    assert conn.requests == [("node.pending.pull", {}, 15)]
    conn.emit("node.pair.resolved", {"requestId": "r", "nodeId": "n", "decision": "approved"})
    assert session.surface == "approved"
    await session.aclose()


async def test_surface_approved_when_the_queue_answers() -> None:
    """A normal answer from the pending queue means the surface is active."""
    conn = FakeConnection()
    conn.answers["node.pending.pull"] = {"nodeId": "n", "actions": []}
    session = make(conn)
    assert await check_surface(conn, session) == ["approved"]
    await session.aclose()


async def test_surface_unknown_when_the_queue_answers_something_else() -> None:
    """An answer that is not the pending queue's shape proves nothing: the state stays
    unknown rather than claiming an active surface."""
    conn = FakeConnection()
    conn.answers["node.pending.pull"] = {"nodeId": 7}
    session = make(conn)
    assert await check_surface(conn, session) == []
    assert session.surface == "unknown"
    await session.aclose()


async def test_surface_unknown_after_other_errors() -> None:
    """Other failures of the check leave the surface state unknown."""
    conn = FakeConnection()
    conn.answers["node.pending.pull"] = GatewayError("INVALID_REQUEST", "unauthorized role: node")
    session = make(conn)
    assert await check_surface(conn, session) == []
    assert session.surface == "unknown"
    await session.aclose()


async def test_surface_rejection_is_reported() -> None:
    """node.pair.resolved with another decision is passed on as that decision."""
    conn = FakeConnection()
    session = make(conn)
    seen: list[str] = []
    session.surface_listeners.append(seen.append)
    conn.emit("node.pair.resolved", {"decision": "rejected"})
    conn.emit("node.pair.resolved", {"decision": "rejected"})
    conn.emit("node.pair.resolved", "garbage")
    assert seen == ["rejected"]
    await session.aclose()


async def test_surface_check_only_when_connected() -> None:
    """Other connection states do not start a check."""
    conn = FakeConnection()
    session = make(conn)
    conn.set_status(ConnectionState.RECONNECTING)
    conn.set_status(ConnectionState.PAUSED)
    assert conn.requests == []
    await session.aclose()


async def test_surface_unknown_when_the_check_cannot_be_sent() -> None:
    """A connection failure during the check leaves the state unknown."""
    conn = FakeConnection()
    conn.answers["node.pending.pull"] = ConnectionClosed(1006, "gone")
    session = make(conn)
    assert await check_surface(conn, session) == []
    await session.aclose()


async def test_aclose_cancels_a_running_surface_check() -> None:
    """Closing while the check waits for its answer cancels the check."""
    conn = FakeConnection()
    conn.answers["node.pending.pull"] = asyncio.Event()
    session = make(conn)
    conn.set_status(ConnectionState.CONNECTED)
    await asyncio.wait_for(conn.asked.wait(), timeout=5)
    assert session._surface_check is not None
    await session.aclose()
    assert session.surface == "unknown"


async def test_malformed_cancel_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    """A cancel that is not an object is logged and dropped; running invokes continue."""
    conn = FakeConnection()
    gate = Gate()
    session = make(conn, gate)
    conn.emit("node.invoke.request", invoke("i8", "probe.wait"))
    await asyncio.wait_for(gate.started.wait(), timeout=5)
    with caplog.at_level(logging.WARNING, logger="openclaw.node"):
        conn.emit("node.invoke.cancel", "i8")
        conn.emit("node.invoke.cancel", {"invokeId": "unknown"})
    assert [r.getMessage() for r in caplog.records] == ["ignored malformed node.invoke.cancel"]
    gate.release.set()
    reply = await conn.next_reply()
    assert reply["ok"] is True
    await session.aclose()


class _SlowPendingConnection(FakeConnection):
    """Answers node.pending.pull with PAIRING_CHANGED, but only once released."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def request(
        self, method: str, params: Any = None, *, timeout_s: float | None = None
    ) -> Any:
        if method == "node.pending.pull":
            self.asked.set()
            await self.release.wait()
            raise gateway_error_from_shape(
                {"code": "UNAVAILABLE", "message": "m", "details": {"code": "PAIRING_CHANGED"}}
            )
        return await super().request(method, params, timeout_s=timeout_s)


async def test_late_pending_answer_does_not_undo_an_approval() -> None:
    """node.pair.resolved wins over a pending-pull answer that was still in flight."""
    conn = _SlowPendingConnection()
    registry = CommandRegistry([CommandSpec("x.y", "x")])

    async def handler(params: Any) -> InvokeResult:
        return InvokeResult.success()

    session = NodeSession(conn, InvokeDispatcher(registry, {"x.y": handler}, dict))  # type: ignore[arg-type]
    conn.set_status(ConnectionState.CONNECTED)
    await asyncio.wait_for(conn.asked.wait(), 5)
    conn.emit("node.pair.resolved", {"requestId": "r", "nodeId": "n", "decision": "approved"})
    assert session.surface == "approved"
    conn.release.set()
    await asyncio.sleep(0.05)
    assert session.surface == "approved"
    await session.aclose()


async def test_cancel_running_stops_only_matching_invokes() -> None:
    """The capture indicator's cancel stops camera invokes and leaves others running."""
    import asyncio

    from openclaw_desktop.node import (
        CommandRegistry,
        CommandSpec,
        InvokeDispatcher,
        InvokeResult,
        NodeSession,
    )

    started: list[str] = []

    async def slow(params: object) -> InvokeResult:
        started.append("x")
        await asyncio.sleep(30)
        return InvokeResult.success()

    class Conn:
        def on_event(self, listener: object) -> object:
            self.listener = listener
            return lambda: None

        def on_status(self, listener: object) -> object:
            return lambda: None

        replies: list[dict[str, object]] = []

        async def request(
            self, method: str, params: dict[str, object], timeout_s: float = 0
        ) -> None:
            self.replies.append(params)

    registry = CommandRegistry(
        [CommandSpec("camera.clip", "camera"), CommandSpec("probe.slow", "probe")]
    )
    dispatcher = InvokeDispatcher(registry, {"camera.clip": slow, "probe.slow": slow}, dict)
    conn = Conn()
    session = NodeSession(conn, dispatcher)  # type: ignore[arg-type]
    session._start_invoke({"id": "a", "nodeId": "n", "command": "camera.clip", "paramsJSON": "{}"})
    session._start_invoke({"id": "b", "nodeId": "n", "command": "probe.slow", "paramsJSON": "{}"})
    async with asyncio.timeout(5):
        while len(started) < 2:
            await asyncio.sleep(0.01)
    assert session.cancel_running("camera.") == 1
    async with asyncio.timeout(5):
        while not conn.replies:
            await asyncio.sleep(0.01)
    assert conn.replies[0]["id"] == "a"
    assert conn.replies[0]["error"] == {"code": "CANCELLED", "message": "invoke cancelled"}
    await session.aclose()
