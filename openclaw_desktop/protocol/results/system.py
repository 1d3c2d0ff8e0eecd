"""Results of the gateway's own health and presence methods (``health``, ``status``,
``system-presence``, ``system.info``, ``update.status``).

Required fields are the ones the real gateway 2026.9.6 always sends (recorded answers in
``tests/fixtures/gateway/real-node-methods.json``); the rest of each answer is kept as the
gateway sent it (``OpenModel``), since newer gateways add fields.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, RootModel

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "RESULTS",
    "HealthResult",
    "StatusResult",
    "SystemInfoResult",
    "SystemPresenceResult",
    "UpdateStatusResult",
]


class HealthResult(OpenModel):
    """``health``: ``{ok, ts, durationMs, ...}`` (channels, agents, sessions, plugins)."""

    ok: bool
    ts: int
    duration_ms: int
    default_agent_id: str | None = None
    agents: list[dict[str, Any]] | None = None
    sessions: dict[str, Any] | None = None
    plugins: dict[str, Any] | None = None


class StatusResult(OpenModel):
    """``status``: the gateway's status report (``runtimeVersion``, heartbeat, tasks...)."""

    runtime_version: str
    heartbeat: dict[str, Any]
    host_desktop: dict[str, Any] | None = None
    channel_summary: list[Any] | None = None
    queued_system_events: list[Any] | None = None
    tasks: dict[str, Any] | None = None
    sessions: dict[str, Any] | None = None


class SystemPresenceResult(RootModel[list[dict[str, Any]]]):
    """``system-presence``: an array (not an object) of presence entries, the gateway's
    own first (``{host, mode, reason, instanceId, text, ts, ...}``)."""


class SystemInfoResult(OpenModel):
    """``system.info``: this host and the gateway process (machine, OS, CPU, memory)."""

    machine_name: str
    hostname: str
    platform: str
    release: str
    arch: str
    os_label: str
    node_version: str
    pid: int
    uptime_ms: int
    cpu_count: int
    memory_total_bytes: int
    memory_free_bytes: int
    port: int | None = None
    process_instance_id: str | None = None
    load_average: list[float] | None = None


class UpdateStatusResult(OpenModel):
    """``update.status``: ``{sentinel, updateAvailable}`` (both always sent, null when
    none is known), and the active and last update runs."""

    sentinel: Any
    update_available: dict[str, Any] | None
    active_run: dict[str, Any] | None = None
    last_run: dict[str, Any] | None = None


RESULTS: dict[str, type[BaseModel]] = {
    "health": HealthResult,
    "status": StatusResult,
    "system-presence": SystemPresenceResult,
    "system.info": SystemInfoResult,
    "update.status": UpdateStatusResult,
}
"""Method name -> result model, for the system family's methods."""
