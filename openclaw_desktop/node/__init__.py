"""The device node: command registry, InvokeDispatcher, handlers and the node session.

The names below load on first use (PEP 562): importing one light module of this package
(``openclaw_desktop.node.capabilities``, read by the UI at start-up) does not load the
handlers and the device libraries behind them (OpenCV, numpy).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_desktop.node.context import Area, CaptureActivity, NodeContext
    from openclaw_desktop.node.dispatcher import InvokeDispatcher
    from openclaw_desktop.node.registry import (
        Availability,
        CommandRegistry,
        CommandSpec,
        Surface,
        SurfaceEntry,
    )
    from openclaw_desktop.node.results import Handler, InvokeResult
    from openclaw_desktop.node.session import NodeSession
    from openclaw_desktop.node.surface import build_dispatcher, build_surface

#: Exported name -> the module that defines it.
_EXPORTS = {
    "Area": "context",
    "CaptureActivity": "context",
    "NodeContext": "context",
    "InvokeDispatcher": "dispatcher",
    "Availability": "registry",
    "CommandRegistry": "registry",
    "CommandSpec": "registry",
    "Surface": "registry",
    "SurfaceEntry": "registry",
    "Handler": "results",
    "InvokeResult": "results",
    "NodeSession": "session",
    "build_dispatcher": "surface",
    "build_surface": "surface",
}

__all__ = [
    "Area",
    "Availability",
    "CaptureActivity",
    "CommandRegistry",
    "CommandSpec",
    "Handler",
    "InvokeDispatcher",
    "InvokeResult",
    "NodeContext",
    "NodeSession",
    "Surface",
    "SurfaceEntry",
    "build_dispatcher",
    "build_surface",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
