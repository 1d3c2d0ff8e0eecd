"""Mistyped params side by side: the REAL gateway and OUR gateway must answer identically.

Every operator method both gateways serve is sent params that are not an object, and then
each field its handler's module names, alone, holding an array (the wrong type for every
field these methods take). The answers must be equal: ``ok``, ``error.code``,
``error.message`` and ``error.details``. Also the ``node.invoke`` params of issue #14 item 8
(``command: []`` and its neighbours), frames nested past our depth limit, which only
differ where the limit itself is concerned (the real gateway has none), and the params the
reference reads by hand (``diagnostics.stability``, ``usage.cost``, the approval lists:
lenient numbers, dates and calendars, each problem refused in its own sentence).

Where our answers still differ, the method is listed in :data:`NOT_YET_MATCHED` with what
differs, so the gap stays visible; each entry is checked to still differ, so one that
starts matching must leave the list.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

import pytest

from gateway.methods import TABLE
from openclaw_desktop.identity import DeviceIdentity
from openclaw_desktop.protocol.methods import PARAMS, params_schema
from tests.helpers.bundled_gateway import BundledGateway, RawClient
from tests.helpers.real_openclaw import RealGateway

pytestmark = pytest.mark.timeout(300)

#: Name to handler, from the method table.
HANDLERS = TABLE.handlers()
SCOPES = ["operator.read", "operator.write", "operator.admin", "operator.pairing"]
SCOPES += ["operator.talk"]
#: Field names the handlers read; each method gets those its handler's module names.
FIELDS = [
    "arguments",
    "attachments",
    "audio",
    "chunk",
    "command",
    "id",
    "idempotencyKey",
    "includeQr",
    "key",
    "label",
    "limit",
    "message",
    "mode",
    "model",
    "name",
    "nodeId",
    "params",
    "publicUrl",
    "runId",
    "scopes",
    "sessionKey",
    "text",
    "thinking",
    "timeoutMs",
    "requestId",
    "deviceId",
    "role",
    "displayName",
    "enabled",
    "voiceId",
]
#: Methods whose answers to mistyped params still differ from the real gateway's.
NOT_YET_MATCHED = {
    # The real gateway checks the session target before the params.
    "chat.send": "session mutation target is unavailable (SESSION_MUTATION_TARGET_REQUIRED)",
    # An open params model (the authz tests hand it a refused connect's whole details).
    "device.pair.approve": "not a closed object here (extra properties are accepted)",
    # The properties sessions.create accepts without acting on them are not type-checked.
    "sessions.create": "accepted-and-ignored fields are not type-checked",
    # Ours takes an audio object the real gateway does not declare.
    "talk.session.create": "an audio property the real gateway does not have",
}


def _fields_of(method: str) -> list[str]:
    source = inspect.getsource(inspect.getmodule(HANDLERS[method]) or HANDLERS[method])
    # A method whose params are a protocol model names its fields there.
    model = PARAMS.get(method)
    declared = set(params_schema(model)["properties"]) if model is not None else set()
    return [name for name in FIELDS if f'"{name}"' in source or name in declared]


def _cases(method: str) -> list[Any]:
    return [[], *({name: []} for name in _fields_of(method))]


NODE_INVOKE_CASES: list[Any] = [
    {"nodeId": "n", "command": [], "idempotencyKey": "k"},
    {"nodeId": "n", "command": {}, "idempotencyKey": "k"},
    {"nodeId": "n", "command": "", "idempotencyKey": "k"},
    {"nodeId": "n", "command": " ", "idempotencyKey": "k"},
    {"nodeId": 5, "command": "x", "idempotencyKey": "k"},
    {"nodeId": "", "command": "x", "idempotencyKey": "k"},
    {"nodeId": "n", "command": "x", "idempotencyKey": 5},
    {"nodeId": "n", "command": "x", "idempotencyKey": "k", "timeoutMs": "soon"},
    {"nodeId": "n", "command": "x", "idempotencyKey": "k", "bogus": 1},
    {"command": []},
    {},
    None,
]


#: Params read by hand (see :mod:`openclaw_desktop.protocol.methods.lenient`): what the real
#: gateway serves must be served (no schema refuses it) and what it refuses refused alike.
HAND_READ_CASES: list[tuple[str, Any]] = [
    ("diagnostics.stability", params)
    for params in [
        "abc",
        [1],
        {"x": 1},
        {"limit": "5", "type": " x ", "sinceSeq": "0"},
        {"limit": "", "type": "", "sinceSeq": None},
        {"limit": 0},
        {"limit": 1e20},
        {"limit": "9007199254740993"},
        {"limit": " 5"},
        {"limit": 5.5},
        {"limit": "abc", "type": 5},
        {"type": " \ufeff"},
        {"sinceSeq": -1},
        {"sinceSeq": 9007199254740993},
    ]
]
HAND_READ_CASES += [
    ("usage.cost", params)
    for params in [
        "abc",
        {"days": 0},
        {"days": "0x10"},
        {"days": " 7 "},
        {"days": "1e1"},
        {"days": "abc"},
        {"days": 367},
        {"days": 1e12},
        {"range": "7d", "days": 2},
        {"range": "all"},
        {"startDate": " 2026-01-01 ", "endDate": "2026-01-02"},
        {"startDate": "", "endDate": ""},
        {"startDate": "2026-01-01"},
        {"startDate": "0001-01-01", "endDate": "2026-01-02"},
        {"startDate": "1970-01-01", "endDate": "2026-01-02"},
        {"startDate": "2026-01-03", "endDate": "2026-01-02"},
        {"startDate": "2026-02-30", "endDate": "bad"},
        {"agentScope": "all", "agentId": "main"},
        {"agentScope": "all", "agentId": "  "},
        {"mode": "specific", "utcOffset": "bad"},
        {"mode": "specific", "utcOffset": "UTC+5:30", "days": 2},
        {"mode": "specific", "utcOffset": "UTC+15"},
        {"mode": "specific", "timeZone": "Nowhere/City"},
        {"mode": "specific", "timeZone": "Nowhere/City", "utcOffset": "UTC-3", "days": 2},
        {"mode": "specific", "timeZone": "asia/tokyo", "days": 2},
        {"mode": "specific", "timeZone": "+14:00", "days": 2},
        {"mode": "specific", "timeZone": 5, "startDate": "x"},
        {"mode": "gateway", "utcOffset": "bad", "days": 2},
    ]
]
HAND_READ_CASES += [
    (method, params)
    for method in ("exec.approval.list", "plugin.approval.list", "openclaw.approval.list")
    for params in ["abc", [1], 5, {"x": 1}]
]


def _comparable(method: str, payload: Any) -> Any:
    """What of an answer both gateways must share: usage.cost's days and their dates (no
    usage on either), the approval lists whole, of the stability record only that it came
    (the real gateway records its own events)."""
    if method == "usage.cost":
        return {"days": payload["days"], "dates": [row["date"] for row in payload["daily"]]}
    return payload if method.endswith(".approval.list") else "answered"


async def _payloads(url: str, token: str, requests: list[tuple[str, Any]]) -> list[Any]:
    """Each request's error, or what :func:`_comparable` keeps of its answer."""
    client = await RawClient.open(url)
    try:
        hello = await client.connect(
            DeviceIdentity.generate(), scopes=[*SCOPES, "operator.approvals"], auth={"token": token}
        )
        assert hello["ok"] is True, hello
        out: list[Any] = []
        for method, params in requests:
            res = await client.call(method, params, timeout=20)
            out.append(_comparable(method, res["payload"]) if res["ok"] else res["error"])
        return out
    finally:
        await client.close()


