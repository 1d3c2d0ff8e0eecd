"""``node.*`` methods: listing, describing, renaming, invoking, surface pairing, node RPCs
(with the self-reports of :mod:`gateway.nodes.inventory`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from gateway.device_pairing import DevicePairing
from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.hub import Hub, now_ms
from gateway.methods.closed import schema_checked
from gateway.methods.table import MethodTable
from gateway.nodes.catalog import NodeCatalog, node_request_wire
from gateway.nodes.inventory import (
    NODE_HOST_STATS_EVENT,
    NODE_PLUGIN_TOOLS_UPDATE_PARAMS_SCHEMA,
    NODE_SKILLS_UPDATE_PARAMS_SCHEMA,
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
from gateway.scopes import (
    PAIRING,
    READ,
    missing_scope_error,
    node_invoke_scope,
    scope_satisfied,
)
from gateway.state import GatewayState, NodePairRequest
from openclaw_desktop.protocol import ErrorCode, error_shape
from openclaw_desktop.protocol.methods.nodes import (
    NodeDescribeParams,
    NodeEventParams,
    NodeInvokeParams,
    NodeInvokeProgressParams,
    NodeListParams,
    NodePairListParams,
    NodePairRemoveParams,
    NodePairRequestParams,
    NodeRenameParams,
)

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.talk.service import TalkService

__all__ = ["NodeServices", "table"]

table = MethodTable()
"""The methods this module declares."""


class NodeServices(Protocol):
    """What the ``node.*`` methods use of the gateway."""

    @property
    def state(self) -> GatewayState: ...
    @property
    def hub(self) -> Hub: ...
    @property
    def router(self) -> InvokeRouter: ...
    @property
    def nodes(self) -> NodeCatalog: ...
    @property
    def pairing(self) -> DevicePairing: ...
    @property
    def chat(self) -> ChatService | None: ...
    async def talk_service(self) -> TalkService: ...


def _obj(method: str, params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params(method, "must be object")
    return params


#: The largest ``node.invoke.progress`` chunk in UTF-8 bytes (``MAX_PROGRESS_CHUNK_BYTES``).
MAX_PROGRESS_CHUNK_BYTES = 16384


@table.method("node.list", scope=READ, params=NodeListParams)
async def node_list(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.list``: paired and connected nodes."""
    return {"ts": now_ms(), "nodes": gw.nodes.entries(peer)}


