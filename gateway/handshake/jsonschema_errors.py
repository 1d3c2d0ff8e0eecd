"""A small JSON-schema error collector that reports what the real gateway reports.

The real gateway validates frames with compiled TypeBox 1.x schemas and turns the validator
errors into one line of text. To answer bad input with the same text, this module walks a
schema the same way (read from the TypeBox engine, then checked against the gateway live):

* keywords are checked in TypeBox's order: ``type``; for objects ``required``,
  ``additionalProperties``, ``patternProperties``, ``properties``; for arrays ``items``,
  ``maxItems``, ``minItems``, ``uniqueItems``; for strings ``maxLength``, ``minLength``,
  ``pattern``; for numbers ``maximum``, ``minimum``; then ``const``, ``enum``, ``anyOf``,
  ``allOf`` and ``not`` (``must not be valid``: a non-object passes ``required``, so it
  fails a ``not`` of required properties). A failing keyword does not stop the others.
* object keys are visited in JavaScript's order (array-index keys first, ascending);
* ``additionalProperties: false`` first records one ``boolean`` error per extra key, then the
  ``additionalProperties`` error listing them; the boolean ones are dropped afterwards;
* at most :data:`MAX_ERRORS` errors are kept (the boolean ones count too), so nine unexpected
  properties surface as eight ``schema is false`` errors;
* string lengths count grapheme clusters the way TypeBox does, on UTF-16 code units;
* numbers follow JavaScript: ``4.0`` is an integer, ``true`` is not a number.

Only the keywords the handshake schemas use are supported. :func:`format_errors` renders the
gateway's text (``at /client/id: must be equal to one of the allowed values; ...``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_ERRORS", "SchemaError", "collect_errors", "format_errors", "js_keys"]

MAX_ERRORS = 8
"""TypeBox's ``maxErrors`` setting: errors past this many are not recorded."""

# JavaScript's RegExp semantics for the patterns the schemas use ('.' stops at line
# terminators, '$' only matches at the very end).
_PATTERNS: Mapping[str, re.Pattern[str]] = {
    "^.*$": re.compile("[^\n\r\u2028\u2029]*"),
    "^[a-f0-9]{64}$": re.compile("[a-f0-9]{64}"),
    # users.prefs.get keys items; talk.session.create language
    "^.{1,256}$": re.compile("[^\n\r\u2028\u2029]{1,256}"),
    "^[a-z]{2}$": re.compile("[a-z]{2}"),
    # node.pluginTools.update / node.skills.update (gateway.nodes.inventory)
    "^[A-Za-z][A-Za-z0-9_-]{0,63}$": re.compile("[A-Za-z][A-Za-z0-9_-]{0,63}"),
    "^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$": re.compile(
        "(?![^\n\r\u2028\u2029]*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"
    ),
}
_MAX_ARRAY_INDEX = 2**32 - 2
_MAX_DOUBLE_INT = 2**1024


@dataclass(frozen=True)
class SchemaError:
    """One validator error: keyword, schema path, instance path and keyword parameters."""

    keyword: str
    schema_path: str
    instance_path: str
    params: Mapping[str, Any] = field(default_factory=dict)


class _Errors:
    """An error list with TypeBox's capacity."""

    def __init__(self) -> None:
        self.items: list[SchemaError] = []

    def full(self) -> bool:
        return len(self.items) >= MAX_ERRORS

    def add(self, keyword: str, schema_path: str, path: str, **params: Any) -> bool:
        if not self.full():
            self.items.append(SchemaError(keyword, schema_path, path, params))
        return False


def js_keys(obj: Mapping[str, Any]) -> list[str]:
    """The keys of a JSON object in JavaScript's own-property order."""
    if not any(k[:1].isdigit() for k in obj):
        return list(obj)  # no array-index keys: insertion order (the usual case)
    index_keys = [k for k in obj if _is_array_index(k)]
    return sorted(index_keys, key=int) + [k for k in obj if not _is_array_index(k)]


def _is_array_index(key: str) -> bool:
    if not key or not key.isascii() or not key.isdigit():
        return False
    return (key == "0" or key[0] != "0") and int(key) <= _MAX_ARRAY_INDEX


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < _MAX_DOUBLE_INT
    return isinstance(value, float) and math.isfinite(value)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and (isinstance(value, int) or float(value).is_integer())


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": _is_number,
}


def _type_ok(name: str, value: Any) -> bool:
    return _TYPE_CHECKS[name](value)


