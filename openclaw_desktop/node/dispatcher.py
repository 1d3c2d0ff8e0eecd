"""Routes ``node.invoke.request`` to the handler of its command, through the gates."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["Handler", "InvokeDispatcher"]

log = logging.getLogger("openclaw.node")

Handler = Callable[[Any], Awaitable[InvokeResult]]


class InvokeDispatcher:
    """Looks up the spec, re-checks settings and availability, then calls the handler.

    Unknown commands give ``INVALID_REQUEST: unknown command``; a handler that raises gives
    ``UNAVAILABLE`` with no traceback on the wire (it is logged here).
    """

    def __init__(
        self,
        registry: CommandRegistry,
        handlers: Mapping[str, Handler],
        settings: Callable[[], Mapping[str, bool]],
    ) -> None:
        missing = [s.name for s in registry.specs if s.name not in handlers]
        if missing:
            raise ValueError(f"commands without a handler: {', '.join(missing)}")
        self.registry = registry
        self._handlers = dict(handlers)
        self._settings = settings

    async def dispatch(self, command: str, params: Any) -> InvokeResult:
        """Run one command."""
        spec = self.registry.spec(command)
        if spec is None:
            return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "unknown command")
        if not self.registry.enabled(spec, self._settings()):
            return InvokeResult.error(
                NodeErrorCode.NOT_AUTHORIZED, f"{command} is disabled in this node's settings"
            )
        availability = spec.availability()
        if not availability.available:
            return InvokeResult.error(NodeErrorCode.UNAVAILABLE, availability.reason)
        try:
            return await self._handlers[command](params)
        except Exception:
            log.exception("handler for %s failed", command)
            return InvokeResult.error(NodeErrorCode.UNAVAILABLE, f"{command} failed on this node")
