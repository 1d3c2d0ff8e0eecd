"""Routes ``node.invoke.request`` to the handler of its command, through the gates."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.node.results import Handler, InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["Handler", "InvokeDispatcher"]

log = logging.getLogger("openclaw.node")


async def _present() -> bool:
    return True


class InvokeDispatcher:
    """Looks up the spec, re-checks settings, availability and presence, then calls the handler.

    Unknown commands give ``INVALID_REQUEST: unknown command``; a command the user turned
    off gives its spec's ``disabled_code``; one this machine cannot run now gives
    ``UNAVAILABLE`` with the reason; a handler raising :class:`DeviceError` gives that error;
    any other exception gives ``UNAVAILABLE`` with no traceback on the wire (it is logged here).
    """

    def __init__(
        self,
        registry: CommandRegistry,
        handlers: Mapping[str, Handler],
        settings: Callable[[], Mapping[str, bool]],
        presence: Callable[[], Awaitable[bool]] = _present,
    ) -> None:
        missing = [s.name for s in registry.specs if s.name not in handlers]
        if missing:
            raise ValueError(f"commands without a handler: {', '.join(missing)}")
        self.registry = registry
        self._handlers = dict(handlers)
        self._settings = settings
        self._presence = presence

    async def dispatch(self, command: str, params: Any) -> InvokeResult:
        """Run one command."""
        spec = self.registry.spec(command)
        if spec is None:
            return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "unknown command")
        if not self.registry.enabled(spec, self._settings()):
            message = spec.disabled_message or f"{command} is disabled in this node's settings"
            return InvokeResult.error(spec.disabled_code, message)
        availability = await spec.availability()
        if not availability.available:
            return InvokeResult.error(spec.unavailable_code, availability.reason)
        if spec.needs_presence and not await self._presence():
            return InvokeResult.error(
                NodeErrorCode.NODE_BACKGROUND_UNAVAILABLE,
                f"{command} needs the user at the computer (the session is locked)",
            )
        try:
            return await self._handlers[command](params)
        except DeviceError as exc:
            return InvokeResult.error(exc.code, exc.message)
        except Exception:
            log.exception("handler for %s failed", command)
            return InvokeResult.error(NodeErrorCode.UNAVAILABLE, f"{command} failed on this node")
