"""Property-based fuzzing of our node's side of ``node.invoke``, over real loopback sockets.

Our node (:class:`GatewayConnection` + :class:`NodeSession` + :class:`InvokeDispatcher`)
connects to a scripted gateway, which sends it hypothesis-made ``node.invoke.request`` events:
wrong JSON types for every field, empty commands, bad ``paramsJSON``, odd ``timeoutMs``, and
payloads that are not objects at all. Every request with a usable id (a non-empty string) is
answered with exactly one ``node.invoke.result`` carrying that id and, when it failed, a
typed error; a request without one is not answered; the node logs no ERROR and keeps serving.

Bounded: a fixed number of examples, no shrinking, no example database; derandomized when
``CI`` is set.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from openclaw_desktop.node import CommandRegistry, CommandSpec, InvokeDispatcher, NodeSession
from openclaw_desktop.node import InvokeResult as Result
from openclaw_desktop.protocol import NodeErrorCode
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.scripted_gateway import ScriptedGateway, ScriptedPeer, node_options

pytestmark = pytest.mark.timeout(120)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    database=None,
    derandomize=bool(os.environ.get("CI")),
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=16),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
COMMANDS = ["system.notify", "probe.fail", "probe.echo"]
#: paramsJSON nested past the frame limit: probe.echo's result then cannot be sent.
DEEP_PARAMS_JSON = "[" * 200 + "]" * 200
FIELDS = {
    "nodeId": st.just("node-1") | json_values,
    "command": st.sampled_from([*COMMANDS, "", " ", "unknown.cmd"]) | json_values,
    "paramsJSON": st.sampled_from(['{"title":"t"}', "{oops", "", "null", DEEP_PARAMS_JSON])
    | json_values,
    "params": json_values,
    "timeoutMs": st.sampled_from([0, 1, 5_000, -1, 1.5, "soon"]) | json_values,
    "idempotencyKey": json_values,
}
#: Half the payloads have a usable id (then a bad field or none), the rest any id or none.
payloads = (
    st.fixed_dictionaries({"id": st.text(min_size=1, max_size=8)}, optional=FIELDS)
    | st.fixed_dictionaries({}, optional={"id": json_values, **FIELDS})
    | json_values
)
NODE_ERROR_CODES = {str(code) for code in NodeErrorCode} | {"PROBE_FAILURE"}


async def _notify(params: Any) -> Result:
    return Result.success({"delivered": True})


async def _fail(params: Any) -> Result:
    return Result.error("PROBE_FAILURE", "probe asked to fail")


async def _echo(params: Any) -> Result:
    return Result.success({"echo": params})


def test_fuzz_malformed_invoke_requests_are_answered_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each request with a usable id gets exactly one typed result; others get none."""
    caplog.set_level(logging.WARNING)
    peers: list[ScriptedPeer] = []
    ready = asyncio.Event()

    async def script(peer: ScriptedPeer) -> None:
        await peer.accept(role="node")
        peers.append(peer)
        ready.set()
        while True:
            frame = await peer.recv(timeout=120)
            if frame.get("type") == "req":
                await peer.send({"type": "res", "id": frame["id"], "ok": True, "payload": {}})

    with asyncio.Runner() as runner:
        gw = ScriptedGateway(script)
        gw_cm = gw.running()
        runner.run(gw_cm.__aenter__())
        registry = CommandRegistry(
            [
                CommandSpec("system.notify", "system"),
                CommandSpec("probe.fail", "probe"),
                CommandSpec("probe.echo", "probe"),
            ]
        )
        handlers = {"system.notify": _notify, "probe.fail": _fail, "probe.echo": _echo}
        dispatcher = InvokeDispatcher(registry, handlers, dict)
        connection = GatewayConnection(node_options(gw.url, COMMANDS, ("system", "probe")))

        async def start() -> NodeSession:
            session = NodeSession(connection, dispatcher)
            connection.start()
            await asyncio.wait_for(ready.wait(), 10)
            return session

        session = runner.run(start())
        peer = peers[0]
        counter = itertools.count()
        expected: list[str] = []

        async def until_answered(invoke_id: str) -> None:
            async with asyncio.timeout(10):
                while not any(r.get("id") == invoke_id for r in peer.invoke_results()):
                    await asyncio.sleep(0.005)

        async def one(payload: Any) -> None:
            n = next(counter)
            if isinstance(payload, dict) and isinstance(payload.get("id"), str):
                payload["id"] = f"e{n}-{payload['id']}"  # unique across examples
                expected.append(payload["id"])
            await peer.send({"type": "event", "event": "node.invoke.request", "payload": payload})
            sentinel = f"s{n}"
            await peer.send(
                {
                    "type": "event",
                    "event": "node.invoke.request",
                    "payload": {"id": sentinel, "nodeId": "node-1", "command": "system.notify"},
                }
            )
            await until_answered(sentinel)
            if expected and expected[-1].startswith(f"e{n}-"):
                await until_answered(expected[-1])

        @FUZZ
        @given(payload=payloads)
        def check(payload: Any) -> None:
            runner.run(one(payload))

        try:
            check()
            runner.run(asyncio.sleep(0.2))  # a second answer to any id would be in by now
            answered = Counter(r.get("id") for r in peer.invoke_results())
            sentinels = {i for i in answered if isinstance(i, str) and i.startswith("s")}
            assert {i: n for i, n in answered.items() if n != 1} == {}
            assert set(answered) - sentinels == set(expected)
            for result in peer.invoke_results():
                assert isinstance(result["ok"], bool), result
                if not result["ok"]:
                    assert result["error"]["code"] in NODE_ERROR_CODES, result
                    assert isinstance(result["error"]["message"], str), result
            assert len(expected) > 20, (len(expected), next(counter))
        finally:
            runner.run(session.aclose())
            runner.run(connection.aclose())
            runner.run(gw_cm.__aexit__(None, None, None))
    errors = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.get_records("call")
        if r.levelno >= logging.ERROR and r.name.startswith(("openclaw", "asyncio"))
    ]
    assert errors == []
