"""Property-based fuzzing of every method the bundled gateway advertises, over real sockets.

For each method in ``hello-ok.features.methods``, hypothesis sends params of the wrong JSON
types, nested past the depth limit, huge, unicode, nulls, with the field names the handlers
read. Every request must get exactly one ``res`` with a typed error or a result; the gateway
must log no ERROR (a handler that crashed) and no "Task exception was never retrieved", keep
the fuzzing connection open, and still serve a fresh client.

Bounded: a fixed number of examples per method (``OPENCLAW_FUZZ_EXAMPLES``, default 30), no
shrinking, no example database; with ``CI`` set the examples are derandomized, so a CI run
is repeatable.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from gateway.methods import TABLE
from openclaw_desktop.protocol import MAX_FRAME_DEPTH, ErrorCode
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, raw_node, raw_operator

pytestmark = pytest.mark.timeout(240)

#: Examples per method; ``OPENCLAW_FUZZ_EXAMPLES`` raises it for a longer local run.
EXAMPLES_PER_METHOD = int(os.environ.get("OPENCLAW_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES_PER_METHOD,
    deadline=None,
    database=None,
    derandomize=bool(os.environ.get("CI")),
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

#: Field names the handlers read (gathered from gateway/methods, chat and talk), so that
#: mistyped values reach past the "is it an object" check into each handler's own checks;
#: each method is sent those its handler's module names (:func:`params_for`).
FIELDS = [
    "arguments",
    "attachments",
    "audio",
    "bootstrapProfile",
    "brain",
    "chunk",
    "command",
    "id",
    "idempotencyKey",
    "includeQr",
    "includeSecrets",
    "inputEncoding",
    "inputSampleRateHz",
    "joinUrl",
    "key",
    "label",
    "language",
    "limit",
    "maxChars",
    "message",
    "mode",
    "model",
    "modelId",
    "name",
    "nodeId",
    "offset",
    "outputFormat",
    "params",
    "payload",
    "payloadJSON",
    "phase",
    "prefixPaddingMs",
    "provider",
    "publicUrl",
    "queueMode",
    "rateWpm",
    "runId",
    "scopes",
    "sessionKey",
    "silenceDurationMs",
    "speed",
    "text",
    "thinking",
    "thinkingLevel",
    "timeoutMs",
    "transport",
    "ttlMs",
    "turnId",
    "type",
    "vadThreshold",
    "voiceId",
    "requestId",
    "deviceId",
    "role",
    "displayName",
    "access",
    "event",
    "ok",
    "error",
    "seq",
    "invokeId",
    "content",
]


def nested(levels: int, leaf: Any = "x") -> Any:
    """``leaf`` inside ``levels`` lists."""
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


class HugeText(str):
    """A long string with a short repr (hypothesis prints every falsifying example)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"HugeText({self[:1]!r} * {len(self)})"


class Nested(list[Any]):
    """A value nested ``levels`` deep, with a short repr."""

    def __init__(self, levels: int) -> None:
        super().__init__([nested(levels - 1)])
        self.levels = levels

    def __repr__(self) -> str:
        return f"Nested({self.levels})"


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["", " ", "main", "agent:main:main", "\x00", "\ud7ff\ufffd", "é" * 9])
)
#: Huge strings, and values nested around and past the limit (params sit at level 2).
#: (Bounded so that even a frame of many of them stays under the 25 MiB frame limit: JSON
#: escapes each "é" as six bytes.)
extremes = st.sampled_from(["é" * 1_000, "é" * 20_000, "x" * 300_000]).map(HugeText) | (
    st.sampled_from([MAX_FRAME_DEPTH - 3, MAX_FRAME_DEPTH - 1, MAX_FRAME_DEPTH, 300, 1_000]).map(
        Nested
    )
)
values = st.recursive(
    scalars | extremes,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)
#: A field's value of the wrong type, cheaply: any scalar or a small container.
#: (Deferred, so containers weigh as much as all scalar kinds together.)
mistyped = st.one_of(
    st.sampled_from([[], {}, [None], {"": None}, ["main"], {"key": "main"}]),
    st.deferred(lambda: scalars),
)


