"""Param checks shared by the Control UI method modules, worded as the reference words its
newer (``closedObject``) schemas."""

from __future__ import annotations

import re
from typing import Any

from gateway.chat.params import Field, check
from gateway.errors import MethodError, invalid_params, invalid_request

__all__ = ["NON_EMPTY", "check_closed", "check_empty", "problem_text", "string_items"]

#: A non-empty string (``NonEmptyString``).
NON_EMPTY = Field("string", min_length=1)


def check_closed(method: str, params: Any, fields: dict[str, Field]) -> dict[str, Any]:
    """:func:`~gateway.chat.params.check`, worded as the reference words these (newer,
    ``closedObject``) schemas: ``must not have fewer than 1 characters``."""
    try:
        return check(method, params, fields)
    except MethodError as exc:
        message = str(exc.shape.get("message", ""))
        message = re.sub(
            r"must NOT have (fewer|more) than (\d+) characters?",
            r"must not have \1 than \2 characters",
            message,
        )
        raise invalid_request(message) from None


def problem_text(exc: MethodError, method: str) -> str:
    """The problem text of an ``invalid <method> params: ...`` error."""
    message = str(exc.shape.get("message", ""))
    return message.removeprefix(f"invalid {method} params: ")


def string_items(
    method: str,
    name: str,
    values: list[Any],
    *,
    max_items: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    min_items: int | None = None,
    unique: bool = False,
) -> list[str]:
    """Check an array of strings as the reference's schema does (its wording)."""
    if min_items is not None and len(values) < min_items:
        raise invalid_params(method, f"at /{name}: must not have fewer than {min_items} items")
    if max_items is not None and len(values) > max_items:
        raise invalid_params(method, f"at /{name}: must not have more than {max_items} items")
    for index, value in enumerate(values):
        where = f"at /{name}/{index}:"
        if not isinstance(value, str):
            raise invalid_params(method, f"{where} must be string")
        if pattern is not None and re.search(pattern, value) is None:
            raise invalid_params(method, f'{where} must match pattern "{pattern}"')
        if pattern is None and not value:
            raise invalid_params(method, f"{where} must not have fewer than 1 characters")
        if max_length is not None and len(value) > max_length:
            raise invalid_params(method, f"{where} must not have more than {max_length} characters")
    if unique and len(set(values)) != len(values):
        raise invalid_params(method, f"at /{name}: must not have duplicate items")
    return list(values)


def check_empty(method: str, params: Any) -> None:
    """Params that must be an empty object (``closedObject({})``)."""
    check_closed(method, params, {})
