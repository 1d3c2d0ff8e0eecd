"""Params checked against a JSON schema as the reference declares it, refused in its words
(``invalid <method> params: at /sessionKey: must not have fewer than 1 characters``).

The schemas are derived from the params models of :mod:`openclaw_desktop.protocol.methods`
(:func:`derived_schema`: the reference's TypeBox schemas, closed objects, string literal
unions as ``anyOf`` of string ``const``); :func:`model_checked` checks a method's params
with its model's; :func:`schema_problems` gives the problems without raising, for a method
that adds the ones of a keyword the checker does not know. :func:`hand_read` answers the
refusal of a model the reference reads by hand (:mod:`openclaw_desktop.protocol.methods.lenient`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, TypeVar

from gateway.errors import invalid_params, invalid_request
from gateway.handshake.jsonschema_errors import collect_errors, format_errors
from openclaw_desktop.protocol.base import WireModel
from openclaw_desktop.protocol.methods import params_schema, unchecked_fields
from openclaw_desktop.protocol.methods.lenient import ParamsRefused

__all__ = [
    "derived_schema",
    "hand_read",
    "model_checked",
    "schema_checked",
    "schema_problems",
]


def schema_problems(schema: dict[str, Any], params: Any) -> str | None:
    """What is wrong with ``params`` (absent: ``{}``), joined with ``"; "``, or None."""
    errors = collect_errors(schema, {} if params is None else params)
    return format_errors(errors) if errors else None


def schema_checked(method: str, schema: dict[str, Any], params: Any) -> dict[str, Any]:
    """``params`` as a dict, or ``INVALID_REQUEST invalid <method> params: ...``."""
    problems = schema_problems(schema, params)
    if problems is not None:
        raise invalid_params(method, problems)
    checked: dict[str, Any] = {} if params is None else params
    return checked


@cache
def derived_schema(model: type[WireModel]) -> dict[str, Any]:
    """The schema of a params model of :mod:`openclaw_desktop.protocol.methods` (derived
    once)."""
    return params_schema(model)


@cache
def _integers(model: type[WireModel]) -> frozenset[str]:
    properties = derived_schema(model)["properties"]
    return frozenset(name for name, sub in properties.items() if sub.get("type") == "integer")


def model_checked(method: str, model: type[WireModel], params: Any) -> dict[str, Any]:
    """``params`` checked against ``model``'s derived schema (refused in the reference's
    words), as a dict of the properties this gateway acts on: the :data:`UNCHECKED` ones
    are left out, an integral float of an integer property (``5.0``) is an ``int``."""
    checked = schema_checked(method, derived_schema(model), params)
    skip, integers = unchecked_fields(model), _integers(model)
    return {
        name: int(value) if name in integers else value
        for name, value in checked.items()
        if name not in skip
    }


_T = TypeVar("_T")


def hand_read(read: Callable[[], _T]) -> _T:
    """``read()``: a hand-reading params model's own reading (``Model.lenient(params).query``),
    its :class:`~openclaw_desktop.protocol.methods.lenient.ParamsRefused` answered as
    ``INVALID_REQUEST`` with the reference's text."""
    try:
        return read()
    except ParamsRefused as exc:
        raise invalid_request(exc.message) from None
