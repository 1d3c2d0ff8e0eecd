"""Where a running invoke's handler sends ``node.invoke.progress``.

The session sets :data:`INVOKE_PROGRESS` for the task of each invoke it runs; a handler that
streams (``system.run``) reads it, and finds ``None`` when nobody listens (a direct call).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar

__all__ = ["INVOKE_PROGRESS", "ProgressSend"]

#: Sends one ``node.invoke.progress`` request ``(seq, chunk)`` for the current invoke and
#: waits for the gateway's answer (raises what the request raises).
ProgressSend = Callable[[int, str], Awaitable[object]]

INVOKE_PROGRESS: ContextVar[ProgressSend | None] = ContextVar("invoke_progress", default=None)
