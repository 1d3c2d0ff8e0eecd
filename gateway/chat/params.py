"""Closed-object parameter checks with the reference's error wording
(``invalid chat.send params: at /limit: must be >= 1``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gateway.errors import invalid_params
from gateway.handshake.jsonschema_errors import js_keys

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
    #: ``null`` is accepted too (declared as a union of the kind and null).
    nullable: bool = False


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

    As the reference, every problem is reported, in its order and joined with ``"; "``: the
    first missing required property, the first unexpected one, then each bad field in
    declaration order (``must have required property 'sessionKey'; at /runId: must be
    string``).
    """
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise invalid_params(method, "must be object")
    allowed = set(fields) | set(ignored)
    problems: list[str] = []
    missing = [name for name, spec in fields.items() if spec.required and name not in params]
    if missing:
        problems.append(f"must have required property '{missing[0]}'")
    unexpected = [name for name in js_keys(params) if name not in allowed]
    if unexpected:
        problems.append(f"at root: unexpected property '{unexpected[0]}'")
    out: dict[str, Any] = {}
    for name, spec in fields.items():
        if name not in params:
            continue
        value, problem = _field_problem(spec, params[name], f"at /{name}:")
        if problem is None:
            out[name] = value
        else:
            problems.append(problem)
    if problems:
        raise invalid_params(method, "; ".join(dict.fromkeys(problems)))
    return out


def _field_problem(spec: Field, value: Any, where: str) -> tuple[Any, str | None]:
    """The value (an integral float as int) and what is wrong with it, if anything, as
    ``<where> must ...``."""
    if value is None and spec.nullable:
        return value, None
    if not _type_ok(spec.kind, value):
        # A union reports each branch it tried, then that none matched.
        if spec.nullable:
            branch = f"{where} must be null"
        elif spec.literal_union:
            branch = f"{where} must be equal to constant"
        else:
            return value, f"{where} must be {spec.kind}"
        return value, f"{where} must be {spec.kind}; {branch}; {where} must match a schema in anyOf"
    if spec.kind == "integer":
        value = int(value)
    if spec.kind in ("integer", "number"):
        if spec.minimum is not None and value < spec.minimum:
            return value, f"{where} must be >= {spec.minimum}"
        if spec.maximum is not None and value > spec.maximum:
            return value, f"{where} must be <= {spec.maximum}"
    if spec.kind == "string":
        if spec.min_length is not None and len(value) < spec.min_length:
            chars = "character" if spec.min_length == 1 else "characters"
            return value, f"{where} must NOT have fewer than {spec.min_length} {chars}"
        if spec.max_length is not None and len(value) > spec.max_length:
            return value, f"{where} must NOT have more than {spec.max_length} characters"
        if spec.enum is not None and value not in spec.enum:
            if spec.literal_union:
                return (
                    value,
                    f"{where} must be equal to constant; {where} must match a schema in anyOf",
                )
            return value, f"{where} must be equal to one of the allowed values"
        if spec.pattern is not None and re.search(spec.pattern, value) is None:
            return value, f'{where} must match pattern "{spec.pattern}"'
    return value, None