def params_for(method: str) -> st.SearchStrategy[Any]:
    """Params for ``method``: objects with any of the fields its handler's module reads
    (each mistyped), objects with a few of them or random keys holding any value (nested,
    huge), and non-objects."""
    fields = fields_of(method) or list(FIELDS)
    return st.one_of(
        st.fixed_dictionaries({}, optional=dict.fromkeys(fields, mistyped)),
        st.dictionaries(st.sampled_from(fields) | st.text(max_size=8), values, max_size=4),
        st.deferred(lambda: st.none() | values),
    )


ERROR_CODES = {str(code) for code in ErrorCode}


@pytest.fixture
def gateway_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Fail if the gateway, websockets or asyncio logged an ERROR (a handler that crashed,
    or a task whose exception nobody retrieved)."""
    caplog.set_level(logging.WARNING)
    yield caplog
    gc.collect()  # "Task exception was never retrieved" is logged when the task is freed
    # caplog.records holds only the current phase (teardown): read the test's own too.
    records = [*caplog.get_records("setup"), *caplog.get_records("call"), *caplog.records]
    errors = [
        f"{r.name}: {r.getMessage()}"
        for r in records
        if r.levelno >= logging.ERROR and r.name.startswith(("gateway", "websockets", "asyncio"))
    ]
    assert not errors, errors


def _answer_counts(client: RawClient) -> Counter[Any]:
    """How many ``res`` frames arrived per id (``agent``'s interim ``accepted`` aside: it
    answers a run it started twice, as the reference; the final answer is the one)."""
    return Counter(
        json.dumps(f.get("id"))
        for f in client.frames
        if f.get("type") == "res" and not _interim(f.get("payload"))
    )


def _interim(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("status") == "accepted"


def _bounded(method: str, params: Any) -> Any:
    """``agent.wait`` with valid params long-polls by design (30 s by default, as the
    reference): its wait is made 0, its other fields stay as fuzzed."""
    if method != "agent.wait" or not isinstance(params, dict):
        return params
    wait = params.get("timeoutMs", 1)
    if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > 0:
        return {**params, "timeoutMs": 0}
    return params


async def _one_typed_answer(client: RawClient, method: str, params: Any) -> None:
    """Send one request and check its answer is a result or a typed error."""
    res = await client.call(method, _bounded(method, params), timeout=20)
    assert isinstance(res["ok"], bool), res
    if not res["ok"]:
        error = res["error"]
        assert error["code"] in ERROR_CODES, res
        assert isinstance(error["message"], str) and error["message"], res


def _fuzz_methods(runner: asyncio.Runner, client: RawClient, methods: list[str]) -> Counter[str]:
    """Run the hypothesis examples for each method; returns how many each got."""
    seen: Counter[str] = Counter()

    def fuzz(method: str) -> None:
        strategy = node_results if method == "node.invoke.result" else params_for(method)

        @FUZZ
        @given(params=strategy)
        def check(params: Any) -> None:
            seen[method] += 1
            runner.run(_one_typed_answer(client, method, params))

        check()

    for method in methods:
        fuzz(method)
    return seen


def _assert_one_answer_each(client: RawClient, requests: int) -> None:
    """Every request id was answered exactly once (and nothing else was answered)."""
    counts = _answer_counts(client)
    assert [i for i, n in counts.items() if n != 1] == []
    assert sum(counts.values()) == requests


node_results = st.fixed_dictionaries(
    {"id": st.text(min_size=1, max_size=8), "nodeId": st.text(max_size=8)},
    optional={
        "ok": values,
        "payload": values,
        "payloadJSON": values
        | st.sampled_from([300, 1_100]).map(lambda n: HugeText(json.dumps(nested(n)))),
        "error": values,
    },
)


def test_fuzz_every_advertised_method(tmp_path: Path, gateway_logs: Any) -> None:
    """Hypothesis-made params for each advertised method: exactly one typed answer per
    request id, the connection stays open, and a fresh client still gets ``health``."""
    with asyncio.Runner() as runner:
        server_cm = bundled_gateway(tmp_path)
        gw = runner.run(server_cm.__aenter__())
        op_cm = raw_operator(gw.url)
        op: RawClient = runner.run(op_cm.__aenter__())
        try:
            assert op.hello is not None
            methods: list[str] = list(op.hello["features"]["methods"])
            seen = _fuzz_methods(runner, op, methods)
            runner.run(_fresh_client_gets_health(gw.url))
            runner.run(asyncio.sleep(0.2))  # a second answer to any id would be in by now
            assert op.ws.close_code is None
            _assert_one_answer_each(op, 1 + sum(seen.values()))  # 1: the connect
        finally:
            runner.run(op_cm.__aexit__(None, None, None))
            runner.run(server_cm.__aexit__(None, None, None))
        assert {"node.invoke", "chat.send", "sessions.patch", "talk.speak"} <= set(methods)
        assert all(seen[m] >= EXAMPLES_PER_METHOD // 2 for m in methods), seen


#: The wrong types every field of every method is also tried with, one field at a time.
WRONG_TYPES: list[Any] = [[], {}, None, -1, 1.5, True, "", "é" * 200, Nested(MAX_FRAME_DEPTH)]


def fields_of(method: str) -> list[str]:
    """The known fields that ``method``'s handler module names."""
    handler = TABLE.handlers().get(method)
    module = inspect.getmodule(handler) if handler is not None else None
    source = inspect.getsource(module) if module is not None else ""
    return [name for name in FIELDS if f'"{name}"' in source]


