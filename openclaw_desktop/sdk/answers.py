"""Gateway answers read through their result models
(:data:`openclaw_desktop.protocol.results.RESULTS`).

:func:`parse_result` is the one way the client turns an answer into a model: a misfit raises
:class:`~openclaw_desktop.sdk.errors.InvalidResult` (a :class:`~openclaw_desktop.errors.
ProtocolError`, so callers that catch :class:`~openclaw_desktop.errors.OpenClawError` keep
working). The models are open: fields a newer gateway adds are kept, not refused.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from openclaw_desktop.errors import InvalidState
from openclaw_desktop.protocol.results import RESULTS
from openclaw_desktop.sdk.errors import InvalidResult

__all__ = ["as_wire", "parse_result", "problems"]

M = TypeVar("M", bound=BaseModel)


def problems(exc: ValidationError, whole: str = "payload") -> str:
    """``field/path: what is wrong`` for each error, ``; ``-joined (``whole`` names an
    error of the object itself): field names and the model's messages only, never the
    values (they may be secrets)."""
    return "; ".join(
        f"{'/'.join(str(p) for p in error['loc']) or whole}: {error['msg']}"
        for error in exc.errors(include_url=False, include_input=False, include_context=False)
    )


def parse_result(method: str, payload: Any, model: type[M]) -> M:
    """``payload`` (the answer to ``method``) as ``model``, which must be the method's
    entry in :data:`RESULTS` (given so the result is typed).

    Raises:
        InvalidResult: the answer does not fit the model.
        InvalidState: ``model`` is not the method's result model (a programming error).
    """
    if RESULTS.get(method) is not model:
        raise InvalidState(f"{model.__name__} is not the result model of {method}")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise InvalidResult(method, problems(exc)) from None


def as_wire(result: BaseModel) -> dict[str, Any]:
    """A parsed answer back as the dict the gateway sent (wire names, the fields it sent,
    nulls and unknown fields included): what the SDK's dict-returning calls hand out."""
    wire: dict[str, Any] = result.model_dump(by_alias=True, exclude_unset=True, mode="json")
    return wire
