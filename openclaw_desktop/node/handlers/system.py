"""``system.notify``.

Until the desktop notification backend lands (capabilities issue), notifications are
written to the terminal through the ``openclaw.node`` logger; the result says so with
``delivery: "terminal"`` so nobody mistakes it for a desktop notification.
"""

from __future__ import annotations

import logging
from typing import Any

from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["system_notify"]

log = logging.getLogger("openclaw.node")
_PRIORITIES = ("passive", "active", "timeSensitive")


async def system_notify(params: Any) -> InvokeResult:
    """Validate and show a notification (in the terminal for now)."""
    if not isinstance(params, dict):
        return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "params must be an object")
    title, body = params.get("title"), params.get("body")
    if not isinstance(title, str) or not title.strip():
        return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "title required")
    if not isinstance(body, str):
        return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "body required")
    priority = params.get("priority", "active")
    if priority not in _PRIORITIES:
        return InvokeResult.error(
            NodeErrorCode.INVALID_REQUEST, f"priority must be one of {', '.join(_PRIORITIES)}"
        )
    log.warning("notification [%s] %s: %s", priority, title[:200], body[:2000])
    return InvokeResult.success({"sent": True, "delivery": "terminal"})
