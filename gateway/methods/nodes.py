"""The operator's ``node.*`` methods: listing, describing, renaming and invoking nodes, and
answering their command-surface pairing.

The node role's own methods (results, events, self-reports) are in
:mod:`gateway.methods.node_role`.
"""

from __future__ import annotations

from typing import Any, Protocol

from gateway.device_pairing import DevicePairing
from gateway.errors import MethodError, invalid_request
from gateway.hub import Hub, now_ms
from gateway.methods.table import MethodTable
from gateway.nodes.catalog import NodeCatalog, node_request_wire
from gateway.peer import Peer
from gateway.scopes import (
    PAIRING,
    READ,
    missing_scope_error,
    node_invoke_scope,
    scope_satisfied,
)
from gateway.state import DeviceRegistry, NodePairRequest, NodeSurfaces
from openclaw_desktop.protocol import EventName, Method
from openclaw_desktop.protocol.methods.nodes import (
    NodeDescribeParams,
    NodeInvokeParams,
    NodeListParams,
    NodePairListParams,
    NodePairRemoveParams,
    NodePairRequestParams,
    NodeRenameParams,
)

__all__ = ["NodeServices", "table"]

table = MethodTable()
"""The methods this module declares."""


class NodeServices(Protocol):
    """What the operator's ``node.*`` methods use of the gateway."""

    @property
    def hub(self) -> Hub: ...
    @property
    def nodes(self) -> NodeCatalog: ...
    @property
    def pairing(self) -> DevicePairing: ...
    @property
    def node_surfaces(self) -> NodeSurfaces:
        """The stored node command surfaces and their pending requests (``nodes`` serves them)."""

    @property
    def device_registry(self) -> DeviceRegistry:
        """The stored paired devices, whose node role ``node.pair.remove`` takes away."""


@table.method(Method.NODE_LIST, scope=READ, params=NodeListParams)
async def node_list(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.list``: paired and connected nodes."""
    return {"ts": now_ms(), "nodes": gw.nodes.entries(peer)}


@table.method(Method.NODE_DESCRIBE, scope=READ, params=NodeDescribeParams)
async def node_describe(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.describe {nodeId}``."""
    node_id = params["nodeId"]
    if not node_id.strip():
        raise invalid_request("nodeId required")
    entry = gw.nodes.entry(node_id, peer)
    if entry is None:
        raise invalid_request("unknown nodeId")
    return {"ts": now_ms(), **entry}


@table.method(Method.NODE_RENAME, scope=PAIRING, params=NodeRenameParams)
async def node_rename(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.rename {nodeId, displayName}``."""
    node_id, name = params["nodeId"], params["displayName"]
    caller = peer.managing_device_id
    if caller is not None and caller != node_id.strip() and "operator.admin" not in peer.scopes:
        # As the real gateway: a device-token session renames only its own node.
        raise invalid_request("node rename denied")
    if not name.strip():
        raise invalid_request("displayName required")
    renamed = gw.node_surfaces.rename(node_id, name.strip())
    if renamed is None:  # only nodes with an approved surface have a name of their own
        raise invalid_request("unknown nodeId")
    return {"nodeId": node_id, "displayName": renamed.display_name}


@table.method(Method.NODE_INVOKE, scope=node_invoke_scope, params=NodeInvokeParams)
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


@table.method(Method.NODE_PAIR_LIST, scope=PAIRING, params=NodePairListParams)
async def node_pair_list(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.list``."""
    now = now_ms()
    pending = [node_request_wire(r) for r in gw.node_surfaces.list_pending(now)]
    paired = [s.to_wire() for s in gw.node_surfaces.list_approved()]
    only = None if "operator.admin" in peer.scopes else peer.managing_device_id
    if only is not None:  # as the real gateway: a device-token session sees its own node only
        pending = [r for r in pending if str(r.get("nodeId", "")).strip() == only]
        paired = [n for n in paired if str(n.get("nodeId", "")).strip() == only]
    return {"pending": pending, "paired": paired}


@table.method(Method.NODE_PAIR_APPROVE, scope=PAIRING, params=NodePairRequestParams)
async def node_pair_approve(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.approve {requestId}``: needs the request's approver scopes."""
    request_id: str = params["requestId"]
    request = gw.node_surfaces.get(request_id, now_ms())
    _check_surface_ownership(peer, request, "approval")
    if request is None:
        raise invalid_request("unknown requestId")
    for scope in request.required_approve_scopes:
        if not scope_satisfied(scope, peer.scopes):
            raise MethodError(missing_scope_error(scope, list(request.required_approve_scopes)))
    return gw.nodes.resolve_surface(request_id, approved=True)


@table.method(Method.NODE_PAIR_REJECT, scope=PAIRING, params=NodePairRequestParams)
async def node_pair_reject(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.reject {requestId}``."""
    request_id: str = params["requestId"]
    request = gw.node_surfaces.get(request_id, now_ms())
    _check_surface_ownership(peer, request, "rejection")
    if request is None:
        raise invalid_request("unknown requestId")
    return gw.nodes.resolve_surface(request_id, approved=False)


@table.method(Method.NODE_PAIR_REMOVE, scope=PAIRING, params=NodePairRemoveParams)
async def node_pair_remove(gw: NodeServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``node.pair.remove {nodeId}``."""
    node_id = params["nodeId"].strip()
    device = gw.device_registry.get(node_id)
    # As the real gateway: without operator.admin a device-token session removes no node
    # role, its own device's included (a node role is managed by admins only).
    if (
        device is not None
        and "node" in device.roles
        and peer.managing_device_id is not None
        and "operator.admin" not in peer.scopes
    ):
        raise invalid_request("node pairing removal denied")
    removed = gw.node_surfaces.remove(node_id)
    removed = gw.device_registry.remove_role(node_id, "node") is not None or removed
    target = gw.hub.nodes.get(node_id)
    if target is not None:
        target.commands = []
    if not removed:
        raise invalid_request("unknown nodeId")
    gw.hub.broadcast(
        EventName.NODE_PAIR_RESOLVED,
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
