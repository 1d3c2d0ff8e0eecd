"""The ``device.*`` family's params models (:mod:`openclaw_desktop.protocol.methods.devices`):
each derived schema is the real gateway's (its TypeBox ``DevicePair*ParamsSchema`` /
``DeviceToken*ParamsSchema`` of the openclaw 2026.9.6 package's ``dist/src-*.mjs``, below as
data, key for key, with the two differences the models' docstrings give), and bad params get
the reference's exact text through a real dispatch (``gateway.rpc.answer_request`` with the
method table and a real app)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema
from openclaw_desktop.protocol.methods import PARAMS
from openclaw_desktop.protocol.methods.devices import PARAMS as DEVICE_PARAMS
from tests.helpers.method_dispatch import answer

_NON_EMPTY = {"type": "string", "minLength": 1}


def _closed(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    return schema


#: The reference's schemas (``closedObject``: ``additionalProperties: false``).
REAL: dict[str, dict[str, Any]] = {
    "device.pair.list": _closed([], {}),
    "device.pair.approve": _closed(["requestId"], {"requestId": _NON_EMPTY}),
    "device.pair.reject": _closed(["requestId"], {"requestId": _NON_EMPTY}),
    "device.pair.remove": _closed(["deviceId"], {"deviceId": _NON_EMPTY}),
    "device.pair.rename": _closed(
        ["deviceId", "label"],
        {"deviceId": _NON_EMPTY, "label": {"type": "string", "minLength": 1, "maxLength": 64}},
    ),
    "device.token.rotate": _closed(
        ["deviceId", "role"],
        {
            "deviceId": _NON_EMPTY,
            "role": _NON_EMPTY,
            "scopes": {"type": "array", "items": _NON_EMPTY},
        },
    ),
    "device.token.revoke": _closed(
        ["deviceId", "role"], {"deviceId": _NON_EMPTY, "role": _NON_EMPTY}
    ),
    "device.pair.setupCode": _closed(
        [],
        {
            "publicUrl": _NON_EMPTY,
            "preferRemoteUrl": {"type": "boolean"},
            "includeQr": {"type": "boolean"},
            "bootstrapProfile": {"type": "string", "enum": ["limited", "node", "voice-node"]},
            "joinUrl": {"type": "boolean", "const": True},
        },
    ),
    "device.pair.setupStatus": _closed(
        ["setupId"], {"setupId": {"type": "string", "minLength": 1, "maxLength": 128}}
    ),
}


def _ours(method: str) -> dict[str, Any]:
    """The reference's schema with this gateway's documented difference:
    ``device.pair.approve`` is open (it takes a refused connect's ``details``)."""
    schema = {**REAL[method], "properties": dict(REAL[method]["properties"])}
    if method == "device.pair.approve":
        del schema["additionalProperties"]
    return schema


def test_the_family_registers_its_models() -> None:
    assert set(DEVICE_PARAMS) == set(REAL)
    assert all(PARAMS[name] is model for name, model in DEVICE_PARAMS.items())


@pytest.mark.parametrize("method", sorted(REAL))
def test_each_schema_is_the_reference_schema(method: str) -> None:
    assert derived_schema(PARAMS[method]) == _ours(method)
    assert TABLE[method].params is PARAMS[method]


#: (method, params, the reference's text after ``invalid <method> params: ``).
REFUSED: list[tuple[str, Any, str]] = [
    ("device.pair.list", {"x": 1}, "at root: unexpected property 'x'"),
    ("device.pair.approve", {}, "must have required property 'requestId'"),
    (
        "device.pair.reject",
        {"requestId": ""},
        "at /requestId: must not have fewer than 1 characters",
    ),
    ("device.pair.remove", {"deviceId": 1}, "at /deviceId: must be string"),
    (
        "device.pair.rename",
        {"deviceId": "d", "label": "x" * 65},
        "at /label: must not have more than 64 characters",
    ),
    ("device.token.rotate", {"deviceId": "d"}, "must have required property 'role'"),
    (
        "device.token.rotate",
        {"deviceId": "d", "role": "r", "scopes": "s"},
        "at /scopes: must be array",
    ),
    (
        "device.token.rotate",
        {"deviceId": "d", "role": "r", "scopes": ["operator.read", 5]},
        "at /scopes/1: must be string",
    ),
    (
        "device.token.rotate",
        {"deviceId": "d", "role": "r", "scopes": [""]},
        "at /scopes/0: must not have fewer than 1 characters",
    ),
    (
        "device.token.revoke",
        {"deviceId": "d", "role": "r", "x": 1},
        "at root: unexpected property 'x'",
    ),
    ("device.pair.setupStatus", {}, "must have required property 'setupId'"),
]


@pytest.mark.parametrize(
    ("method", "params", "text"), REFUSED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(REFUSED)]
)
async def test_bad_params_get_the_reference_text(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"] == f"invalid {method} params: {text}"
