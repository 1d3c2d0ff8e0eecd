"""The device node: command registry, InvokeDispatcher, handlers and the node session."""

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
