"""the Control UI's methods (``config.*``, ``usage.*``, ``skills.*``, ...)
params, in the reference's property order."""

from __future__ import annotations

from openclaw_desktop.protocol.base import WireModel

__all__ = ["PARAMS"]

#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {}
