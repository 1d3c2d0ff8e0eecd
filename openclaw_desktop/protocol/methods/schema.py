"""Method params declared once, as models, and the reference-shaped JSON schema derived
from them (what the real gateway's TypeBox schemas compile to, key for key).

A params model is a :class:`~openclaw_desktop.protocol.base.ClosedModel` (an
:class:`~openclaw_desktop.protocol.base.OpenModel` where the reference admits any other
property) whose fields say
what the reference's schema says:

* ``str`` / ``int`` / ``float`` / ``bool`` / ``list[...]`` / ``dict[...]``: the JSON type;
  ``Field(min_length=..., max_length=...)`` and ``Field(ge=..., le=...)`` its bounds,
  ``Field(pattern=...)`` a string's ``pattern``;
* a nested model: an object property with that model's schema; ``list[X]``: an ``array``
  whose ``items`` are ``X``'s schema (left out for ``list[Any]``), and its
  ``min_length``/``max_length`` are ``minItems``/``maxItems``;
* ``Literal["a", "b"]``: a union of string literals (``anyOf`` of string ``const``), or,
  with :data:`AS_ENUM`, a ``string`` with an ``enum`` (the reference has both, worded
  differently); ``Literal["a"]``: one string ``const``; ``Literal[True]``: a ``boolean``
  that must be ``true`` (``const``);
* an :class:`~enum.Enum`: an ``enum`` of its members' values (no ``type``: TypeBox's
  ``Type.Enum``);
* ``str | float``: any of those types (``anyOf`` of their schemas); ``A | B`` of models:
  ``anyOf`` of the two objects;
* :data:`UNIQUE` on a list: ``uniqueItems``;
* :data:`RECORD` on a ``dict[str, X]``: an ``object`` whose every key holds an ``X``
  (``patternProperties`` ``^.*$``: TypeBox's ``Type.Record``); without it, any object;
* :data:`NULLABLE`: ``null`` is accepted too (``anyOf`` of the type and ``null``);
* :data:`UNCHECKED` on an ``Any`` field: a property the schema admits with any value (one
  the bundled gateway takes without acting on it);
* a field without a default is ``required`` (in declaration order), and so is one marked
  :data:`REQUIRED` (a frame's ``type``, which the model fills in when it builds one);
  ``X | None = None`` is an optional property of type ``X``;
* the model's ``NOT_TOGETHER: ClassVar[tuple[NotTogether, ...]]``: combinations of properties the
  params may not hold at once, the reference's ``not`` (one rule) or ``allOf`` of ``not``
  (several), refused as ``must not be valid``.

:func:`params_schema` is the one function turning such a model into the schema dict.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from enum import Enum
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from openclaw_desktop.protocol.base import WireModel

__all__ = [
    "AS_ENUM",
    "NULLABLE",
    "RECORD",
    "REQUIRED",
    "UNCHECKED",
    "UNIQUE",
    "NotTogether",
    "params_schema",
    "unchecked_fields",
]


@dataclass(frozen=True)
class _Marker:
    name: str


#: A ``Literal`` declared as ``{"type": "string", "enum": [...]}``.
AS_ENUM = _Marker("as-enum")
#: ``null`` is accepted besides the declared type.
NULLABLE = _Marker("nullable")
#: A list whose items must differ (``uniqueItems``).
UNIQUE = _Marker("unique-items")
#: Admitted with any value (schema ``{}``).
UNCHECKED = _Marker("unchecked")
#: A ``dict[str, X]`` whose values must all be ``X`` (``patternProperties``).
RECORD = _Marker("record")
#: Required on the wire although the model has a default.
REQUIRED = _Marker("required")


@dataclass(frozen=True)
class NotTogether:
    """A combination the params may not hold: every field of ``fields`` (model field names)
    present, each equal to its value in ``equal`` where that is given. The reference says it
    as ``not: {properties: {name: {const: value}}, required: [names]}``."""

    fields: tuple[str, ...]
    equal: tuple[Any, ...] | None = None


#: TypeBox's key pattern of a ``Type.Record`` with string keys.
_ANY_KEY = "^.*$"

_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_CONTAINERS: dict[Any, str] = {list: "array", dict: "object"}


def _wire_name(name: str, info: FieldInfo) -> str:
    return info.alias or to_camel(name)


def _unwrap(annotation: Any) -> tuple[Any, list[Any]]:
    """``X | None`` -> ``X`` (an optional property), and the metadata of an ``Annotated``
    alias inside it (``NonEmpty | None``)."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(rest) == 1:
            annotation = rest[0]
    if get_origin(annotation) is Annotated:
        inner, *extra = get_args(annotation)
        metadata: list[Any] = []
        for item in extra:
            metadata.extend(item.metadata if isinstance(item, FieldInfo) else [item])
        return inner, metadata
    return annotation, []