def _js_equal(left: Any, right: Any) -> bool:
    """JavaScript ``===`` for JSON scalars; structural equality for arrays and objects."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    if _is_number(left) or _is_number(right):
        return _is_number(left) and _is_number(right) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(_js_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_js_equal(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right


def _hashable(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if _is_number(value):
        return ("number", float(value))
    if isinstance(value, list):
        return ("array", tuple(_hashable(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple((k, _hashable(value[k])) for k in js_keys(value)))
    return ("other", repr(value))


# ------------------------------------------------------------------ grapheme clusters
def _units(text: str) -> list[int]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | raw[i + 1] << 8 for i in range(0, len(raw), 2)]


def _code_point_at(units: list[int], index: int) -> int:
    unit = units[index]
    if 0xD800 <= unit <= 0xDBFF and index + 1 < len(units) and 0xDC00 <= units[index + 1] <= 0xDFFF:
        return 0x10000 + ((unit - 0xD800) << 10) + (units[index + 1] - 0xDC00)
    return unit


def _is_modifier(point: int) -> bool:
    return (
        0x0300 <= point <= 0x036F
        or 0x1AB0 <= point <= 0x1AFF
        or 0x1DC0 <= point <= 0x1DFF
        or 0xFE20 <= point <= 0xFE2F
        or 0xFE00 <= point <= 0xFE0F
    )


def _skip_modifiers(units: list[int], index: int) -> int:
    while index < len(units):
        point = _code_point_at(units, index)
        if not _is_modifier(point):
            break
        index += 2 if point > 0xFFFF else 1
    return index


def _next_cluster(units: list[int], start: int) -> int:
    first = _code_point_at(units, start)
    end = _skip_modifiers(units, start + (2 if first > 0xFFFF else 1))
    while end < len(units) - 1 and units[end] == 0x200D:
        nxt = _code_point_at(units, end + 1)
        end = _skip_modifiers(units, end + 1 + (2 if nxt > 0xFFFF else 1))
    if 0x1F1E6 <= first <= 0x1F1FF and end < len(units):
        flag = _code_point_at(units, end)
        if 0x1F1E6 <= flag <= 0x1F1FF:
            end += 2 if flag > 0xFFFF else 1
    return end


def grapheme_count(text: str) -> int:
    """The number of grapheme clusters TypeBox counts in ``text``."""
    if text.isascii():
        return len(text)  # no modifiers, joiners or surrogates: one cluster per character
    units = _units(text)
    count = index = 0
    while index < len(units):
        index = _next_cluster(units, index)
        count += 1
    return count


# ------------------------------------------------------------------ the walk
def collect_errors(schema: Any, value: Any) -> list[SchemaError]:
    """All errors (at most :data:`MAX_ERRORS`) of ``value`` against ``schema``, normalized."""
    errors = _Errors()
    _check(errors, "#", "", schema, value)
    return _normalize(errors.items)


def _check(errors: _Errors, sp: str, path: str, schema: Any, value: Any) -> bool:
    if errors.full():
        return False
    if isinstance(schema, bool):
        return schema or errors.add("boolean", sp, path)
    ok = True
    if "type" in schema and not _type_ok(schema["type"], value):
        ok = errors.add("type", sp, path, type=schema["type"])
    if isinstance(value, dict):
        ok &= _check_object(errors, sp, path, schema, value)
    if isinstance(value, list):
        ok &= _check_array(errors, sp, path, schema, value)
    if isinstance(value, str):
        ok &= _check_string(errors, sp, path, schema, value)
    if _is_number(value):
        if "maximum" in schema and not value <= schema["maximum"]:
            ok = errors.add("maximum", sp, path, comparison="<=", limit=schema["maximum"])
        if "minimum" in schema and not value >= schema["minimum"]:
            ok = errors.add("minimum", sp, path, comparison=">=", limit=schema["minimum"])
    if "const" in schema and not _js_equal(value, schema["const"]):
        ok = errors.add("const", sp, path, allowedValue=schema["const"])
    if "enum" in schema and not any(_js_equal(value, option) for option in schema["enum"]):
        ok = errors.add("enum", sp, path, allowedValues=schema["enum"])
    if "anyOf" in schema:
        ok &= _check_any_of(errors, sp, path, schema["anyOf"], value)
    for index, part in enumerate(schema.get("allOf", ())):
        ok &= _check(errors, f"{sp}/allOf/{index}", path, part, value)
    if "not" in schema and _check(_Errors(), f"{sp}/not", path, schema["not"], value):
        ok = errors.add("not", sp, path)
    return ok


def _check_object(errors: _Errors, sp: str, path: str, schema: Any, value: dict[str, Any]) -> bool:
    ok = True
    missing = [key for key in schema.get("required", ()) if key not in value]
    if missing:
        ok = errors.add("required", sp, path, requiredProperties=missing)
    known = schema.get("properties", {})
    keys = js_keys(value)
    if schema.get("additionalProperties") is False:
        extra = []
        for key in keys:
            if key not in known and not _check(
                errors, f"{sp}/additionalProperties", f"{path}/{key}", False, value[key]
            ):
                extra.append(key)
        if extra:
            ok = errors.add("additionalProperties", sp, path, additionalProperties=extra)
    for pattern, sub in schema.get("patternProperties", {}).items():
        regex = _PATTERNS[pattern]
        for key in keys:
            if regex.fullmatch(key):
                ok &= _check(
                    errors, f"{sp}/patternProperties/{pattern}", f"{path}/{key}", sub, value[key]
                )
    for key, sub in known.items():
        if key in value:
            ok &= _check(errors, f"{sp}/properties/{key}", f"{path}/{key}", sub, value[key])
    return ok


def _check_array(errors: _Errors, sp: str, path: str, schema: Any, value: list[Any]) -> bool:
    ok = True
    if "items" in schema:
        for index, item in enumerate(value):
            ok &= _check(errors, f"{sp}/items", f"{path}/{index}", schema["items"], item)
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        ok = errors.add("maxItems", sp, path, limit=schema["maxItems"])
    if "minItems" in schema and len(value) < schema["minItems"]:
        ok = errors.add("minItems", sp, path, limit=schema["minItems"])
    if schema.get("uniqueItems"):
        seen: set[Any] = set()
        duplicates = []
        for index, item in enumerate(value):
            key = _hashable(item)
            if key in seen:
                duplicates.append(index)
            seen.add(key)
        if duplicates:
            ok = errors.add("uniqueItems", sp, path, duplicateItems=duplicates)
    return ok


def _check_string(errors: _Errors, sp: str, path: str, schema: Any, value: str) -> bool:
    ok = True
    # len() counts code points; UTF-16 length and grapheme count are never below the
    # grapheme count, so the cheap comparisons only short-circuit the obvious cases.
    if "maxLength" in schema and grapheme_count(value) > schema["maxLength"]:
        ok = errors.add("maxLength", sp, path, limit=schema["maxLength"])
    if "minLength" in schema and grapheme_count(value) < schema["minLength"]:
        ok = errors.add("minLength", sp, path, limit=schema["minLength"])
    if "pattern" in schema and not _PATTERNS[schema["pattern"]].fullmatch(value):
        ok = errors.add("pattern", sp, path, pattern=schema["pattern"])
    return ok


def _check_any_of(errors: _Errors, sp: str, path: str, options: list[Any], value: Any) -> bool:
    failed: list[_Errors] = []
    for index, option in enumerate(options):
        branch = _Errors()
        if _check(branch, f"{sp}/anyOf/{index}", path, option, value):
            return True
        failed.append(branch)
    for branch in failed:
        for error in branch.items:
            errors.add(error.keyword, error.schema_path, error.instance_path, **error.params)
    return errors.add("anyOf", sp, path)


def _normalize(errors: list[SchemaError]) -> list[SchemaError]:
    """Drop the per-key ``boolean`` errors that an ``additionalProperties`` error sums up."""
    out: list[SchemaError] = []
    booleans = 0
    for error in errors:
        if error.keyword == "boolean":
            out.append(error)
            booleans += 1
            continue
        extra = error.params.get("additionalProperties")
        if error.keyword == "additionalProperties" and extra and len(extra) <= booleans:
            tail = out[-len(extra) :]
            if all(
                child.schema_path == f"{error.schema_path}/additionalProperties"
                and child.instance_path == f"{error.instance_path}/{key}"
                for child, key in zip(tail, extra, strict=True)
            ):
                del out[-len(extra) :]
        out.append(error)
        booleans = 0
    return out


# ------------------------------------------------------------------ text
_MESSAGES: Mapping[str, str] = {
    "anyOf": "must match a schema in anyOf",
    "boolean": "schema is false",
    "const": "must be equal to constant",
    "enum": "must be equal to one of the allowed values",
    "maxItems": "must not have more than {limit} items",
    "maxLength": "must not have more than {limit} characters",
    "maximum": "must be {comparison} {limit}",
    "minItems": "must not have fewer than {limit} items",
    "minLength": "must not have fewer than {limit} characters",
    "minimum": "must be {comparison} {limit}",
    "not": "must not be valid",
    "pattern": 'must match pattern "{pattern}"',
    "uniqueItems": "must not have duplicate items",
    "additionalProperties": "must not have additional properties",
}


def _first_name(names: Any) -> str | None:
    for name in names or ():
        if isinstance(name, str) and name.strip():
            return name
    return None


def _message(error: SchemaError) -> str:
    if error.keyword == "type":
        return f"must be {error.params['type']}"
    if error.keyword == "required":
        return "must have required properties " + ", ".join(error.params["requiredProperties"])
    return _MESSAGES[error.keyword].format(**error.params)


def format_errors(errors: list[SchemaError]) -> str:
    """The gateway's one-line text for validator errors (``formatValidationErrors``)."""
    if not errors:
        return "unknown validation error"
    parts: list[str] = []
    for error in errors:
        where = f"at {error.instance_path}: " if error.instance_path else ""
        if error.keyword == "additionalProperties":
            name = _first_name(error.params.get("additionalProperties"))
            if name is not None:
                at = f"at {error.instance_path}" if error.instance_path else "at root"
                parts.append(f"{at}: unexpected property '{name}'")
                continue
        if error.keyword == "required":
            name = _first_name(error.params.get("requiredProperties"))
            if name is not None:
                parts.append(f"{where}must have required property '{name}'")
                continue
        parts.append(f"{where}{_message(error)}")
    unique = list(dict.fromkeys(part for part in parts if part.strip()))
    return "; ".join(unique) if unique else "unknown validation error"
