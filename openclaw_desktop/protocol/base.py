"""Pydantic base classes: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["ClosedModel", "OpenModel", "WireModel"]


class WireModel(BaseModel):
    """A wire object. Serialise with :meth:`to_wire`."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="ignore",
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict with wire names, leaving out unset optional fields."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class ClosedModel(WireModel):
    """A closed schema: unknown properties are rejected, as the real gateway does."""

    model_config = ConfigDict(extra="forbid")


class OpenModel(WireModel):
    """A tolerant schema: newer gateways add fields, which are kept but not required."""

    model_config = ConfigDict(extra="allow")
