"""``connect`` params validation with the real gateway's error text.

:data:`CONNECT_PARAMS_SCHEMA` is the closed ConnectParams schema of the real gateway 2026.9.6,
derived from :class:`openclaw_desktop.protocol.ConnectParams` by
:func:`~openclaw_desktop.protocol.methods.schema.params_schema` (the one derivation the
method params use too); :func:`validate_connect_params` walks it with
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
import types
from enum import Enum
from typing import Any, Union, get_args, get_origin

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from openclaw_desktop.protocol import ConnectParams, RequestFrame
from openclaw_desktop.protocol.base import WireModel
from openclaw_desktop.protocol.methods.schema import params_schema

from .jsonschema_errors import collect_errors, format_errors
from .rejection import ConnectRejection

__all__ = [
    "CONNECT_PARAMS_SCHEMA",
    "REQUEST_FRAME_SCHEMA",
    "connect_params_error",
    "js_number_normalize",
    "validate_connect_params",
]


CONNECT_PARAMS_SCHEMA: dict[str, Any] = params_schema(ConnectParams)
"""The real gateway's closed ``connect`` params schema (2026.9.6), derived from
:class:`~openclaw_desktop.protocol.ConnectParams`."""

REQUEST_FRAME_SCHEMA: dict[str, Any] = params_schema(RequestFrame)
"""The real gateway's closed request frame schema, derived from
:class:`~openclaw_desktop.protocol.RequestFrame`."""


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
        # The model measures strings in code points, not graphemes, checks every
        # permissions key (the schema's "^.*$" skips keys with line breaks) and caps the
        # device key and signature; the dict already passed the gateway's schema, so build
        # the model without those checks.
        built: ConnectParams = _construct(ConnectParams, clean)
        return built


def _construct(model: type[WireModel], data: dict[str, Any]) -> Any:
    """``data`` (which passed the schema derived from ``model``) as ``model`` unchecked:
    nested objects become their models, enum values their members."""
    fields = _field_names(model)
    values = {
        fields[key]: _construct_value(model.model_fields[fields[key]].annotation, value)
        for key, value in data.items()
    }
    return model.model_construct(**values)


def _construct_value(annotation: Any, value: Any) -> Any:
    if get_origin(annotation) in (Union, types.UnionType):
        options: tuple[Any, ...] = get_args(annotation)
    else:
        options = (annotation,)
    for option in options:
        if not isinstance(option, type):
            continue
        if issubclass(option, WireModel) and isinstance(value, dict) and _fits(option, value):
            return _construct(option, value)
        if issubclass(option, Enum):
            return option(value)
    return value


def _fits(model: type[WireModel], data: dict[str, Any]) -> bool:
    """Whether ``data`` has only ``model``'s properties and all its required ones (which of
    ``modelCatalog``'s two shapes it is)."""
    fields = _field_names(model)
    required = {key for key, name in fields.items() if model.model_fields[name].is_required()}
    return data.keys() <= fields.keys() and required <= data.keys()


def _field_names(model: type[WireModel]) -> dict[str, str]:
    """Wire name -> field name."""
    return {info.alias or to_camel(name): name for name, info in model.model_fields.items()}
