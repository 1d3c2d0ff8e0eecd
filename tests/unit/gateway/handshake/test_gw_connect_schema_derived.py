"""The ``connect`` params and request frame schemas are derived from the protocol's
models (:class:`~openclaw_desktop.protocol.ConnectParams`,
:class:`~openclaw_desktop.protocol.RequestFrame`) by the one derivation the method params
use; each must equal, key for key and in the same property order, the schema the gateway
wrote out by hand before (frozen below), and the derivation's extensions they need (enums,
records, one literal, a required default) say what they mean without changing any other
model's schema.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field

from gateway.handshake import (
    CONNECT_PARAMS_SCHEMA,
    REQUEST_FRAME_SCHEMA,
    connect_params_error,
    validate_connect_params,
)
from openclaw_desktop.protocol import (
    ClientId,
    ClientMode,
    ConnectParams,
    ModelCatalogBySession,
    ModelCatalogByShortId,
    RequestFrame,
    WorkerRuns,
)
from openclaw_desktop.protocol.base import ClosedModel
from openclaw_desktop.protocol.methods.schema import RECORD, REQUIRED, params_schema

#: Today's hand-written ConnectParams schema (2026.9.6), frozen before it was derived.
FROZEN_CONNECT_PARAMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["minProtocol", "maxProtocol", "client"],
    "properties": {
        "minProtocol": {"type": "integer", "minimum": 1},
        "maxProtocol": {"type": "integer", "minimum": 1},
        "client": {
            "type": "object",
            "required": ["id", "version", "platform", "mode"],
            "properties": {
                "id": {
                    "enum": [
                        "webchat-ui",
                        "openclaw-control-ui",
                        "openclaw-browser-copilot",
                        "openclaw-tui",
                        "webchat",
                        "cli",
                        "gateway-client",
                        "openclaw-macos",
                        "openclaw-linux",
                        "openclaw-ios",
                        "openclaw-watchos",
                        "openclaw-android",
                        "node-host",
                        "openclaw-worker",
                        "test",
                        "fingerprint",
                        "openclaw-probe",
                    ]
                },
                "displayName": {"type": "string", "minLength": 1},
                "version": {"type": "string", "minLength": 1},
                "buildId": {"type": "string", "minLength": 1, "maxLength": 96},
                "platform": {"type": "string", "minLength": 1},
                "deviceFamily": {"type": "string", "minLength": 1},
                "modelIdentifier": {"type": "string", "minLength": 1},
                "timeZone": {"type": "string", "minLength": 1, "maxLength": 64},
                "mode": {
                    "enum": ["webchat", "cli", "ui", "backend", "node", "worker", "probe", "test"]
                },
                "instanceId": {"type": "string", "minLength": 1},
            },
            "additionalProperties": False,
        },
        "caps": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "commands": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "computerUse": {},
        "workerRuns": {
            "type": "object",
            "required": ["bundleHash", "openclawVersion", "protocolFeatures"],
            "properties": {
                "bundleHash": {
                    "type": "string",
                    "minLength": 64,
                    "maxLength": 64,
                    "pattern": "^[a-f0-9]{64}$",
                },
                "openclawVersion": {"type": "string", "minLength": 1, "maxLength": 128},
                "protocolFeatures": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 128},
                    "maxItems": 64,
                    "uniqueItems": True,
                },
                "bundlePrewarm": {"type": "integer", "minimum": 1, "maximum": 9007199254740991},
            },
            "additionalProperties": False,
        },
        "permissions": {"type": "object", "patternProperties": {"^.*$": {"type": "boolean"}}},
        "pathEnv": {"type": "string"},
        "role": {"type": "string", "minLength": 1},
        "scopes": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "modelCatalog": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "agentId": {"type": "string", "minLength": 1},
                        "sessionKey": {"type": "string", "minLength": 1},
                    },
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "required": ["shortId"],
                    "properties": {
                        "agentId": {"type": "string", "minLength": 1},
                        "shortId": {"type": "string", "minLength": 1},
                        "slugHint": {"type": "string", "minLength": 1},
                    },
                    "additionalProperties": False,
                },
            ]
        },
        "device": {
            "type": "object",
            "required": ["id", "publicKey", "signature", "signedAt", "nonce"],
            "properties": {
                "id": {"type": "string", "minLength": 1},
                "publicKey": {"type": "string", "minLength": 1},
                "signature": {"type": "string", "minLength": 1},
                "signedAt": {"type": "integer", "minimum": 0},
                "nonce": {"type": "string", "minLength": 1},
            },
            "additionalProperties": False,
        },
        "auth": {
            "type": "object",
            "properties": {
                "token": {"type": "string"},
                "bootstrapToken": {"type": "string"},
                "deviceToken": {"type": "string"},
                "password": {"type": "string"},
                "approvalRuntimeToken": {"type": "string"},
                "agentRuntimeIdentityToken": {"type": "string"},
            },
            "additionalProperties": False,
        },
        "locale": {"type": "string"},
        "userAgent": {"type": "string"},
    },
    "additionalProperties": False,
}
#: Today's hand-written request frame schema, frozen the same way.
FROZEN_REQUEST_FRAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "id", "method"],
    "properties": {
        "type": {"type": "string", "const": "req"},
        "id": {"type": "string", "minLength": 1},
        "method": {"type": "string", "minLength": 1},
        "params": {},
        "traceparent": {"type": "string", "maxLength": 128},
        "expectedProfileId": {"type": "string", "minLength": 1, "maxLength": 128},
    },
    "additionalProperties": False,
}


def _property_orders(schema: Any, path: str = "") -> dict[str, list[str]]:
    """Every object schema's property names in order, by where it sits (the order errors
    are reported in)."""
    out: dict[str, list[str]] = {}
    if isinstance(schema, dict):
        if "properties" in schema:
            out[path] = list(schema["properties"])
        for key, sub in schema.items():
            if isinstance(sub, dict):
                out.update(_property_orders(sub, f"{path}/{key}"))
            elif isinstance(sub, list):
                for index, item in enumerate(sub):
                    out.update(_property_orders(item, f"{path}/{key}/{index}"))
    return out


@pytest.mark.parametrize(
    ("derived", "frozen"),
    [
        (CONNECT_PARAMS_SCHEMA, FROZEN_CONNECT_PARAMS_SCHEMA),
        (REQUEST_FRAME_SCHEMA, FROZEN_REQUEST_FRAME_SCHEMA),
    ],
    ids=["connect", "request-frame"],
)
def test_derived_schema_is_the_hand_written_one(derived: Any, frozen: Any) -> None:
    """Key for key, with the properties in the same order."""
    assert derived == frozen
    assert _property_orders(derived) == _property_orders(frozen)


def test_the_gateway_uses_the_schemas_derived_from_the_models() -> None:
    """Nothing else is written out: the gateway's schemas are the models' derivations."""
    assert params_schema(ConnectParams) == CONNECT_PARAMS_SCHEMA
    assert params_schema(RequestFrame) == REQUEST_FRAME_SCHEMA


def test_an_enum_is_an_enum_of_its_values_without_a_type() -> None:
    """TypeBox's Type.Enum: ``{enum: [...]}``, worded "must be equal to one of the allowed
    values"."""

    class Colour(StrEnum):
        RED = "red"
        BLUE = "blue"

    class Paint(ClosedModel):
        colour: Colour
        others: list[Colour] | None = None

    assert params_schema(Paint)["properties"] == {
        "colour": {"enum": ["red", "blue"]},
        "others": {"type": "array", "items": {"enum": ["red", "blue"]}},
    }


