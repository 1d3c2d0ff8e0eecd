"""The OpenClaw app SDK: drive a gateway (the real OpenClaw one or the bundled one) from
Python without touching frames. See :class:`OpenClaw`."""

from openclaw_desktop.sdk.client import DEFAULT_SCOPES, OpenClaw
from openclaw_desktop.sdk.errors import InvalidParams, MissingScope, Unsupported
from openclaw_desktop.sdk.events import EVENT_TYPES, Event
from openclaw_desktop.sdk.run import Approval, ApprovalHandler, Run, RunResult, RunStatus, Usage

__all__ = [
    "DEFAULT_SCOPES",
    "EVENT_TYPES",
    "Approval",
    "ApprovalHandler",
    "Event",
    "InvalidParams",
    "MissingScope",
    "OpenClaw",
    "Run",
    "RunResult",
    "RunStatus",
    "Unsupported",
    "Usage",
]
