"""The node surface this build offers: every command area's specs and handlers."""

from __future__ import annotations

from collections.abc import Callable

from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.apps import apps_area
from openclaw_desktop.node.handlers.camera import camera_area
from openclaw_desktop.node.handlers.computer import computer_area
from openclaw_desktop.node.handlers.device import device_area
from openclaw_desktop.node.handlers.exec import exec_area
from openclaw_desktop.node.handlers.location import location_area
from openclaw_desktop.node.handlers.screen import screen_area
from openclaw_desktop.node.handlers.screen_record import screen_record_area
from openclaw_desktop.node.handlers.system import notify_area
from openclaw_desktop.node.handlers.talk import talk_area
from openclaw_desktop.node.registry import CommandRegistry, CommandSpec
from openclaw_desktop.node.results import Handler

__all__ = ["AREAS", "build_dispatcher", "build_surface"]

#: Every command area, in the order commands are advertised.
AREAS: tuple[Callable[[NodeContext], Area], ...] = (
    device_area,
    notify_area,
    camera_area,
    screen_area,
    screen_record_area,
    talk_area,
    exec_area,
    location_area,
    apps_area,
    computer_area,
)


def build_surface(ctx: NodeContext) -> tuple[CommandRegistry, dict[str, Handler]]:
    """The registry and handlers of all areas."""
    specs: list[CommandSpec] = []
    handlers: dict[str, Handler] = {}
    for make in AREAS:
        area = make(ctx)
        specs.extend(area.specs)
        handlers.update(area.handlers)
    return CommandRegistry(specs), handlers


def build_dispatcher(ctx: NodeContext) -> InvokeDispatcher:
    """An InvokeDispatcher over all areas, gated by ``ctx``'s settings and presence."""
    registry, handlers = build_surface(ctx)
    return InvokeDispatcher(
        registry, handlers, lambda: ctx.settings().toggles(), presence=ctx.presence
    )