def test_a_record_checks_every_value_and_a_plain_dict_none() -> None:
    """``RECORD`` on ``dict[str, X]``: patternProperties ``^.*$``; without it any object."""

    class Flags(ClosedModel):
        flags: Annotated[dict[str, bool] | None, RECORD] = None
        named: Annotated[dict[str, Annotated[str, Field(min_length=1)]], RECORD]
        loose: dict[str, bool] | None = None

    properties = params_schema(Flags)["properties"]
    assert properties["flags"] == {
        "type": "object",
        "patternProperties": {"^.*$": {"type": "boolean"}},
    }
    assert properties["named"] == {
        "type": "object",
        "patternProperties": {"^.*$": {"type": "string", "minLength": 1}},
    }
    assert properties["loose"] == {"type": "object"}


def test_a_record_needs_string_keys() -> None:
    """A record keyed by anything but strings has no TypeBox form."""

    class Bad(ClosedModel):
        counts: Annotated[dict[int, bool], RECORD]

    with pytest.raises(TypeError, match="keys are strings"):
        params_schema(Bad)


def test_one_literal_is_a_const_and_required_marks_a_default_required() -> None:
    """``Literal["req"]`` is ``{type: string, const}`` (not an ``anyOf`` of one), and
    ``REQUIRED`` keeps a defaulted field in ``required``, in declaration order."""

    class Frame(ClosedModel):
        kind: Annotated[Literal["req"], REQUIRED] = "req"
        either: Literal["a", "b"] | None = None
        name: str

    schema = params_schema(Frame)
    assert schema["required"] == ["kind", "name"]
    assert schema["properties"]["kind"] == {"type": "string", "const": "req"}
    assert schema["properties"]["either"] == {
        "anyOf": [{"type": "string", "const": "a"}, {"type": "string", "const": "b"}]
    }
    assert Frame(name="n").kind == "req"


