"""The node surface this build offers: the spec table and its handlers."""

from __future__ import annotations

from openclaw_desktop.node.dispatcher import Handler
from openclaw_desktop.node.handlers.device import device_info, device_status
from openclaw_desktop.node.handlers.system import system_notify
from openclaw_desktop.node.registry import CommandRegistry, CommandSpec

__all__ = ["default_handlers", "default_registry"]


def default_registry() -> CommandRegistry:
    """The commands of the headless node."""
    return CommandRegistry(
        [
            CommandSpec("device.info", "device"),
            CommandSpec("device.status", "device"),
            CommandSpec("system.notify", "system", setting="notifications"),
        ]
    )


def default_handlers() -> dict[str, Handler]:
    """Handlers for :func:`default_registry`."""
    return {
        "device.info": device_info,
        "device.status": device_status,
        "system.notify": system_notify,
    }
