"""Closed-object parameter checks with the reference's error wording
(``invalid chat.send params: at /limit: must be >= 1``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gateway.errors import invalid_params

__all__ = ["Field", "check"]


@dataclass(frozen=True)
class Field:
    """One property: its JSON type and bounds. ``kind`` is string, integer, number, boolean,
    object, array, or any."""

    kind: str = "any"
    required: bool = False
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    enum: tuple[str, ...] | None = None
    #: A regular expression a string must match (``re.search``, as JSON Schema).
    pattern: str | None = None
    #: ``enum`` is declared as a union of string constants (``anyOf`` of ``const``), which
    #: the reference words differently from a JSON Schema ``enum``.
    literal_union: bool = False


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "any":
        return True
    if kind == "integer":
        if isinstance(value, float) and value.is_integer():
            return True
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def check(
    method: str, params: Any, fields: dict[str, Field], *, ignored: Iterable[str] = ()
) -> dict[str, Any]:
    """Validate ``params`` against ``fields`` (a closed object); returns them as a dict.

    ``ignored`` names properties the reference accepts that this gateway takes but does not
    act on (they are allowed and dropped, so real clients are not refused).
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise invalid_params(method, "must be object")
    allowed = set(fields) | set(ignored)
    for name, spec in fields.items():
        if spec.required and name not in params:
            raise invalid_params(method, f"must have required property '{name}'")
    for name in params:
        if name not in allowed:
            raise invalid_params(method, f"at root: unexpected property '{name}'")
    out: dict[str, Any] = {}
    for name, spec in fields.items():
        if name not in params:
            continue
        value = params[name]
        where = f"at /{name}:"
        if not _type_ok(spec.kind, value):
            raise invalid_params(method, f"{where} must be {spec.kind}")
        if spec.kind == "integer":
            value = int(value)
        if spec.kind in ("integer", "number"):
            if spec.minimum is not None and value < spec.minimum:
                raise invalid_params(method, f"{where} must be >= {spec.minimum}")
            if spec.maximum is not None and value > spec.maximum:
                raise invalid_params(method, f"{where} must be <= {spec.maximum}")
        if spec.kind == "string":
            if spec.min_length is not None and len(value) < spec.min_length:
                chars = "character" if spec.min_length == 1 else "characters"
                raise invalid_params(
                    method, f"{where} must NOT have fewer than {spec.min_length} {chars}"
                )
            if spec.max_length is not None and len(value) > spec.max_length:
                raise invalid_params(
                    method, f"{where} must NOT have more than {spec.max_length} characters"
                )
            if spec.enum is not None and value not in spec.enum:
                if spec.literal_union:
                    raise invalid_params(
                        method,
                        f"{where} must be equal to constant; {where} must match a schema in anyOf",
                    )
                raise invalid_params(method, f"{where} must be equal to one of the allowed values")
            if spec.pattern is not None and re.search(spec.pattern, value) is None:
                raise invalid_params(method, f'{where} must match pattern "{spec.pattern}"')
        out[name] = value
    return out