def _params(**extra: Any) -> dict[str, Any]:
    client = {"id": "cli", "version": "1", "platform": "linux", "mode": "cli"}
    return {"minProtocol": 4, "maxProtocol": 4, "client": client, **extra}


def test_model_catalog_is_one_of_two_closed_shapes() -> None:
    """``modelCatalog`` is the session shape or the short-id one, each read as its model."""
    by_session = validate_connect_params(_params(modelCatalog={"agentId": "a"}))
    assert by_session.model_catalog == ModelCatalogBySession(agent_id="a")
    by_short = validate_connect_params(_params(modelCatalog={"shortId": "s", "slugHint": "h"}))
    assert by_short.model_catalog == ModelCatalogByShortId(short_id="s", slug_hint="h")
    assert connect_params_error(_params(modelCatalog={"agentId": "a", "shortId": ""})) == (
        "at /modelCatalog: unexpected property 'shortId'; "
        "at /modelCatalog/shortId: must not have fewer than 1 characters; "
        "at /modelCatalog: must match a schema in anyOf"
    )


def test_worker_runs_is_read_as_its_model() -> None:
    """A valid ``workerRuns`` becomes :class:`WorkerRuns`; a bad one gets the schema's text."""
    runs = {"bundleHash": "a" * 64, "openclawVersion": "1", "protocolFeatures": ["f"]}
    params = validate_connect_params(_params(workerRuns={**runs, "bundlePrewarm": 2.0}))
    assert params.worker_runs == WorkerRuns(
        bundle_hash="a" * 64, openclaw_version="1", protocol_features=["f"], bundle_prewarm=2
    )
    assert connect_params_error(_params(workerRuns={**runs, "protocolFeatures": ["f", "f"]})) == (
        "at /workerRuns/protocolFeatures: must not have duplicate items"
    )


def test_params_only_the_schema_accepts_are_built_unchecked_as_the_models() -> None:
    """Graphemes, not code points, and permissions keys the schema skips: the params pass
    as at the real gateway and still come out as the typed models (enums as members)."""
    build_id = "e\u0301" * 96  # 96 graphemes, 192 code points
    raw = _params(
        modelCatalog={"shortId": "s"},
        permissions={"a\nb": "not checked", "ok": True},
        workerRuns={"bundleHash": "b" * 64, "openclawVersion": "1", "protocolFeatures": []},
    )
    raw["client"]["buildId"] = build_id
    params = validate_connect_params(raw)

    assert params.client.id is ClientId.CLI
    assert params.client.mode is ClientMode.CLI
    assert params.client.build_id == build_id
    assert isinstance(params.model_catalog, ModelCatalogByShortId)
    assert params.model_catalog.short_id == "s"
    assert isinstance(params.worker_runs, WorkerRuns)
    assert params.worker_runs.protocol_features == []
    assert params.permissions == {"a\nb": "not checked", "ok": True}
