"""The node role's own methods (node -> gateway): invoke results and progress, events, the
node's self-reports (:mod:`gateway.nodes.inventory`) and its pending-work queue.

The operator's ``node.*`` methods are in :mod:`gateway.methods.nodes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from gateway.errors import MethodError, invalid_request, pairing_changed
from gateway.hub import Hub, now_ms
from gateway.methods.closed import hand_read, model_checked
from gateway.methods.table import MethodTable
from gateway.nodes.catalog import NodeCatalog
from gateway.nodes.inventory import (
    NODE_HOST_STATS_EVENT,
    NODE_WORKER_HOST_CLIENT_IDS,
    NODE_WORKER_SUPERVISOR_FEATURE,
    normalize_skills,
    parse_host_stats,
    parse_runner_declaration,
    plugin_tools_for,
    runner_update_required,
)
from gateway.nodes.invoke import InvokeError, InvokeRouter
from gateway.peer import Peer
from gateway.state import DeviceRegistry, NodeSurfaces
from openclaw_desktop.protocol import ErrorCode, EventName, Method, error_shape
from openclaw_desktop.protocol.methods.control_ui import PluginSurfaceRefreshParams
from openclaw_desktop.protocol.methods.nodes import (
    MAX_PROGRESS_CHUNK,
    NodeEventParams,
    NodeInvokeProgressParams,
    NodeInvokeResultParams,
    NodePendingAckParams,
    NodePendingDrainParams,
    NodePendingPullParams,
    NodePluginToolsUpdateParams,
    NodeRunnerInventoryUpdateParams,
    NodeSkillsUpdateParams,
    node_event_payload,
)

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.talk.service import TalkService

__all__ = ["NodeRoleServices", "table"]

table = MethodTable()
"""The methods this module declares."""


class NodeRoleServices(Protocol):
    """What the node role's methods use of the gateway."""

    @property
    def hub(self) -> Hub: ...
    @property
    def router(self) -> InvokeRouter: ...
    @property
    def nodes(self) -> NodeCatalog: ...
    @property
    def chat(self) -> ChatService | None: ...
    async def talk_service(self) -> TalkService: ...
    @property
    def device_registry(self) -> DeviceRegistry:
        """The stored paired devices, touched when a node reports in."""

    @property
    def node_surfaces(self) -> NodeSurfaces:
        """The stored node command surfaces, which keep each node's host stats."""


def _normalized_result(params: Any) -> Any:
    """``node.invoke.result`` params as the reference reads them before its check: a null
    ``payloadJSON`` or ``error`` is left out, a ``payloadJSON`` that is not a string is the
    ``payload`` (unless one is given)."""
    if not isinstance(params, dict):
        return params
    out = dict(params)
    if "payloadJSON" in out and not isinstance(out["payloadJSON"], str):
        moved = out.pop("payloadJSON")
        if moved is not None and "payload" not in out:
            out["payload"] = moved
    if "error" in out and out["error"] is None:
        del out["error"]
    return out


@table.method(Method.NODE_INVOKE_RESULT, role="node", params=NodeInvokeResultParams, check=False)
async def node_invoke_result(gw: NodeRoleServices, peer: Peer, params: Any) -> Any:
    """``node.invoke.result {id, nodeId, ok, payload?, payloadJSON?, error?}`` (node ->
    gateway): the answer to a pending invoke (late or foreign ones are ``ignored``). Checked
    after the reference's normalization, hence by the handler."""
    p = model_checked("node.invoke.result", NodeInvokeResultParams, _normalized_result(params))
    try:
        return gw.router.on_result(peer, p)
    except InvokeError as exc:
        raise MethodError(exc.shape) from None