def _type_schema(annotation: Any, as_enum: bool, record: bool = False) -> dict[str, Any]:
    if annotation is Any:
        return {}
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return {"enum": [member.value for member in annotation]}
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):  # of scalars: str | float (optional: | None)
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return {"anyOf": [_type_schema(arg, as_enum) for arg in members]}
    if origin is Literal:
        values = list(get_args(annotation))
        if all(isinstance(value, bool) for value in values):
            flags = [{"type": "boolean", "const": value} for value in values]
            return flags[0] if len(flags) == 1 else {"anyOf": flags}
        if as_enum:
            return {"type": "string", "enum": values}
        if len(values) == 1:
            return {"type": "string", "const": values[0]}
        return {"anyOf": [{"type": "string", "const": value} for value in values]}
    if isinstance(annotation, type) and issubclass(annotation, WireModel):
        return params_schema(annotation)
    if origin is list:
        (element,) = get_args(annotation)
        items = _element_schema(element, as_enum)
        return {"type": "array", "items": items} if items else {"type": "array"}
    if record and origin is dict:
        key, value = get_args(annotation)
        if key is not str:
            raise TypeError(f"a record's keys are strings, not {key!r}")
        return {"type": "object", "patternProperties": {_ANY_KEY: _element_schema(value, False)}}
    if origin in _CONTAINERS or annotation in _CONTAINERS:
        return {"type": _CONTAINERS[origin or annotation]}
    raise TypeError(f"no schema for the annotation {annotation!r}")


def _element_schema(element: Any, as_enum: bool) -> dict[str, Any]:
    """The ``items`` schema of a ``list[element]`` (``{}`` for ``Any``)."""
    annotation, metadata = _unwrap(element)
    schema = _type_schema(annotation, as_enum or AS_ENUM in metadata)
    schema.update(_bounds(metadata, schema.get("type") == "array"))
    return schema


def _bounds(metadata: list[Any], array: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in metadata:
        if isinstance(item, MinLen):
            out["minItems" if array else "minLength"] = item.min_length
        elif isinstance(item, MaxLen):
            out["maxItems" if array else "maxLength"] = item.max_length
        elif getattr(item, "pattern", None) is not None:
            out["pattern"] = item.pattern
        elif item == UNIQUE:
            out["uniqueItems"] = True
        elif isinstance(item, Ge):
            out["minimum"] = item.ge
        elif isinstance(item, Le):
            out["maximum"] = item.le
        elif isinstance(item, Gt | Lt):
            raise TypeError("exclusive bounds are not used by the reference's params")
    return out


def _property_schema(info: FieldInfo) -> dict[str, Any]:
    if UNCHECKED in info.metadata:
        return {}
    annotation, nested = _unwrap(info.annotation)
    metadata = [*nested, *info.metadata]
    schema = _type_schema(annotation, AS_ENUM in metadata, RECORD in metadata)
    schema.update(_bounds(metadata, schema.get("type") == "array"))
    if NULLABLE in metadata:
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


def params_schema(model: type[WireModel]) -> dict[str, Any]:
    """The object JSON schema of ``model``'s params, as the reference declares it:
    ``type: object``, ``additionalProperties: false`` (left out for a model that admits
    extra properties, an :class:`~openclaw_desktop.protocol.base.OpenModel`: a method the
    reference serves whatever its params hold), ``properties`` in declaration order and
    ``required`` (when any) in that order too."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, info in model.model_fields.items():
        wire = _wire_name(name, info)
        properties[wire] = _property_schema(info)
        if info.is_required() or REQUIRED in info.metadata:
            required.append(wire)
    schema: dict[str, Any] = {"type": "object"}
    if model.model_config.get("extra") != "allow":
        schema["additionalProperties"] = False
    if required:
        schema["required"] = required
    schema["properties"] = properties
    rules = [_not_schema(model, rule) for rule in getattr(model, "NOT_TOGETHER", ())]
    if len(rules) == 1:
        schema["not"] = rules[0]
    elif rules:
        schema["allOf"] = [{"not": rule} for rule in rules]
    return schema


def _not_schema(model: type[WireModel], rule: NotTogether) -> dict[str, Any]:
    """The schema a :class:`NotTogether` rule negates: the fields present (with their
    values, where the rule names them)."""
    names = [_wire_name(name, model.model_fields[name]) for name in rule.fields]
    if rule.equal is None:
        return {"required": names}
    if len(rule.equal) != len(names):
        raise TypeError(f"{model.__name__}: a NotTogether rule names a value per field")
    consts = {name: {"const": value} for name, value in zip(names, rule.equal, strict=True)}
    return {"properties": consts, "required": names}


def unchecked_fields(model: type[WireModel]) -> frozenset[str]:
    """The wire names ``model`` admits with any value (taken, not acted on)."""
    return frozenset(
        _wire_name(name, info)
        for name, info in model.model_fields.items()
        if UNCHECKED in info.metadata
    )