def test_each_field_of_each_method_mistyped(tmp_path: Path, gateway_logs: Any) -> None:
    """A systematic sweep beside the random one: each field a method's handler reads, alone
    and with a type it does not take, gets exactly one typed answer."""
    with asyncio.Runner() as runner:
        server_cm = bundled_gateway(tmp_path)
        gw = runner.run(server_cm.__aenter__())
        op_cm = raw_operator(gw.url)
        op: RawClient = runner.run(op_cm.__aenter__())
        sent = 0

        async def sweep(method: str) -> None:
            nonlocal sent
            cases = [{name: value} for name in fields_of(method) for value in WRONG_TYPES]
            sent += len(cases)
            await asyncio.gather(*(_one_typed_answer(op, method, case) for case in cases))

        try:
            assert op.hello is not None
            for method in op.hello["features"]["methods"]:
                runner.run(sweep(method))
            runner.run(_fresh_client_gets_health(gw.url))
            runner.run(asyncio.sleep(0.2))
            assert op.ws.close_code is None
            _assert_one_answer_each(op, 1 + sent)
        finally:
            runner.run(op_cm.__aexit__(None, None, None))
            runner.run(server_cm.__aexit__(None, None, None))
        assert sent > 20 * len(WRONG_TYPES)


NODE_METHODS = [
    "node.invoke.result",
    "node.invoke.progress",
    "node.event",
    "node.pending.pull",
    "node.pending.ack",
    "node.pending.drain",
    "node.skills.update",
    "node.pluginTools.update",
    "node.pluginSurface.refresh",
    "node.runnerInventory.update",  # served, not advertised (as the reference)
]


def test_fuzz_node_methods(tmp_path: Path, gateway_logs: Any) -> None:
    """The node-only methods (results, progress, events, the pending queue) with fuzzed
    params from a connected node: one typed answer each, and the node stays connected."""
    with asyncio.Runner() as runner:
        server_cm = bundled_gateway(tmp_path)
        gw = runner.run(server_cm.__aenter__())
        node_cm = raw_node(gw.url, ["system.notify"])
        node: RawClient = runner.run(node_cm.__aenter__())
        try:
            assert node.hello is not None
            advertised = set(NODE_METHODS) - {"node.runnerInventory.update"}
            assert advertised <= set(node.hello["features"]["methods"])
            seen = _fuzz_methods(runner, node, NODE_METHODS)
            runner.run(_fresh_client_gets_health(gw.url))
            runner.run(asyncio.sleep(0.2))
            assert node.ws.close_code is None
            _assert_one_answer_each(node, 1 + sum(seen.values()))
        finally:
            runner.run(node_cm.__aexit__(None, None, None))
            runner.run(server_cm.__aexit__(None, None, None))
        assert all(seen[m] >= EXAMPLES_PER_METHOD // 2 for m in NODE_METHODS), seen


async def _fresh_client_gets_health(url: str) -> None:
    async with raw_operator(url) as fresh:
        assert (await fresh.ok("health"))["ok"] is True
