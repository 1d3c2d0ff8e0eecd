"""Results of the node methods: the operator's ``node.*`` / ``node.pair.*`` calls and the
node role's own (``node.pending.*``, ``node.skills.update``...).

``node.invoke`` and ``node.event`` reuse :mod:`openclaw_desktop.protocol.node`'s models.
Field names are the real gateway 2026.9.6's (recorded in ``tests/fixtures/gateway`` and
``tests/fixtures/protocol/sent_frames.json``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from openclaw_desktop.protocol.base import OpenModel
from openclaw_desktop.protocol.node import NodeEventResult, NodeInvokeResponse

__all__ = [
    "RESULTS",
    "NodeAckResult",
    "NodeDescribeResult",
    "NodeEntry",
    "NodeIdResult",
    "NodeInvokeProgressResult",
    "NodeListResult",
    "NodePairListResult",
    "NodePairResolveResult",
    "NodePendingAckResult",
    "NodePendingDrainResult",
    "NodePendingPullResult",
    "NodePluginSurfaceRefreshResult",
    "NodePluginToolsResult",
    "NodeRenameResult",
    "NodeSkillsResult",
]


class NodeEntry(OpenModel):
    """One node of ``node.list`` (and the body of ``node.describe``)."""

    node_id: str
    display_name: str | None = None
    platform: str | None = None
    version: str | None = None
    client_id: str | None = None
    client_mode: str | None = None
    device_family: str | None = None
    caps: list[str] | None = None
    commands: list[str] | None = None
    connected: bool | None = None
    paired: bool | None = None


class NodeListResult(OpenModel):
    """``node.list``: ``{ts, nodes}``."""

    ts: int
    nodes: list[NodeEntry]


class NodeDescribeResult(NodeEntry):
    """``node.describe``: ``{ts, ...one node entry}``."""

    ts: int


class NodeRenameResult(OpenModel):
    """``node.rename``: ``{nodeId, displayName}``."""

    node_id: str
    display_name: str


class NodeInvokeProgressResult(OpenModel):
    """``node.invoke.progress``: ``{ok, ignored}`` (ignored: no invoke was waiting)."""

    ok: bool
    ignored: bool | None = None


class NodeAckResult(OpenModel):
    """``node.invoke.result``: ``{ok, ignored?}`` (ignored: no such invoke is pending)."""

    ok: bool
    ignored: bool | None = None


class NodePendingAckResult(OpenModel):
    """``node.pending.ack``: ``{nodeId, ackedIds, remainingCount}``."""

    node_id: str
    acked_ids: list[str]
    remaining_count: int


class NodeIdResult(OpenModel):
    """``node.runnerInventory.update`` and ``node.pair.remove``: ``{nodeId}``."""

    node_id: str


class NodePluginToolsResult(OpenModel):
    """``node.pluginTools.update``: ``{nodeId, tools}`` (the tools the gateway kept)."""

    node_id: str
    tools: list[dict[str, Any]]


class NodeSkillsResult(OpenModel):
    """``node.skills.update``: ``{nodeId, skills}``."""

    node_id: str
    skills: list[dict[str, Any]]


class NodePluginSurfaceRefreshResult(OpenModel):
    """``node.pluginSurface.refresh`` / ``plugin.surface.refresh``: a fresh surface URL.
    Our gateway hosts no plugin surfaces and always answers UNAVAILABLE, so no field is
    required here."""

    surface: str | None = None
    url: str | None = None


class NodePendingPullResult(OpenModel):
    """``node.pending.pull``: ``{nodeId, actions}`` (the actions this node may run now)."""

    node_id: str
    actions: list[dict[str, Any]]


class NodePendingDrainResult(OpenModel):
    """``node.pending.drain``: ``{nodeId, revision, items, hasMore}``."""

    node_id: str
    revision: int
    items: list[dict[str, Any]]
    has_more: bool


class NodePairListResult(OpenModel):
    """``node.pair.list``: ``{pending, paired}``."""

    pending: list[dict[str, Any]]
    paired: list[dict[str, Any]]


class NodePairResolveResult(OpenModel):
    """``node.pair.approve`` (``{requestId, node}``) and ``node.pair.reject``
    (``{requestId, decision}``)."""

    request_id: str
    node: dict[str, Any] | None = None
    decision: str | None = None


RESULTS: dict[str, type[BaseModel]] = {
    "node.list": NodeListResult,
    "node.describe": NodeDescribeResult,
    "node.rename": NodeRenameResult,
    "node.invoke": NodeInvokeResponse,
    "node.invoke.result": NodeAckResult,
    "node.invoke.progress": NodeInvokeProgressResult,
    "node.event": NodeEventResult,
    "node.pluginTools.update": NodePluginToolsResult,
    "node.skills.update": NodeSkillsResult,
    "node.pluginSurface.refresh": NodePluginSurfaceRefreshResult,
    "node.runnerInventory.update": NodeIdResult,
    "node.pending.pull": NodePendingPullResult,
    "node.pending.drain": NodePendingDrainResult,
    "node.pending.ack": NodePendingAckResult,
    "node.pair.list": NodePairListResult,
    "node.pair.approve": NodePairResolveResult,
    "node.pair.reject": NodePairResolveResult,
    "node.pair.remove": NodeIdResult,
    "plugin.surface.refresh": NodePluginSurfaceRefreshResult,
}
"""Method name -> result model, for the nodes family's methods."""