@table.method(Method.NODE_INVOKE_PROGRESS, role="node", params=NodeInvokeProgressParams)
async def node_invoke_progress(gw: NodeRoleServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.invoke.progress {invokeId, nodeId, seq, chunk}`` (node -> gateway): one chunk
    of a running invoke's output, as the real gateway takes it (closed params, ``nodeId
    mismatch``, ``progress chunk too large`` over 16 KiB of UTF-8), answered ``{ok,
    ignored}``: ignored unless the invoke's caller listens (the agent's tool call)."""
    p = params
    caller = peer.device_id or peer.client.get("id")
    if caller and p["nodeId"] != caller:
        raise invalid_request("nodeId mismatch")
    # The schema bounds the chunk's characters; the reference bounds its UTF-8 bytes too.
    if len(p["chunk"].encode("utf-8", errors="surrogatepass")) > MAX_PROGRESS_CHUNK:
        raise invalid_request("progress chunk too large")
    return {"ok": True, "ignored": not gw.router.on_progress(peer, p)}


@table.method(Method.NODE_EVENT, role="node", params=NodeEventParams)
async def node_event(gw: NodeRoleServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.event {event, payload?, payloadJSON?}``: PAIRING_CHANGED, whatever the event,
    from a node whose surface awaits approval or from a replaced connection (as the real
    gateway, which takes events only from a node's current, approved connection)."""
    p = params
    event: str = p["event"]
    node_id = peer.device_id
    if node_id is None or gw.hub.nodes.get(node_id) is not peer or gw.nodes.surface_pending(peer):
        raise pairing_changed()
    if event == "node.presence.alive":
        if peer.device_id:
            gw.device_registry.touch(peer.device_id, now_ms(), peer.remote_ip)
        return {"ok": True, "event": event, "handled": True, "reason": "persisted"}
    if event == "voice.transcript":
        return (await gw.talk_service()).voice_transcripts.handle(gw.chat, peer, p)
    if event == NODE_HOST_STATS_EVENT:
        return _host_stats(gw, peer, p)
    return {"ok": True, "event": event, "handled": False, "reason": "unsupported_event"}


def _payload_object(p: dict[str, Any]) -> dict[str, Any] | None:
    """The event's payload (:func:`node_event_payload`: ``payloadJSON`` when it is a string,
    else ``payload``), None unless it is a JSON object."""
    try:
        value = node_event_payload(p)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _host_stats(gw: NodeRoleServices, peer: Peer, p: dict[str, Any]) -> dict[str, Any]:
    """``node.host.stats``: kept for this connection with the gateway's receipt time, saved
    on the approved node record, shown as ``hostStats`` and sent to read-scoped operators
    as ``node.hostStats``."""
    node_id = peer.device_id or ""
    stats = parse_host_stats(_payload_object(p))
    if stats is None:
        return {
            "ok": True,
            "event": NODE_HOST_STATS_EVENT,
            "handled": False,
            "reason": "invalid_payload",
        }
    stats["updatedAtMs"] = now_ms()
    peer.inventory.host_stats = stats
    gw.node_surfaces.record_host_stats(node_id, stats)
    gw.hub.broadcast(EventName.NODE_HOST_STATS, {"nodeId": node_id, "hostStats": dict(stats)})
    return {"ok": True, "event": NODE_HOST_STATS_EVENT, "handled": True, "reason": "updated"}


def _caller_node_id(peer: Peer) -> str:
    """The calling node's id (its device, else its client id), or ``nodeId required`` as
    the real gateway answers a caller without one."""
    node_id = (peer.device_id or str(peer.client.get("id") or "")).strip()
    if not node_id:
        raise invalid_request("nodeId required")
    return node_id


def _reporting_node(gw: NodeRoleServices, peer: Peer) -> str:
    """:func:`_caller_node_id` when this connection is the node's current one, else
    ``unknown nodeId`` as the real gateway."""
    node_id = _caller_node_id(peer)
    if gw.hub.nodes.get(node_id) is not peer:
        raise invalid_request("unknown nodeId")
    return node_id


