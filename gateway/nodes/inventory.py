"""What a connected node reports about itself after its handshake, kept per connection.

The real node host (``openclaw node run``) sends, right after ``hello-ok``:

* ``node.event {event: "node.host.stats", payloadJSON}`` (then every 60 s): CPU count, load
  averages, memory and home-volume disk. The gateway stamps ``updatedAtMs`` with its own
  receipt time; ``node.list``/``node.describe`` show it as ``hostStats``, and the last one is
  also saved on the approved node record, so an offline node keeps its last-known stats;
* ``node.runnerInventory.update {protocolFeatures, workerHost}``: whether it offers to host
  worker sessions (``workerHost.enabled``);
* ``node.skills.update {skills}`` and ``node.pluginTools.update {tools}``: the skills and the
  plugin/MCP tools it offers the agent.

Everything here is pure: validation and normalization as the real gateway 2026.9.6 does them
(the same limits, the same order; the params themselves are checked against the
models of :mod:`openclaw_desktop.protocol.methods.nodes` first), and :class:`NodeInventory`, the
per-connection record that :attr:`gateway.peer.Peer.inventory` holds. A new connection starts
a new, empty one, as in the real gateway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from openclaw_desktop.protocol.methods.nodes import (
    MAX_NODE_SKILLS,
    PLUGIN_TOOL_NAME_PATTERN,
    SKILL_NAME_PATTERN,
)

__all__ = [
    "NODE_HOST_STATS_EVENT",
    "NODE_WORKER_HOST_CLIENT_IDS",
    "NODE_WORKER_SUPERVISOR_FEATURE",
    "RUNNER_UPDATE_REQUIRED_ISSUE",
    "LiveNode",
    "NodeInventory",
    "catalog_fields",
    "normalize_skills",
    "parse_host_stats",
    "parse_runner_declaration",
    "plugin_tools_for",
    "runner_update_required",
]

NODE_HOST_STATS_EVENT = "node.host.stats"
#: The one worker-supervisor dialect the real gateway accepts, and the retired ones it still
#: parses (to tell the node to update).
NODE_WORKER_SUPERVISOR_FEATURE = "node-worker-supervisor-v6"
_RETIRED_FEATURES = tuple(f"node-worker-supervisor-v{n}" for n in range(1, 6))
#: Clients that run the shared node runtime (the only ones a runner inventory is taken from).
NODE_WORKER_HOST_CLIENT_IDS = frozenset({"node-host", "openclaw-macos"})
#: The ``issues[]`` entry ``node.list`` shows for a node on a retired dialect.
RUNNER_UPDATE_REQUIRED_ISSUE: Mapping[str, str] = {
    "code": "update-required",
    "action": "update-and-reconnect",
    "updateCommand": "openclaw update",
    "headlessReconnectCommand": "openclaw node restart",
}
_WORKER_CAPACITY_MAX = 1024
_WORKER_FLAGS = (
    "bundlePrewarm",
    "bundleRetention",
    "bundleStatus",
    "portalStream",
    "environmentSession",
    "preparedWorkspace",
)

_SKILL_NAME_RE = re.compile(SKILL_NAME_PATTERN[1:-1])
_TOOL_NAME_RE = re.compile(PLUGIN_TOOL_NAME_PATTERN[1:-1])
_SKILL_MAX_CONTENT_BYTES = 65536
_SKILL_MAX_TOTAL_BYTES = 524288
_TOOL_DESCRIPTION_MAX = 1024
_TOOL_MAX_COUNT = 128


@dataclass
class NodeInventory:
    """One node connection's self-reports (all empty until the node sends them).

    Attributes:
        path_env: ``connect.pathEnv`` (the node's ``PATH``), shown as ``pathEnv``.
        host_stats: The last accepted ``node.host.stats`` payload plus ``updatedAtMs``.
        runner: The last accepted runner declaration (``node.runnerInventory.update``).
        skills: The normalized skills (``node.skills.update``).
        declared_tools: The tools as declared (``node.pluginTools.update``); which of them
            count depends on the node's approved commands, see :func:`plugin_tools_for`.
    """

    path_env: str | None = None
    host_stats: dict[str, Any] | None = None
    runner: dict[str, Any] | None = None
    skills: list[dict[str, str]] = field(default_factory=list)
    declared_tools: list[dict[str, Any]] = field(default_factory=list)

    def issues(self, client_id: str | None, client_mode: str | None) -> list[dict[str, str]]:
        """``node.list`` ``issues``: an update is required when a node-runtime client
        declared a retired worker dialect."""
        runner = self.runner
        features = runner.get("protocolFeatures", []) if runner else []
        if (
            client_id in NODE_WORKER_HOST_CLIENT_IDS
            and client_mode == "node"
            and len(features) == 1
            and features[0] != NODE_WORKER_SUPERVISOR_FEATURE
        ):
            return [dict(RUNNER_UPDATE_REQUIRED_ISSUE)]
        return []


# ------------------------------------------------------------------ host stats


def _integer(value: Any, low: int, high: float = math.inf) -> bool:
    """JavaScript's ``Number.isInteger`` and a range (``true`` is no number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        return False
    return low <= value <= high


def _load(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and 0 <= value <= 100000


def _as_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) else value


def parse_host_stats(payload: Any) -> dict[str, Any] | None:
    """``payload`` as the real ``NodeHostStatsPayloadSchema`` accepts it (closed; free
    memory and disk no larger than their totals; disk fields both or neither), or None."""
    if not isinstance(payload, dict):
        return None
    known = {
        "cpuCount",
        "loadAverage",
        "memoryTotalBytes",
        "memoryFreeBytes",
        "diskTotalBytes",
        "diskAvailableBytes",
    }
    if set(payload) - known:
        return None
    for name in ("cpuCount", "memoryTotalBytes", "memoryFreeBytes"):
        if name not in payload:
            return None
    if not _integer(payload["cpuCount"], 1, 4096):
        return None
    for name in ("memoryTotalBytes", "memoryFreeBytes", "diskTotalBytes", "diskAvailableBytes"):
        if name in payload and not _integer(payload[name], 0):
            return None
    load = payload.get("loadAverage")
    if "loadAverage" in payload and not (
        isinstance(load, list) and len(load) == 3 and all(_load(v) for v in load)
    ):
        return None
    if payload["memoryFreeBytes"] > payload["memoryTotalBytes"]:
        return None
    if ("diskTotalBytes" in payload) != ("diskAvailableBytes" in payload):
        return None
    if "diskTotalBytes" in payload and payload["diskAvailableBytes"] > payload["diskTotalBytes"]:
        return None
    stats = {k: payload[k] if k == "loadAverage" else _as_int(payload[k]) for k in payload}
    return stats


# ------------------------------------------------------------------ runner inventory


def _capacity(value: Any) -> dict[str, int] | None:
    if not isinstance(value, dict) or set(value) != {"total", "available"}:
        return None
    total, available = value["total"], value["available"]
    if not _integer(total, 1, _WORKER_CAPACITY_MAX) or not _integer(available, 0):
        return None
    if available > total:
        return None
    return {"total": int(total), "available": int(available)}


def _worker_host(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict) or not isinstance(value.get("enabled"), bool):
        return None
    if not value["enabled"]:
        return {"enabled": False} if set(value) == {"enabled"} else None
    capacity = _capacity(value.get("capacity"))
    allowed = {"enabled", "capacity", *_WORKER_FLAGS, "capturedExecPolicy"}
    if capacity is None or not 2 <= len(value) <= 9 or set(value) - allowed:
        return None
    if any(value.get(flag, 1) != 1 or value.get(flag) is True for flag in _WORKER_FLAGS):
        return None
    if value.get("capturedExecPolicy", True) is not True:
        return None
    if "bundleStatus" in value and "bundleRetention" not in value:
        return None
    declared: dict[str, Any] = {"enabled": True, "capacity": capacity}
    declared.update({flag: 1 for flag in _WORKER_FLAGS if flag in value})
    if "capturedExecPolicy" in value:
        declared["capturedExecPolicy"] = True
    return declared


def parse_runner_declaration(params: Any) -> dict[str, Any] | None:
    """``node.runnerInventory.update`` params as the real gateway parses them (a closed
    declaration: no features at all, a retired dialect, or the current one with its
    ``workerHost``), or None (``invalid node runner inventory``)."""
    if not isinstance(params, dict) or not isinstance(params.get("protocolFeatures"), list):
        return None
    features = params["protocolFeatures"]
    if not features:
        return {"protocolFeatures": []} if set(params) == {"protocolFeatures"} else None
    if len(features) != 1:
        return None
    feature = features[0]
    if feature in _RETIRED_FEATURES:
        keys_ok = len(params) <= 2 and set(params) <= {
            "protocolFeatures",
            "workerRuns",
            "workerHost",
        }
        return {"protocolFeatures": [feature]} if keys_ok else None
    if feature != NODE_WORKER_SUPERVISOR_FEATURE or len(params) != 2:
        return None
    worker_host = _worker_host(params.get("workerHost"))
    if worker_host is None:
        return None
    return {"protocolFeatures": [NODE_WORKER_SUPERVISOR_FEATURE], "workerHost": worker_host}


def runner_update_required(node_id: str) -> str:
    """The refusal text for a node on a retired worker dialect."""
    issue = RUNNER_UPDATE_REQUIRED_ISSUE
    return (
        f"device worker node {node_id} requires an update before it can host sessions; "
        f"run {issue['updateCommand']}, then reconnect it (for a headless node, run "
        f"{issue['headlessReconnectCommand']})"
    )


# ------------------------------------------------------------------ skills and tools


def _locale_key(text: str) -> tuple[str, str]:
    """An approximation of ``localeCompare(…, "en")`` for ``[A-Za-z0-9_-]`` names: case
    is secondary (lowercase first), and ``_`` then ``-`` come before digits and letters."""
    primary = text.lower().replace("_", "\x01").replace("-", "\x02")
    return primary, text.swapcase()


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def normalize_skills(skills: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The skills the real gateway keeps: valid names (trimmed), non-empty descriptions of at
    most 1,024 characters, contents of at most 64 KiB, the first of each name, at most 64 and
    512 KiB in all; sorted by name."""
    kept: list[dict[str, str]] = []
    seen: set[str] = set()
    total = 0
    for skill in skills:
        name, description = _text(skill.get("name")), _text(skill.get("description"))
        content = skill.get("content")
        size = len(content.encode("utf-8")) if isinstance(content, str) else 0
        if (
            not _SKILL_NAME_RE.fullmatch(name)
            or not description
            or len(description) > 1024
            or not size
            or size > _SKILL_MAX_CONTENT_BYTES
            or name in seen
            or len(kept) >= MAX_NODE_SKILLS
            or total + size > _SKILL_MAX_TOTAL_BYTES
        ):
            continue
        assert isinstance(content, str)
        seen.add(name)
        total += size
        kept.append({"name": name, "description": description, "content": content})
    return sorted(kept, key=lambda s: _locale_key(s["name"]))


def _default_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}, "additionalProperties": True}


def plugin_tools_for(
    declared: Sequence[Mapping[str, Any]], allowed_commands: Sequence[str]
) -> list[dict[str, Any]]:
    """``nodePluginTools``: the declared tools whose ``command`` the node may run now
    (approved), as the real gateway normalizes them with no plugin of its own registering
    descriptors: trimmed fields, a default ``parameters`` schema, ``node-mcp`` reserved for
    MCP calls; sorted, the first of each plugin and name, at most 128."""
    allowed = set(allowed_commands)
    tools: list[dict[str, Any]] = []
    for tool in declared:
        plugin_id, name = _text(tool.get("pluginId")), _text(tool.get("name"))
        description = _text(tool.get("description"))[:_TOOL_DESCRIPTION_MAX]
        command = _text(tool.get("command"))
        if not plugin_id or not _TOOL_NAME_RE.fullmatch(name) or not description:
            continue
        if not command or command not in allowed:
            continue
        raw_mcp = tool.get("mcp")
        mcp: Mapping[str, Any] = raw_mcp if isinstance(raw_mcp, dict) else {}
        server, mcp_tool = _text(mcp.get("server")), _text(mcp.get("tool"))
        if plugin_id == "node-mcp" and (
            command != "mcp.tools.call.v1" or not mcp.get("server") or not mcp.get("tool")
        ):
            continue
        parameters = tool.get("parameters")
        descriptor: dict[str, Any] = {
            "pluginId": plugin_id,
            "name": name,
            "description": description,
            "parameters": parameters if isinstance(parameters, dict) else _default_parameters(),
            "command": command,
        }
        if server and mcp_tool:
            descriptor["mcp"] = {"server": server, "tool": mcp_tool}
        tools.append(descriptor)
    tools.sort(key=lambda t: (_locale_key(t["pluginId"]), _locale_key(t["name"]), t["command"]))
    unique: dict[tuple[str, str], dict[str, Any]] = {}
    for tool in tools:
        unique.setdefault((tool["pluginId"], tool["name"]), tool)
    return list(unique.values())[:_TOOL_MAX_COUNT]


# ------------------------------------------------------------------ node.list fields


class LiveNode(Protocol):
    """What :func:`catalog_fields` reads of a connected node (a :class:`~gateway.peer.Peer`)."""

    inventory: NodeInventory
    commands: list[str]
    client: dict[str, Any]


def catalog_fields(live: LiveNode | None, saved_stats: Mapping[str, Any] | None) -> dict[str, Any]:
    """``hostStats``, ``issues``, ``nodePluginTools`` and ``pathEnv`` of a ``node.list`` /
    ``node.describe`` entry, in the real gateway's order: a connected node shows what this
    connection reported (``hostStats`` only once it sent some), an offline one its saved
    ``hostStats``."""
    if live is None:
        return {"hostStats": dict(saved_stats)} if saved_stats is not None else {}
    inventory = live.inventory
    fields: dict[str, Any] = {}
    if inventory.host_stats is not None:
        fields["hostStats"] = dict(inventory.host_stats)
    issues = inventory.issues(live.client.get("id"), live.client.get("mode"))
    if issues:
        fields["issues"] = issues
    fields["nodePluginTools"] = plugin_tools_for(inventory.declared_tools, live.commands)
    if inventory.path_env is not None:
        fields["pathEnv"] = inventory.path_env
    return fields
