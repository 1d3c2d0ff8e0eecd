"""Property-based fuzzing of the bundled gateway over real sockets: arbitrary JSON (and non-JSON)
frames after auth, and mutated ``connect`` params before auth. The server must always answer
or close, never crash or hang, log no internal error, and still admit a normal client."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import gc
import itertools
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gateway.methods import TABLE
from gateway.server import GatewayServer
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.protocol import MAX_FRAME_DEPTH
from tests.helpers.bundled_gateway import (
    RawClient,
    bundled_gateway,
    connect_params,
    raw_operator,
    wait_for,
)

pytestmark = pytest.mark.timeout(120)

#: Bounded: 200 examples, no shrinking (a hung example would make shrinking take minutes;
#: the falsifying example is still reported as generated).
FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=24)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=16,
)
methods = st.sampled_from(
    [*sorted(TABLE.handlers()), "connect", "bogus.method", "", "node.invoke "]
)
requests = st.fixed_dictionaries(
    {"type": st.just("req"), "id": st.text(min_size=1, max_size=8), "method": methods},
    optional={
        "params": json_values,
        "traceparent": st.text(max_size=140),
        "expectedProfileId": st.text(max_size=140),
    },
)
other_frames = st.fixed_dictionaries(
    {"type": st.sampled_from(["event", "res", "cancel", "bogus", "REQ"])},
    optional={"id": json_values, "event": json_values, "ok": json_values, "payload": json_values},
)
post_auth_frames = (
    requests.map(json.dumps)
    | other_frames.map(json.dumps)
    | json_values.map(json.dumps)
    | st.binary(max_size=64)
    | st.text(max_size=64)
)


def nested(levels: int) -> Any:
    """``"x"`` inside ``levels`` lists."""
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


#: Values nested past the depth limit, up to beyond what orjson encodes (254; the test
#: client, Python's json, stops short of 1,000).
deep_values = st.sampled_from([MAX_FRAME_DEPTH, 300, 600]).map(nested)
#: JSON objects shaped like requests, with the wrong JSON type anywhere in id, method, type.
request_shaped = st.fixed_dictionaries(
    {},
    optional={
        "type": st.just("req") | json_values,
        "id": st.text(min_size=1, max_size=8).map(lambda t: f"f{t}") | json_values | deep_values,
        "method": methods | json_values | deep_values,
        "params": json_values | deep_values,
    },
)

#: Dotted paths into connect params that mutations target.
CONNECT_PATHS = [
    "minProtocol",
    "maxProtocol",
    "client",
    "client.id",
    "client.mode",
    "client.version",
    "client.platform",
    "client.deviceFamily",
    "client.displayName",
    "client.instanceId",
    "role",
    "scopes",
    "caps",
    "commands",
    "permissions",
    "auth",
    "auth.token",
    "auth.deviceToken",
    "auth.bootstrapToken",
    "auth.password",
    "device",
    "device.id",
    "device.publicKey",
    "device.signature",
    "device.signedAt",
    "device.nonce",
    "locale",
    "userAgent",
    "pathEnv",
    "bogus",
]
DELETE = object()
mutations = st.lists(
    st.tuples(st.sampled_from(CONNECT_PATHS), json_values | st.just(DELETE)),
    min_size=1,
    max_size=4,
)


def mutate(params: dict[str, Any], edits: list[tuple[str, Any]]) -> dict[str, Any]:
    """Apply ``path -> value`` edits (DELETE removes the key) to a copy of ``params``."""
    out = copy.deepcopy(params)
    for path, value in edits:
        *parents, leaf = path.split(".")
        node: Any = out
        for key in parents:
            if not isinstance(node, dict) or not isinstance(node.get(key), dict):
                node = None
                break
            node = node[key]
        if not isinstance(node, dict):
            continue
        if value is DELETE:
            node.pop(leaf, None)
        else:
            node[leaf] = value
    return out


@pytest.fixture
def no_internal_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """Fail if the gateway, websockets or asyncio logged an ERROR (a handler crashed, or a
    task's exception was never retrieved)."""
    caplog.set_level(logging.WARNING)
    yield
    gc.collect()  # "Task exception was never retrieved" is logged when the task is freed
    # caplog.records holds only the current phase (teardown): read the test's own too.
    records = [*caplog.get_records("setup"), *caplog.get_records("call"), *caplog.records]
    errors = [
        r
        for r in records
        if r.levelno >= logging.ERROR and r.name.startswith(("gateway", "websockets", "asyncio"))
    ]
    assert not errors, [r.getMessage() for r in errors]


async def _answered_or_closed(client: RawClient, timeout: float = 5) -> dict[str, Any] | None:
    """The connect response, or None if the server closed the socket without one."""
    async with asyncio.timeout(timeout):
        while True:
            res = [f for f in client.frames if f.get("type") == "res"]
            if res:
                return res[0]
            if client.ws.close_code is not None:
                return None
            await asyncio.sleep(0.01)


def test_fuzz_frames_after_auth(tmp_path: Path, no_internal_errors: None) -> None:
    """Arbitrary frames on an authenticated socket never close it; health keeps answering."""
    with asyncio.Runner() as runner:
        server_cm = bundled_gateway(tmp_path)
        gw: GatewayServer = runner.run(server_cm.__aenter__())
        op_cm = raw_operator(gw.url)
        op: RawClient = runner.run(op_cm.__aenter__())
        counter = itertools.count()

        async def one(frame: str | bytes) -> None:
            await op.send(frame)
            res = await op.call("health", timeout=5)
            assert res["ok"] is True, res

        @FUZZ
        @given(frame=post_auth_frames)
        def check(frame: str | bytes) -> None:
            next(counter)
            runner.run(one(frame))

        try:
            check()
            assert op.ws.close_code is None
            runner.run(_fresh_client_connects(gw.url))
        finally:
            runner.run(op_cm.__aexit__(None, None, None))
            runner.run(server_cm.__aexit__(None, None, None))
        assert next(counter) > 50


def _answers(client: RawClient, sentinels: set[str]) -> list[dict[str, Any]]:
    """The ``res`` frames received so far that are not for one of our own requests."""
    return [
        f
        for f in client.frames
        if f.get("type") == "res" and not (isinstance(f.get("id"), str) and f["id"] in sentinels)
    ]


def test_fuzz_every_json_frame_is_answered_once(tmp_path: Path, no_internal_errors: None) -> None:
    """Any JSON frame after auth (request-shaped with wrong types for type, id and method,
    ids and params nested past the limit, or any other JSON value) gets exactly one answer:
    its own (the id echoed, or ``"invalid"`` when there is none to echo), nothing more."""
    with asyncio.Runner() as runner:
        server_cm = bundled_gateway(tmp_path)
        gw: GatewayServer = runner.run(server_cm.__aenter__())
        op_cm = raw_operator(gw.url)
        op: RawClient = runner.run(op_cm.__aenter__())
        sentinels: set[str] = set()
        counter = itertools.count()

        async def one(frame: Any) -> None:
            before = len(_answers(op, sentinels))
            await op.send(json.dumps(frame))
            async with asyncio.timeout(10):
                while len(_answers(op, sentinels)) == before:
                    await asyncio.sleep(0.005)
            request_id = f"r{len(sentinels) + 1}-sentinel"
            sentinels.add(request_id)
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            op._pending[request_id] = future
            await op.send({"type": "req", "id": request_id, "method": "health"})
            assert (await asyncio.wait_for(future, 10))["ok"] is True
            answers = _answers(op, sentinels)[before:]
            assert len(answers) == 1, (frame, answers)
            answer = answers[0]
            if not answer["ok"]:
                assert answer["error"]["code"] in ("INVALID_REQUEST", "UNAVAILABLE", "FORBIDDEN")
            sent_id = frame.get("id") if isinstance(frame, dict) else None
            if isinstance(sent_id, str) and sent_id:
                assert answer["id"] == sent_id

        @FUZZ
        @given(frame=request_shaped | json_values)
        def check(frame: Any) -> None:
            next(counter)
            runner.run(one(frame))

        try:
            check()
            assert op.ws.close_code is None
            runner.run(_fresh_client_connects(gw.url))
        finally:
            runner.run(op_cm.__aexit__(None, None, None))
            runner.run(server_cm.__aexit__(None, None, None))
        assert next(counter) > 50


async def test_deep_frames_are_answered_and_the_connection_stays(
    tmp_path: Path, no_internal_errors: None
) -> None:
    """An id nested 300 deep (past JSON encoding's reach) is answered as ``"invalid"`` with
    the real gateway's text; params past the depth limit are INVALID_REQUEST, also past what
    the parser reads; one level less is served; the connection stays open throughout."""
    async with bundled_gateway(tmp_path) as gw, raw_operator(gw.url) as op:
        await op.send('{"type":"req","id":' + json.dumps(nested(300)) + ',"method":"health"}')

        def invalid() -> list[dict[str, Any]]:
            return [f for f in op.frames if f.get("type") == "res" and f.get("id") == "invalid"]

        await wait_for(invalid, 5)
        (answer,) = invalid()
        assert answer["error"] == {
            "code": "INVALID_REQUEST",
            "message": "invalid request frame: at /id: must be string",
        }
        for levels in (MAX_FRAME_DEPTH, 300, 1_000):  # params this deep: the frame is one more
            # Written by hand: Python's json module does not encode 1,000 levels.
            text = "[" * (levels - 2) + '"x"' + "]" * (levels - 2)
            request_id = f"deep{levels}"
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            op._pending[request_id] = future
            await op.send(
                f'{{"type":"req","id":"{request_id}","method":"status","params":{{"a":[{text}]}}}}'
            )
            error = (await asyncio.wait_for(future, 5))["error"]
            assert error == {
                "code": "INVALID_REQUEST",
                "message": f"invalid status params: nested deeper than {MAX_FRAME_DEPTH} levels",
            }
        assert (await op.call("health", nested(MAX_FRAME_DEPTH - 1)))["ok"] is True
        # Past what the parser reads (1,024 levels): still answered, under the frame's id.
        future = asyncio.get_running_loop().create_future()
        op._pending["past-parser"] = future
        deep = "[" * 5_000 + "]" * 5_000
        await op.send(f'{{"type":"req","id":"past-parser","method":"health","params":{deep}}}')
        assert (await asyncio.wait_for(future, 5))["error"] == {
            "code": "INVALID_REQUEST",
            "message": f"invalid request frame: nested deeper than {MAX_FRAME_DEPTH} levels",
        }
        assert op.ws.close_code is None


def test_fuzz_connect_params_before_auth(tmp_path: Path, no_internal_errors: None) -> None:
    """Mutated connect params always get a response or a close, never a hang or a crash."""
    with asyncio.Runner() as runner:
        server_cm = bundled_gateway(tmp_path, handshake_timeout_ms=5_000)
        gw: GatewayServer = runner.run(server_cm.__aenter__())
        ident = DeviceIdentity.generate()
        outcomes: dict[str, int] = {"ok": 0, "refused": 0, "closed": 0}

        async def one(edits: list[tuple[str, Any]]) -> None:
            client = await RawClient.open(gw.url)
            try:
                params = connect_params(client.nonce, ident, auth={"token": "bundled-test-token"})
                await client.send_request("connect", mutate(params, edits))
                res = await _answered_or_closed(client)
                if res is None:
                    outcomes["closed"] += 1
                elif res["ok"]:
                    outcomes["ok"] += 1
                    assert (await client.ok("health"))["ok"] is True
                else:
                    outcomes["refused"] += 1
                    assert isinstance(res["error"]["code"], str)
                    assert isinstance(res["error"]["message"], str)
                    with contextlib.suppress(TimeoutError):
                        await client.wait_closed(5)
                    assert client.ws.close_code is not None
            finally:
                await client.close()

        @FUZZ
        @given(edits=mutations)
        def check(edits: list[tuple[str, Any]]) -> None:
            runner.run(one(edits))

        try:
            check()
            runner.run(_fresh_client_connects(gw.url))
        finally:
            runner.run(server_cm.__aexit__(None, None, None))
        assert outcomes["refused"] > 0


async def _fresh_client_connects(url: str) -> None:
    async with raw_operator(url) as op:
        assert (await op.ok("health"))["ok"] is True