@table.method("node.describe", scope=READ, params=NodeDescribeParams)
async def node_describe(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.describe {nodeId}``."""
    node_id = params["nodeId"]
    if not node_id.strip():
        raise invalid_request("nodeId required")
    entry = gw.nodes.entry(node_id, peer)
    if entry is None:
        raise invalid_request("unknown nodeId")
    return {"ts": now_ms(), **entry}


@table.method("node.rename", scope=PAIRING, params=NodeRenameParams)
async def node_rename(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.rename {nodeId, displayName}``."""
    node_id, name = params["nodeId"], params["displayName"]
    caller = peer.managing_device_id
    if caller is not None and caller != node_id.strip() and "operator.admin" not in peer.scopes:
        # As the real gateway: a device-token session renames only its own node.
        raise invalid_request("node rename denied")
    if not name.strip():
        raise invalid_request("displayName required")
    renamed = gw.state.nodes.rename(node_id, name.strip())
    if renamed is None:  # only nodes with an approved surface have a name of their own
        raise invalid_request("unknown nodeId")
    return {"nodeId": node_id, "displayName": renamed.display_name}


@table.method("node.invoke", scope=node_invoke_scope, params=NodeInvokeParams)
async def node_invoke(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.invoke {nodeId, command, params?, timeoutMs?, idempotencyKey}``: the command
    run on a connected node (:class:`~gateway.nodes.invoker.NodeInvoker`, the agent's node
    tools' path too)."""
    return await gw.nodes.invoker.invoke(
        params["nodeId"],
        params["command"],
        params.get("params"),
        timeout_ms=params.get("timeoutMs"),  # 1000.0 arrives as 1000 (the declared check)
        idempotency_key=params["idempotencyKey"],
    )


@table.method("node.invoke.result", role="node")
async def node_invoke_result(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.invoke.result`` (node -> gateway)."""
    p = _obj("node.invoke.result", params)
    for name in ("id", "nodeId", "ok"):
        if name not in p:
            raise invalid_params("node.invoke.result", f"must have required property '{name}'")
    try:
        return gw.router.on_result(peer, p)
    except InvokeError as exc:
        raise MethodError(exc.shape) from None


@table.method("node.invoke.progress", role="node", params=NodeInvokeProgressParams)
async def node_invoke_progress(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.invoke.progress {invokeId, nodeId, seq, chunk}`` (node -> gateway): one chunk
    of a running invoke's output, as the real gateway takes it (closed params, ``nodeId
    mismatch``, ``progress chunk too large`` over 16 KiB of UTF-8), answered ``{ok,
    ignored}``: ignored unless the invoke's caller listens (the agent's tool call)."""
    p = params
    caller = peer.device_id or peer.client.get("id")
    if caller and p["nodeId"] != caller:
        raise invalid_request("nodeId mismatch")
    if len(p["chunk"].encode("utf-8", errors="surrogatepass")) > MAX_PROGRESS_CHUNK_BYTES:
        raise invalid_request("progress chunk too large")
    return {"ok": True, "ignored": not gw.router.on_progress(peer, p)}


@table.method("node.event", role="node", params=NodeEventParams)
async def node_event(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.event {event, payload?, payloadJSON?}``: PAIRING_CHANGED, whatever the event,
    from a node whose surface awaits approval or from a replaced connection (as the real
    gateway, which takes events only from a node's current, approved connection)."""
    p = params
    event: str = p["event"]
    node_id = peer.device_id
    if node_id is None or gw.hub.nodes.get(node_id) is not peer or gw.nodes.surface_pending(peer):
        raise _pairing_changed()
    if event == "node.presence.alive":
        if peer.device_id:
            gw.state.devices.touch(peer.device_id, now_ms(), peer.remote_ip)
        return {"ok": True, "event": event, "handled": True, "reason": "persisted"}
    if event == "voice.transcript":
        return (await gw.talk_service()).voice_transcripts.handle(gw.chat, peer, p)
    if event == NODE_HOST_STATS_EVENT:
        return _host_stats(gw, peer, p)
    return {"ok": True, "event": event, "handled": False, "reason": "unsupported_event"}


def _payload_object(p: dict[str, Any]) -> Any:
    """The event's payload as the real gateway reads it: ``payloadJSON`` when it is a
    string, else ``payload`` (re-encoded); None unless it decodes to a JSON object."""
    if isinstance(p.get("payloadJSON"), str):
        text = p["payloadJSON"]
    elif "payload" in p:
        text = json.dumps(p["payload"])
    else:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _host_stats(gw: NodeServices, peer: Peer, p: dict[str, Any]) -> dict[str, Any]:
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
    gw.state.nodes.record_host_stats(node_id, stats)
    gw.hub.broadcast("node.hostStats", {"nodeId": node_id, "hostStats": dict(stats)})
    return {"ok": True, "event": NODE_HOST_STATS_EVENT, "handled": True, "reason": "updated"}


def _reporting_node(gw: NodeServices, peer: Peer) -> str:
    """The calling node's id (its device, else its client id) when this connection is the
    node's current one, else ``nodeId required`` / ``unknown nodeId`` as the real gateway."""
    node_id = (peer.device_id or str(peer.client.get("id") or "")).strip()
    if not node_id:
        raise invalid_request("nodeId required")
    if gw.hub.nodes.get(node_id) is not peer:
        raise invalid_request("unknown nodeId")
    return node_id


@table.method("node.pluginTools.update", role="node")
async def node_plugin_tools_update(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.pluginTools.update {tools}``: the node's plugin/MCP tools (for this connection);
    answered with those its approved commands admit."""
    p = schema_checked("node.pluginTools.update", NODE_PLUGIN_TOOLS_UPDATE_PARAMS_SCHEMA, params)
    node_id = _reporting_node(gw, peer)
    peer.inventory.declared_tools = [dict(tool) for tool in p["tools"]]
    return {"nodeId": node_id, "tools": plugin_tools_for(p["tools"], peer.commands)}


@table.method("node.skills.update", role="node")
async def node_skills_update(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.skills.update {skills}``: the node's skills (for this connection), normalized."""
    p = schema_checked("node.skills.update", NODE_SKILLS_UPDATE_PARAMS_SCHEMA, params)
    node_id = _reporting_node(gw, peer)
    peer.inventory.skills = normalize_skills(p["skills"])
    return {"nodeId": node_id, "skills": [dict(skill) for skill in peer.inventory.skills]}


@table.method("node.pluginSurface.refresh", role="node")
async def node_plugin_surface_refresh(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.pluginSurface.refresh {surface, observedUrl?}``: this gateway hosts no plugin
    surfaces, so every one is unavailable."""
    surface = params.get("surface") if isinstance(params, dict) else None
    name = surface.strip() if isinstance(surface, str) else ""
    if not name:
        raise invalid_request("surface required")
    raise MethodError(error_shape(ErrorCode.UNAVAILABLE, f"{name} plugin surface unavailable"))


@table.method("node.runnerInventory.update", role="node", advertise=False)
async def node_runner_inventory_update(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.runnerInventory.update {protocolFeatures, workerHost?}``: whether a node host
    offers worker sessions (kept for this connection; this gateway places none)."""
    declaration = parse_runner_declaration(params)
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


def _pairing_changed() -> MethodError:
    return MethodError(
        error_shape(
            ErrorCode.UNAVAILABLE,
            "node pairing changed while invocation was active",
            {"code": "PAIRING_CHANGED"},
            retryable=True,
        )
    )


@table.method("node.pending.pull", role="node")
async def node_pending_pull(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.pending.pull``: the node's queued actions (none are queued here:
    ``{nodeId, actions: []}``, the reference's shape); PAIRING_CHANGED while the surface
    awaits approval."""
    if gw.nodes.surface_pending(peer):
        raise _pairing_changed()
    return {"nodeId": peer.device_id, "actions": []}


@table.method("node.pending.drain", role="node")
async def node_pending_drain(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.pending.drain``."""
    if gw.nodes.surface_pending(peer):
        raise MethodError(
            error_shape(
                ErrorCode.UNAVAILABLE,
                "node pairing changed while pending work was active",
                {"code": "PAIRING_CHANGED"},
                retryable=True,
            )
        )
    return {"nodeId": peer.device_id, "revision": 0, "items": [], "hasMore": False}


@table.method("node.pending.ack", role="node")
async def node_pending_ack(gw: NodeServices, peer: Peer, params: Any) -> Any:
    """``node.pending.ack``."""
    return {"ok": True}


@table.method("node.pair.list", scope=PAIRING, params=NodePairListParams)
async def node_pair_list(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.list``."""
    now = now_ms()
    pending = [node_request_wire(r) for r in gw.state.nodes.list_pending(now)]
    paired = [s.to_wire() for s in gw.state.nodes.list_approved()]
    only = None if "operator.admin" in peer.scopes else peer.managing_device_id
    if only is not None:  # as the real gateway: a device-token session sees its own node only
        pending = [r for r in pending if str(r.get("nodeId", "")).strip() == only]
        paired = [n for n in paired if str(n.get("nodeId", "")).strip() == only]
    return {"pending": pending, "paired": paired}


@table.method("node.pair.approve", scope=PAIRING, params=NodePairRequestParams)
async def node_pair_approve(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.approve {requestId}``: needs the request's approver scopes."""
    request_id: str = params["requestId"]
    request = gw.state.nodes.get(request_id, now_ms())
    _check_surface_ownership(peer, request, "approval")
    if request is None:
        raise invalid_request("unknown requestId")
    for scope in request.required_approve_scopes:
        if not scope_satisfied(scope, peer.scopes):
            raise MethodError(missing_scope_error(scope, list(request.required_approve_scopes)))
    return gw.nodes.resolve_surface(request_id, approved=True)


@table.method("node.pair.reject", scope=PAIRING, params=NodePairRequestParams)
async def node_pair_reject(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.reject {requestId}``."""
    request_id: str = params["requestId"]
    request = gw.state.nodes.get(request_id, now_ms())
    _check_surface_ownership(peer, request, "rejection")
    if request is None:
        raise invalid_request("unknown requestId")
    return gw.nodes.resolve_surface(request_id, approved=False)


@table.method("node.pair.remove", scope=PAIRING, params=NodePairRemoveParams)
async def node_pair_remove(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.remove {nodeId}``."""
    node_id = params["nodeId"].strip()
    device = gw.state.devices.get(node_id)
    # As the real gateway: without operator.admin a device-token session removes no node
    # role, its own device's included (a node role is managed by admins only).
    if (
        device is not None
        and "node" in device.roles
        and peer.managing_device_id is not None
        and "operator.admin" not in peer.scopes
    ):
        raise invalid_request("node pairing removal denied")
    removed = gw.state.nodes.remove(node_id)
    removed = gw.state.devices.remove_role(node_id, "node") is not None or removed
    target = gw.hub.nodes.get(node_id)
    if target is not None:
        target.commands = []
    if not removed:
        raise invalid_request("unknown nodeId")
    gw.hub.broadcast(
        "node.pair.resolved",
        {"requestId": "", "nodeId": node_id, "decision": "removed", "ts": now_ms()},
    )
    # As the real gateway: the node's sessions are closed (4001) after this answer; it
    # comes back as a new node whose command surface awaits approval.
    gw.pairing.disconnect(node_id, "device removed", role="node", code=4001)
    return {"nodeId": node_id}


def _check_surface_ownership(peer: Peer, request: NodePairRequest | None, action: str) -> None:
    """``node.pair.approve``/``reject`` as the real gateway: without operator.admin a
    device-token session answers only its own node's surface (``node pairing <action>
    denied``, also for an unknown request)."""
    caller = peer.managing_device_id
    if caller is None or "operator.admin" in peer.scopes:
        return
    if request is None or request.node_id.strip() != caller:
        raise invalid_request(f"node pairing {action} denied")