async def _answers(url: str, token: str, requests: list[tuple[str, Any]]) -> list[Any]:
    """Each request's answer: ``{"ok": true}`` or the error; the frames go one at a time."""
    client = await RawClient.open(url)
    try:
        hello = await client.connect(
            DeviceIdentity.generate(), scopes=SCOPES, auth={"token": token}
        )
        assert hello["ok"] is True, hello
        out: list[Any] = []
        for method, params in requests:
            res = await client.call(method, params, timeout=20)
            out.append({"ok": True} if res["ok"] else res["error"])
        return out
    finally:
        await client.close()


def _methods(real: RealGateway, ours: BundledGateway) -> list[str]:
    async def advertised(url: str, token: str) -> set[str]:
        client = await RawClient.open(url)
        try:
            hello = await client.connect(
                DeviceIdentity.generate(), scopes=SCOPES, auth={"token": token}
            )
            assert hello["ok"] is True, hello
            return set(hello["payload"]["features"]["methods"])
        finally:
            await client.close()

    both = asyncio.run(advertised(real.url, real.token)) & asyncio.run(
        advertised(ours.url, ours.token)
    )
    return sorted(m for m in both if m in HANDLERS and m not in TABLE.node_methods())


def test_mistyped_params_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """Each operator method both serve, each field mistyped: the same answer from both."""
    methods = _methods(real, ours)
    requests = [(m, case) for m in methods for case in _cases(m)]
    requests += [("node.invoke", case) for case in NODE_INVOKE_CASES]
    theirs = asyncio.run(_answers(real.url, real.token, requests))
    mine = asyncio.run(_answers(ours.url, ours.token, requests))
    differing = {
        (method, json.dumps(params)): (a, b)
        for (method, params), a, b in zip(requests, theirs, mine, strict=True)
        if a != b
    }
    unexpected = [
        f"{method} {params}: real {a} ours {b}"
        for (method, params), (a, b) in differing.items()
        if method not in NOT_YET_MATCHED
    ]
    if unexpected:
        pytest.fail("answers differ:\n" + "\n".join(unexpected))
    still = {method for method, _ in differing}
    assert set(NOT_YET_MATCHED) & set(methods) <= still, "matched now: drop from the list"
    assert len(requests) - len(differing) > 150


def test_hand_read_params_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """The hand-read methods: the same error, or both answer (the same days and dates)."""
    theirs = asyncio.run(_payloads(real.url, real.token, HAND_READ_CASES))
    mine = asyncio.run(_payloads(ours.url, ours.token, HAND_READ_CASES))
    differing = [
        f"{method} {json.dumps(params)}: real {a} ours {b}"
        for (method, params), a, b in zip(HAND_READ_CASES, theirs, mine, strict=True)
        if a != b
    ]
    if differing:
        pytest.fail("answers differ:\n" + "\n".join(differing))
    assert sum(isinstance(a, dict) and "code" in a for a in theirs) > 15


def test_deep_params_side_by_side(real: RealGateway, ours: BundledGateway) -> None:
    """Params nested within our limit are served alike; past it the real gateway (which has
    no limit) serves them and ours answers INVALID_REQUEST, keeping the connection."""

    def nested(levels: int) -> Any:
        value: Any = "x"
        for _ in range(levels):
            value = [value]
        return value

    within = [("status", {"a": nested(100)}), ("node.invoke", {"command": nested(100)})]
    past = [("status", {"a": nested(200)})]
    theirs = asyncio.run(_answers(real.url, real.token, within + past))
    mine = asyncio.run(_answers(ours.url, ours.token, within + past))
    assert mine[: len(within)] == theirs[: len(within)]
    assert theirs[len(within) :] == [{"ok": True}]
    assert mine[len(within) :] == [
        {
            "code": "INVALID_REQUEST",
            "message": "invalid status params: nested deeper than 128 levels",
        }
    ]
