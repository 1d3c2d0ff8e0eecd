"""``device.*`` (pairing, tokens, setup codes) params, in the reference's property order."""

from __future__ import annotations

from openclaw_desktop.protocol.base import WireModel

__all__ = ["PARAMS"]

#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {}
