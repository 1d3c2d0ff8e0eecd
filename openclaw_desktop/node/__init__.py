"""The device node: command registry, InvokeDispatcher, handlers and the node session."""

from openclaw_desktop.node.dispatcher import Handler, InvokeDispatcher
from openclaw_desktop.node.registry import Availability, CommandRegistry, CommandSpec
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.node.session import NodeSession
from openclaw_desktop.node.surface import default_handlers, default_registry

__all__ = [
    "Availability",
    "CommandRegistry",
    "CommandSpec",
    "Handler",
    "InvokeDispatcher",
    "InvokeResult",
    "NodeSession",
    "default_handlers",
    "default_registry",
]