@table.method(Method.NODE_PLUGIN_TOOLS_UPDATE, role="node", params=NodePluginToolsUpdateParams)
async def node_plugin_tools_update(gw: NodeRoleServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pluginTools.update {tools}``: the node's plugin/MCP tools (for this connection);
    answered with those its approved commands admit."""
    node_id = _reporting_node(gw, peer)
    peer.inventory.declared_tools = [dict(tool) for tool in params["tools"]]
    return {"nodeId": node_id, "tools": plugin_tools_for(params["tools"], peer.commands)}


@table.method(Method.NODE_SKILLS_UPDATE, role="node", params=NodeSkillsUpdateParams)
async def node_skills_update(gw: NodeRoleServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.skills.update {skills}``: the node's skills (for this connection), normalized."""
    node_id = _reporting_node(gw, peer)
    peer.inventory.skills = normalize_skills(params["skills"])
    return {"nodeId": node_id, "skills": [dict(skill) for skill in peer.inventory.skills]}


@table.method(
    Method.NODE_PLUGIN_SURFACE_REFRESH,
    role="node",
    params=PluginSurfaceRefreshParams,
    check=False,
)
async def node_plugin_surface_refresh(gw: NodeRoleServices, peer: Peer, params: Any) -> Any:
    """``node.pluginSurface.refresh {surface, observedUrl?}``: ``plugin.surface.refresh``
    for a node (one handler on the reference, read by hand the same way); this gateway
    hosts no plugin surfaces, so every one is unavailable."""
    name = hand_read(PluginSurfaceRefreshParams.lenient(params).surface_name)
    raise MethodError(error_shape(ErrorCode.UNAVAILABLE, f"{name} plugin surface unavailable"))


@table.method(
    Method.NODE_RUNNER_INVENTORY_UPDATE,
    role="node",
    advertise=False,
    params=NodeRunnerInventoryUpdateParams,
    check=False,
)
async def node_runner_inventory_update(gw: NodeRoleServices, peer: Peer, params: Any) -> Any:
    """``node.runnerInventory.update {protocolFeatures, workerHost?}``: whether a node host
    offers worker sessions (kept for this connection; this gateway places none). Read by
    hand, as the reference: the declaration is judged whole (:func:`parse_runner_declaration`)."""
    declaration = parse_runner_declaration(
        NodeRunnerInventoryUpdateParams.lenient(params).properties()
    )
    if declaration is None:
        raise invalid_request("invalid node runner inventory")
    node_id = (peer.device_id or "").strip()
    client = peer.client
    if (
        not node_id
        or gw.hub.nodes.get(node_id) is not peer
        or client.get("id") not in NODE_WORKER_HOST_CLIENT_IDS
        or client.get("mode") != "node"
    ):
        raise invalid_request("unknown nodeId")
    features = declaration["protocolFeatures"]
    peer.inventory.runner = declaration if features else None
    if len(features) == 1 and features[0] != NODE_WORKER_SUPERVISOR_FEATURE:
        raise invalid_request(runner_update_required(node_id))
    if gw.nodes.surface_pending(peer):
        pending = gw.nodes.pending_surface(node_id)
        message = (
            "node capability surface is awaiting operator approval; run "
            f"`openclaw nodes approve {pending.request_id}` (see `openclaw nodes pending`), "
            "then this node retries automatically"
            if pending is not None
            else "node runner inventory publication is not current; retry after pairing completes"
        )
        raise MethodError(error_shape(ErrorCode.UNAVAILABLE, message))
    return {"nodeId": node_id}


@table.method(Method.NODE_PENDING_PULL, role="node", params=NodePendingPullParams)
async def node_pending_pull(gw: NodeRoleServices, peer: Peer, params: Any) -> Any:
    """``node.pending.pull``: the node's queued actions (none are queued here:
    ``{nodeId, actions: []}``, the reference's shape); PAIRING_CHANGED while the surface
    awaits approval."""
    if gw.nodes.surface_pending(peer):
        raise pairing_changed()
    return {"nodeId": peer.device_id, "actions": []}


@table.method(Method.NODE_PENDING_DRAIN, role="node", params=NodePendingDrainParams)
async def node_pending_drain(gw: NodeRoleServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pending.drain {maxItems?}``: no work is queued here, so the answer holds only
    the baseline status request the reference adds to every drain without one
    (``baseline-status``, never removed, revision 0)."""
    if gw.nodes.surface_pending(peer):
        raise pairing_changed("pending work")
    baseline = {
        "id": "baseline-status",
        "type": "status.request",
        "priority": "default",
        "createdAtMs": now_ms(),
        "expiresAtMs": None,
    }
    return {"nodeId": peer.device_id, "revision": 0, "items": [baseline], "hasMore": False}


@table.method(Method.NODE_PENDING_ACK, role="node", params=NodePendingAckParams)
async def node_pending_ack(gw: NodeRoleServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pending.ack {ids}``: ``{nodeId, ackedIds, remainingCount}`` with the ids
    trimmed and each once, as the reference answers; nothing is queued here, so nothing
    remains. PAIRING_CHANGED while the node's surface awaits approval."""
    node_id = _caller_node_id(peer)
    if gw.nodes.surface_pending(peer):
        raise pairing_changed()
    acked = list(dict.fromkeys(text for text in (i.strip() for i in params["ids"]) if text))
    return {"nodeId": node_id, "ackedIds": acked, "remainingCount": 0}
