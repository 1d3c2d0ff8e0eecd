"""Errors raised inside method handlers, carrying the ErrorShape to answer with."""

from __future__ import annotations

from typing import Any

from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = ["MethodError", "invalid_params", "invalid_request"]


class MethodError(Exception):
    """A handler refuses the request; ``shape`` is the wire ErrorShape."""

    def __init__(self, shape: dict[str, Any]) -> None:
        super().__init__(shape.get("message"))
        self.shape = shape


def invalid_request(message: str, details: Any = None) -> MethodError:
    """``INVALID_REQUEST`` with a message."""
    return MethodError(error_shape(ErrorCode.INVALID_REQUEST, message, details))


def invalid_params(method: str, problem: str) -> MethodError:
    """``INVALID_REQUEST invalid <method> params: <problem>`` (the reference's wording)."""
    return invalid_request(f"invalid {method} params: {problem}")
