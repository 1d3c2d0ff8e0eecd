"""The ``node.*`` family's params models (:mod:`openclaw_desktop.protocol.methods.nodes`):
each derived schema is the real gateway's (its TypeBox ``Node*ParamsSchema`` of the openclaw
2026.9.6 package's ``dist/nodes-*.mjs``, below as data, key for key), and bad params get the
reference's exact text through a real dispatch (``gateway.rpc.answer_request`` with the
method table and a real app), from an operator or, for the node role's methods, a node."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema
from openclaw_desktop.protocol.methods import PARAMS
from openclaw_desktop.protocol.methods.control_ui import PluginSurfaceRefreshParams
from openclaw_desktop.protocol.methods.nodes import PARAMS as NODE_PARAMS
from openclaw_desktop.protocol.methods.nodes import (
    NodeInvokeProgressParams,
    NodeRunnerInventoryUpdateParams,
    VoiceTranscriptPayload,
    node_event_payload,
)
from tests.helpers.method_dispatch import answer, assert_hand_read

_NON_EMPTY = {"type": "string", "minLength": 1}


def _closed(required: list[str], properties: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False}
    if required:
        schema["required"] = required
    schema["properties"] = properties
    return schema


#: The reference's schemas (``closedObject``: ``additionalProperties: false``).
REAL: dict[str, dict[str, Any]] = {
    "node.list": _closed([], {}),
    "node.describe": _closed(["nodeId"], {"nodeId": _NON_EMPTY}),
    "node.rename": _closed(
        ["nodeId", "displayName"], {"nodeId": _NON_EMPTY, "displayName": _NON_EMPTY}
    ),
    "node.invoke": _closed(
        ["nodeId", "command", "idempotencyKey"],
        {
            "nodeId": _NON_EMPTY,
            "command": _NON_EMPTY,
            "params": {},
            "timeoutMs": {"type": "integer", "minimum": 0},
            "idempotencyKey": _NON_EMPTY,
            "sessionKey": _NON_EMPTY,
            "turnSourceChannel": {"type": "string"},
            "turnSourceTo": {"type": "string"},
            "turnSourceAccountId": {"type": "string"},
            "turnSourceThreadId": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
    ),
    "node.invoke.progress": _closed(
        ["invokeId", "nodeId", "seq", "chunk"],
        {
            "invokeId": _NON_EMPTY,
            "nodeId": _NON_EMPTY,
            "seq": {"type": "integer", "minimum": 0},
            "chunk": {"type": "string", "maxLength": 16384},
        },
    ),
    "node.event": _closed(
        ["event"], {"event": _NON_EMPTY, "payload": {}, "payloadJSON": {"type": "string"}}
    ),
    "node.invoke.result": _closed(
        ["id", "nodeId", "ok"],
        {
            "id": _NON_EMPTY,
            "nodeId": _NON_EMPTY,
            "ok": {"type": "boolean"},
            "payload": {},
            "payloadJSON": {"type": "string"},
            "error": _closed([], {"code": _NON_EMPTY, "message": _NON_EMPTY}),
        },
    ),
    "node.pluginTools.update": _closed(
        ["tools"],
        {
            "tools": {
                "type": "array",
                "items": _closed(
                    ["pluginId", "name", "description"],
                    {
                        "pluginId": _NON_EMPTY,
                        "name": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 64,
                            "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,63}$",
                        },
                        "description": _NON_EMPTY,
                        "parameters": {"type": "object", "patternProperties": {"^.*$": {}}},
                        "command": _NON_EMPTY,
                        "mcp": _closed(
                            ["server", "tool"], {"server": _NON_EMPTY, "tool": _NON_EMPTY}
                        ),
                    },
                ),
            }
        },
    ),
    "node.skills.update": _closed(
        ["skills"],
        {
            "skills": {
                "type": "array",
                "items": _closed(
                    ["name", "description", "content"],
                    {
                        "name": {
                            "type": "string",
                            "minLength": 1,
                            "maxLength": 64,
                            "pattern": "^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$",
                        },
                        "description": {"type": "string", "minLength": 1, "maxLength": 1024},
                        "content": {"type": "string", "minLength": 1, "maxLength": 65536},
                    },
                ),
                "maxItems": 64,
            }
        },
    ),
    "node.pending.pull": _closed([], {}),
    "node.pending.drain": _closed(
        [], {"maxItems": {"type": "integer", "minimum": 1, "maximum": 10}}
    ),
    "node.pending.ack": _closed(
        ["ids"], {"ids": {"type": "array", "items": _NON_EMPTY, "minItems": 1}}
    ),
    "node.pair.list": _closed([], {}),
    "node.pair.approve": _closed(["requestId"], {"requestId": _NON_EMPTY}),
    "node.pair.reject": _closed(["requestId"], {"requestId": _NON_EMPTY}),
    "node.pair.remove": _closed(["nodeId"], {"nodeId": _NON_EMPTY}),
}


#: The node role's methods the reference serves without a params schema, read by hand: the
#: model and the properties it lists (``node.pluginSurface.refresh`` is one handler with
#: ``plugin.surface.refresh`` on the reference, so it shares that model).
HAND_READ: dict[str, tuple[type[Any], list[str]]] = {
    "node.pluginSurface.refresh": (PluginSurfaceRefreshParams, ["surface", "observedUrl"]),
    "node.runnerInventory.update": (
        NodeRunnerInventoryUpdateParams,
        ["protocolFeatures", "workerHost", "workerRuns"],
    ),
}


def test_the_family_registers_its_models() -> None:
    assert set(NODE_PARAMS) == set(REAL) | set(HAND_READ)
    assert all(PARAMS[name] is model for name, model in NODE_PARAMS.items())


@pytest.mark.parametrize("method", sorted(HAND_READ))
def test_a_hand_read_model_is_declared_unchecked_and_lists_what_is_read(method: str) -> None:
    assert_hand_read(method, *HAND_READ[method])


@pytest.mark.parametrize(
    ("params", "properties"),
    [
        (None, {}),
        ("x", {}),
        ({"protocolFeatures": []}, {"protocolFeatures": []}),
        ({"workerHost": None, "extra": 1}, {"workerHost": None, "extra": 1}),
    ],
)
def test_the_runner_declaration_is_handed_on_as_it_came(
    params: Any, properties: dict[str, Any]
) -> None:
    """Explicit nulls and unknown properties stay: the runner rules count the keys."""
    assert NodeRunnerInventoryUpdateParams.lenient(params).properties() == properties


@pytest.mark.parametrize(
    ("params", "text"),
    [
        ({}, "surface required"),
        ({"surface": " \ufeff"}, "surface required"),
        ({"surface": " canvas "}, "canvas plugin surface unavailable"),
    ],
)
async def test_a_node_plugin_surface_refresh_reads_as_the_operator_one(
    app: GatewayApp, params: Any, text: str
) -> None:
    frame = await answer(app, "node.pluginSurface.refresh", params, role="node")
    assert frame["ok"] is False
    assert frame["error"]["message"] == text


@pytest.mark.parametrize("method", sorted(REAL))
def test_each_schema_is_the_reference_schema(method: str) -> None:
    assert derived_schema(PARAMS[method]) == REAL[method]
    assert TABLE[method].params is PARAMS[method]


def test_a_node_builds_its_progress_params_through_the_model() -> None:
    wire = NodeInvokeProgressParams(invoke_id="i", node_id="n", seq=0, chunk="out").to_wire()
    assert wire == {"invokeId": "i", "nodeId": "n", "seq": 0, "chunk": "out"}


#: (role, method, params, the reference's text after ``invalid <method> params: ``).
REFUSED: list[tuple[str, str, Any, str]] = [
    ("operator", "node.list", {"x": 1}, "at root: unexpected property 'x'"),
    ("operator", "node.describe", {}, "must have required property 'nodeId'"),
    (
        "operator",
        "node.describe",
        {"nodeId": ""},
        "at /nodeId: must not have fewer than 1 characters",
    ),
    ("operator", "node.rename", {"nodeId": "n"}, "must have required property 'displayName'"),
    ("operator", "node.pair.approve", {"requestId": 5}, "at /requestId: must be string"),
    ("operator", "node.pair.remove", {"nodeId": "n", "x": 1}, "at root: unexpected property 'x'"),
    ("node", "node.event", {}, "must have required property 'event'"),
    ("node", "node.event", {"event": "e", "payloadJSON": 1}, "at /payloadJSON: must be string"),
    (
        "node",
        "node.invoke.progress",
        {"invokeId": "i", "nodeId": "n", "seq": -1, "chunk": ""},
        "at /seq: must be >= 0",
    ),
    ("node", "node.invoke.result", {"id": "i"}, "must have required property 'nodeId'"),
    (
        "node",
        "node.invoke.result",
        {"id": "i", "nodeId": "n", "ok": False, "error": {"x": 1}},
        "at /error: unexpected property 'x'",
    ),
    ("node", "node.pending.ack", {"ids": []}, "at /ids: must not have fewer than 1 items"),
    ("node", "node.pending.drain", {"maxItems": 11}, "at /maxItems: must be <= 10"),
    ("node", "node.pending.pull", {"x": 1}, "at root: unexpected property 'x'"),
]


@pytest.mark.parametrize(
    ("role", "method", "params", "text"),
    REFUSED,
    ids=[f"{m}-{i}" for i, (_, m, _, _) in enumerate(REFUSED)],
)
async def test_bad_params_get_the_reference_text(
    app: GatewayApp, role: str, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params, role=role)
    assert frame["ok"] is False
    assert frame["error"]["code"] == "INVALID_REQUEST"
    assert frame["error"]["message"] == f"invalid {method} params: {text}"


@pytest.mark.parametrize(
    ("params", "payload"),
    [
        ({"event": "e"}, None),
        ({"event": "e", "payload": {"a": 1}}, {"a": 1}),
        ({"event": "e", "payloadJSON": '{"a": 1}'}, {"a": 1}),
        # As the reference reads it: a string payloadJSON wins over payload.
        ({"event": "e", "payload": {"a": 1}, "payloadJSON": '{"b": 2}'}, {"b": 2}),
        ({"event": "e", "payload": {"a": 1}, "payloadJSON": None}, {"a": 1}),
        ({"event": "e", "payload": {"a": 1}, "payloadJSON": ""}, None),
        ({"event": "e", "payloadJSON": "[1]"}, [1]),
    ],
)
def test_a_node_event_payload_is_read_as_the_reference_reads_it(
    params: dict[str, Any], payload: Any
) -> None:
    assert node_event_payload(params) == payload


def test_a_node_event_payload_json_that_is_not_json_is_an_error() -> None:
    with pytest.raises(json.JSONDecodeError):
        node_event_payload({"event": "e", "payloadJSON": "{", "payload": {"a": 1}})


@pytest.mark.parametrize(
    ("payload", "text"),
    [
        ({}, "voice.transcript: text is required"),
        ({"text": "  "}, "voice.transcript: text is required"),
        ({"text": 5}, "voice.transcript: text is required"),
        ({"text": "x" * 20_001}, "voice.transcript: text is longer than 20000"),
        (
            {"text": "hi", "sessionKey": 5},
            "voice.transcript: sessionKey must be a non-empty string",
        ),
        (
            {"text": "hi", "sessionKey": " "},
            "voice.transcript: sessionKey must be a non-empty string",
        ),
    ],
)
def test_a_bad_voice_transcript_payload_is_refused_in_the_gateway_words(
    payload: dict[str, Any], text: str
) -> None:
    read = VoiceTranscriptPayload.model_validate(payload)
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        (read.transcript(), read.session())


def test_a_voice_transcript_payload_reads_its_wire_names_only() -> None:
    read = VoiceTranscriptPayload.model_validate({"text": " hi ", "sessionKey": "phone", "x": 1})
    assert (read.transcript(), read.session()) == (" hi ", "phone")
    assert (
        VoiceTranscriptPayload.model_validate({"text": "hi", "session_key": "p"}).session() is None
    )
