"""Property-based fuzzing of the bundled gateway over real sockets: arbitrary JSON (and non-JSON)
frames after auth, and mutated ``connect`` params before auth. The server must always answer
or close, never crash or hang, log no internal error, and still admit a normal client."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import itertools
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gateway.methods import HANDLERS
from gateway.server import GatewayServer
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import (
    RawClient,
    bundled_gateway,
    connect_params,
    raw_operator,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

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
methods = st.sampled_from([*sorted(HANDLERS), "connect", "bogus.method", "", "node.invoke "])
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
    """Fail if the gateway or websockets logged an ERROR (a handler crashed)."""
    caplog.set_level(logging.WARNING)
    yield
    errors = [
        r
        for r in caplog.records
        if r.levelno >= logging.ERROR and r.name.startswith(("gateway", "websockets"))
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
