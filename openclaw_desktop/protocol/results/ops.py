"""Results of the operator diagnostics methods: logs, usage, cron, approvals, config."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, RootModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "ApprovalListResult",
    "ConfigGetResult",
    "CronListResult",
    "CronStatusResult",
    "DiagnosticsStabilityResult",
    "ExecApprovalsGetResult",
    "ExecApprovalsNodeResult",
    "LogsTailResult",
    "UsageCostResult",
]


class LogsTailResult(OpenModel):
    """``logs.tail``: ``{file, cursor, size, lines, truncated, reset}``."""

    file: str
    cursor: int
    size: int
    lines: list[str]
    truncated: bool | None = None
    reset: bool | None = None


class DiagnosticsStabilityResult(OpenModel):
    """``diagnostics.stability``: the recent stability events and their summary."""

    generated_at: str
    events: list[dict[str, Any]]
    capacity: int | None = None
    count: int | None = None
    dropped: int | None = None
    summary: dict[str, Any] | None = None


class UsageCostResult(OpenModel):
    """``usage.cost``: ``{updatedAt, days, daily, totals}``."""

    updated_at: int
    days: int
    daily: list[dict[str, Any]]
    totals: dict[str, Any] | None = None


class CronListResult(OpenModel):
    """``cron.list``: a page of cron jobs."""

    jobs: list[dict[str, Any]]
    total: int | None = None
    offset: int | None = None
    limit: int | None = None
    has_more: bool | None = None
    next_offset: int | None = None


class CronStatusResult(OpenModel):
    """``cron.status``: ``{enabled, jobs, nextWakeAtMs}``."""

    enabled: bool
    jobs: int
    next_wake_at_ms: int | None = None


class ApprovalListResult(RootModel[list[dict[str, Any]]]):
    """``exec.approval.list``, ``plugin.approval.list``, ``openclaw.approval.list``: an
    array (not an object) of pending approvals."""


class ExecApprovalsGetResult(OpenModel):
    """``exec.approvals.get``: the gateway's exec-approvals file and its defaults."""

    path: str
    exists: bool
    hash: str
    file: dict[str, Any]
    resolved_defaults: dict[str, Any] | None = None


class ExecApprovalsNodeResult(OpenModel):
    """``exec.approvals.node.get`` / ``.set``: the node's own answer to
    ``system.execApprovals.get/set``, passed through (no field is always present)."""


class ConfigGetResult(OpenModel):
    """``config.get``: the gateway's configuration, secrets redacted."""

    path: str
    exists: bool
    raw: str | None = None
    config: dict[str, Any] | None = None
    hash: str | None = None


RESULTS: dict[str, type[BaseModel]] = {
    "logs.tail": LogsTailResult,
    "diagnostics.stability": DiagnosticsStabilityResult,
    "usage.cost": UsageCostResult,
    "cron.list": CronListResult,
    "cron.status": CronStatusResult,
    "exec.approval.list": ApprovalListResult,
    "plugin.approval.list": ApprovalListResult,
    "openclaw.approval.list": ApprovalListResult,
    "exec.approvals.get": ExecApprovalsGetResult,
    "exec.approvals.node.get": ExecApprovalsNodeResult,
    "exec.approvals.node.set": ExecApprovalsNodeResult,
    "config.get": ConfigGetResult,
}
"""Method name -> result model, for the ops family's methods."""
