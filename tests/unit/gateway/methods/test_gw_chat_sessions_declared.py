"""The ``chat.*`` and ``sessions.*`` methods declare their params models on the method
table: the dispatcher refuses bad params in the real gateway's words before the handler
runs (the texts are the real gateway's answers, recorded side by side in
``tests/fixtures/gateway/real-params-rejections.json``), and passes good ones on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods import TABLE
from openclaw_desktop.protocol.methods import PARAMS
from tests.helpers.method_dispatch import gateway_app
from tests.unit.protocol.methods.test_protocol_agent_params import answer

_KEY = "agent:main:nosuch-probe"

#: (method, params, the real gateway's answer).
REFUSED: list[tuple[str, Any, str]] = [
    (
        "chat.history",
        {"sessionKey": ""},
        "invalid chat.history params: at /sessionKey: must not have fewer than 1 characters",
    ),
    ("chat.history", {}, "invalid chat.history params: must have required property 'sessionKey'"),
    (
        "chat.abort",
        {"sessionKey": _KEY, "runId": ""},
        "invalid chat.abort params: at /runId: must not have fewer than 1 characters",
    ),
    (
        "chat.message.get",
        {"sessionKey": _KEY},
        "invalid chat.message.get params: must have required property 'messageId'",
    ),
    (
        "chat.send",
        {"sessionKey": _KEY, "message": "x", "idempotencyKey": "i", "queueMode": []},
        "invalid chat.send params: at /queueMode: must be string; "
        "at /queueMode: must be equal to one of the allowed values",
    ),
    (
        "chat.send",
        {"sessionKey": _KEY, "message": "x", "idempotencyKey": "i", "timeoutMs": -1},
        "invalid chat.send params: at /timeoutMs: must be >= 0",
    ),
    (
        "sessions.describe",
        {"key": ""},
        "invalid sessions.describe params: at /key: must not have fewer than 1 characters",
    ),
    (
        "commands.list",
        {"scope": "x"},
        "invalid commands.list params: at /scope: must be equal to constant; "
        "at /scope: must match a schema in anyOf",
    ),
    (
        "sessions.patch",
        {"key": _KEY, "label": 5, "model": 5},
        "invalid sessions.patch params: at /label: must be string; at /label: must be null; "
        "at /label: must match a schema in anyOf; at /model: must be string; "
        "at /model: must be null; at /model: must match a schema in anyOf",
    ),
    (
        "sessions.reset",
        {"key": _KEY, "reason": 5},
        "invalid sessions.reset params: at /reason: must be string; "
        "at /reason: must be equal to constant; at /reason: must match a schema in anyOf",
    ),
    (
        "sessions.delete",
        {"key": ""},
        "invalid sessions.delete params: at /key: must not have fewer than 1 characters",
    ),
]

#: Declared on the table (the rest check their params in the handler: see its docstring).
DECLARED = {
    "chat.send",
    "chat.abort",
    "chat.history",
    "chat.message.get",
    "chat.inject",
    "sessions.describe",
    "commands.list",
    "sessions.create",
    "sessions.patch",
    "sessions.reset",
    "sessions.delete",
    "agents.list",
    "agent",
    "agent.wait",
}


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[GatewayApp]:
    with gateway_app(tmp_path) as gateway:
        yield gateway


def test_the_methods_declare_their_models() -> None:
    for name in DECLARED:
        assert TABLE[name].params is PARAMS[name], name


@pytest.mark.parametrize(
    ("method", "params", "text"), REFUSED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(REFUSED)]
)
async def test_bad_params_get_the_real_gateway_text(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"] == {"code": "INVALID_REQUEST", "message": text}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("chat.history", {"sessionKey": _KEY, "limit": 5.0, "cursor": []}),
        ("sessions.patch", {"key": _KEY, "label": None, "icon": None}),
    ],
)
async def test_good_params_reach_the_handler(
    app: GatewayApp, method: str, params: dict[str, Any]
) -> None:
    """Past the declared check the handler answers (the chat engine is not up here)."""
    frame = await answer(app, method, params)
    assert frame["error"]["code"] == "UNAVAILABLE"
    assert frame["error"]["message"] == "chat is starting"
