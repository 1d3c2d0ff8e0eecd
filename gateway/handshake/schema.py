"""``connect`` params validation with the real gateway's error text.

:data:`CONNECT_PARAMS_SCHEMA` is the closed ConnectParams schema of the real gateway 2026.9.6
written out as JSON schema; :func:`validate_connect_params` walks it with
:mod:`.jsonschema_errors` and rejects with ``invalid connect params: <text>`` where ``<text>``
joins every error found (up to eight, deduplicated) with ``"; "``, e.g.
``at root: unexpected property 'bogus'; at /client/id: must be equal to one of the allowed
values``. Observed live: the gateway reports all errors, not only the first.

Facts that differ from a naive reading:

* ``client.id`` and ``client.mode`` are case-sensitive (``"CLI"`` is rejected, not lowered).
* ``null`` is never accepted for an optional field (``at /role: must be string``).
* Numbers follow JavaScript: ``4.0`` is the integer 4; strings are measured in grapheme clusters.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import ValidationError

from openclaw_desktop.protocol import (
    ClientId,
    ClientInfo,
    ClientMode,
    ConnectAuth,
    ConnectParams,
    DeviceProof,
)

from .jsonschema_errors import collect_errors, format_errors
from .rejection import ConnectRejection

__all__ = [
    "CONNECT_PARAMS_SCHEMA",
    "REQUEST_FRAME_SCHEMA",
    "connect_params_error",
    "js_number_normalize",
    "validate_connect_params",
]


def _text(min_length: int | None = 1, max_length: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "string"}
    if min_length is not None:
        out["minLength"] = min_length
    if max_length is not None:
        out["maxLength"] = max_length
    return out


def _closed(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if required:
        out["required"] = list(required)
    out["properties"] = properties
    out["additionalProperties"] = False
    return out


_TEXT = _text()
_ANY_TEXT = _text(None)

CONNECT_PARAMS_SCHEMA: dict[str, Any] = _closed(
    {
        "minProtocol": {"type": "integer", "minimum": 1},
        "maxProtocol": {"type": "integer", "minimum": 1},
        "client": _closed(
            {
                "id": {"enum": [c.value for c in ClientId]},
                "displayName": _TEXT,
                "version": _TEXT,
                "buildId": _text(1, 96),
                "platform": _TEXT,
                "deviceFamily": _TEXT,
                "modelIdentifier": _TEXT,
                "timeZone": _text(1, 64),
                "mode": {"enum": [m.value for m in ClientMode]},
                "instanceId": _TEXT,
            },
            "id",
            "version",
            "platform",
            "mode",
        ),
        "caps": {"type": "array", "items": _TEXT},
        "commands": {"type": "array", "items": _TEXT},
        "computerUse": {},
        "workerRuns": _closed(
            {
                "bundleHash": {**_text(64, 64), "pattern": "^[a-f0-9]{64}$"},
                "openclawVersion": _text(1, 128),
                "protocolFeatures": {
                    "type": "array",
                    "items": _text(1, 128),
                    "maxItems": 64,
                    "uniqueItems": True,
                },
                "bundlePrewarm": {"type": "integer", "minimum": 1, "maximum": 2**53 - 1},
            },
            "bundleHash",
            "openclawVersion",
            "protocolFeatures",
        ),
        "permissions": {"type": "object", "patternProperties": {"^.*$": {"type": "boolean"}}},
        "pathEnv": _ANY_TEXT,
        "role": _TEXT,
        "scopes": {"type": "array", "items": _TEXT},
        "modelCatalog": {
            "anyOf": [
                _closed({"agentId": _TEXT, "sessionKey": _TEXT}),
                _closed({"agentId": _TEXT, "shortId": _TEXT, "slugHint": _TEXT}, "shortId"),
            ]
        },
        "device": _closed(
            {
                "id": _TEXT,
                "publicKey": _TEXT,
                "signature": _TEXT,
                "signedAt": {"type": "integer", "minimum": 0},
                "nonce": _TEXT,
            },
            "id",
            "publicKey",
            "signature",
            "signedAt",
            "nonce",
        ),
        "auth": _closed(
            {
                name: _ANY_TEXT
                for name in (
                    "token",
                    "bootstrapToken",
                    "deviceToken",
                    "password",
                    "approvalRuntimeToken",
                    "agentRuntimeIdentityToken",
                )
            }
        ),
        "locale": _ANY_TEXT,
        "userAgent": _ANY_TEXT,
    },
    "minProtocol",
    "maxProtocol",
    "client",
)
"""The real gateway's closed ``connect`` params schema (2026.9.6)."""

REQUEST_FRAME_SCHEMA: dict[str, Any] = _closed(
    {
        "type": {"type": "string", "const": "req"},
        "id": _TEXT,
        "method": _TEXT,
        "params": {},
        "traceparent": _text(None, 128),
        "expectedProfileId": _text(1, 128),
    },
    "type",
    "id",
    "method",
)
"""The real gateway's closed request frame schema."""


def connect_params_error(params: Any) -> str | None:
    """The gateway's error text for invalid ``connect`` params, or None when they are valid."""
    errors = collect_errors(CONNECT_PARAMS_SCHEMA, params)
    return format_errors(errors) if errors else None


def js_number_normalize(value: Any) -> Any:
    """Turn every integral float into an int, as JSON numbers are in JavaScript (``4.0`` = 4)."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [js_number_normalize(v) for v in value]
    if isinstance(value, dict):
        return {k: js_number_normalize(v) for k, v in value.items()}
    return value


def validate_connect_params(params: Any) -> ConnectParams:
    """Validate raw ``connect`` params like the real gateway and build the typed model.

    Args:
        params: ``frame["params"]`` as decoded from JSON (None when absent).

    Returns:
        The params as :class:`ConnectParams` (integral floats become ints).

    Raises:
        ConnectRejection: ``INVALID_REQUEST`` ``invalid connect params: ...``, close 1008.
    """
    detail = connect_params_error(params)
    if detail is not None:
        raise ConnectRejection.invalid_connect_params(detail)
    clean = js_number_normalize(params)
    try:
        return ConnectParams.model_validate(clean)
    except ValidationError:
        # Our shared model is stricter than the gateway in a few places (length caps on
        # device.publicKey/signature, code points instead of graphemes, dict[str, bool]
        # for permissions keys the gateway never checks). The raw dict already passed the
        # gateway's schema, so build the model without those extra checks.
        return _construct(clean)


def _construct(params: dict[str, Any]) -> ConnectParams:
    client = params["client"]
    fields: dict[str, Any] = {
        "min_protocol": params["minProtocol"],
        "max_protocol": params["maxProtocol"],
        "client": ClientInfo.model_construct(
            id=ClientId(client["id"]),
            mode=ClientMode(client["mode"]),
            **_snake(client, exclude=("id", "mode")),
        ),
        **_snake(params, exclude=("minProtocol", "maxProtocol", "client", "device", "auth")),
    }
    if "device" in params:
        fields["device"] = DeviceProof.model_construct(**_snake(params["device"]))
    if "auth" in params:
        fields["auth"] = ConnectAuth.model_construct(**_snake(params["auth"]))
    return ConnectParams.model_construct(**fields)


def _snake(obj: dict[str, Any], exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key in exclude:
            continue
        name = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        out[name] = value
    return out
