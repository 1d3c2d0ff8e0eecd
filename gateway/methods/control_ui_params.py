"""The items of the Control UI methods' array params, checked in the reference's words.

The params models (:mod:`openclaw_desktop.protocol.methods.control_ui`) declare an array
property as an ``array``: the derived schemas carry no ``items``, ``maxItems`` or
``uniqueItems`` (nor the ``pattern`` of ``users.prefs.get``'s keys), so the handlers check
the items with :func:`string_items` after the declared check."""

from __future__ import annotations

import re
from typing import Any

from gateway.errors import invalid_params

__all__ = ["string_items"]


def string_items(
    method: str,
    name: str,
    values: list[Any],
    *,
    max_items: int | None = None,
    max_length: int | None = None,
    pattern: str | None = None,
    unique: bool = False,
) -> list[str]:
    """Check an array of strings as the reference's schema does (its wording)."""
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
