"""Exec and plugin approvals: the pending lists (this gateway's agent has no exec or plugin
tool that asks, so none are ever pending), the gateway host's exec approval policy, and a
node's policy through the node's own ``system.execApprovals.get/set`` (as the reference)."""

from __future__ import annotations

import hashlib
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.hub import Hub
from gateway.methods.closed import derived_schema, schema_problems
from gateway.methods.table import MethodTable
from gateway.nodes.invoke import InvokeError, InvokeRouter
from gateway.peer import Peer
from gateway.scopes import ADMIN, APPROVALS
from openclaw_desktop.protocol import ErrorCode, Method, error_shape
from openclaw_desktop.protocol.methods import (
    ApprovalListParams,
    EmptyParams,
    ExecApprovalsNodeGetParams,
    ExecApprovalsNodeSetParams,
)

if TYPE_CHECKING:
    from gateway.config import GatewayConfig

__all__ = ["APPROVALS", "ApprovalsServices", "table"]

table = MethodTable()
"""The methods this module declares."""

#: How long a node has to answer its policy read or write.
NODE_TIMEOUT_MS = 30_000


class ApprovalsServices(Protocol):
    """What the approval methods use of the gateway: its settings (where the policy file
    would be), the connected nodes and the router that invokes them."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def hub(self) -> Hub: ...
    @property
    def router(self) -> InvokeRouter: ...


# The pending lists read no params: the reference serves whatever they hold (a list, a
# string), so their open model is declared unchecked.
@table.method(Method.EXEC_APPROVAL_LIST, scope=APPROVALS, params=ApprovalListParams, check=False)
async def exec_approval_list(gw: ApprovalsServices, peer: Peer, params: Any) -> Any:
    """``exec.approval.list``: the pending exec approvals (none: the agent here never asks)."""
    return []


@table.method(Method.PLUGIN_APPROVAL_LIST, scope=APPROVALS, params=ApprovalListParams, check=False)
async def plugin_approval_list(gw: ApprovalsServices, peer: Peer, params: Any) -> Any:
    """``plugin.approval.list``: the pending plugin approvals (none: there are no plugins)."""
    return []


@table.method(
    Method.OPENCLAW_APPROVAL_LIST, scope=APPROVALS, params=ApprovalListParams, check=False
)
async def openclaw_approval_list(gw: ApprovalsServices, peer: Peer, params: Any) -> Any:
    """``openclaw.approval.list``: the system agent's pending approvals (none here)."""
    return []


@table.method(Method.EXEC_APPROVALS_GET, scope=ADMIN, params=EmptyParams)
async def exec_approvals_get(gw: ApprovalsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``exec.approvals.get``: the gateway host's exec approval policy. This gateway runs no
    command on its host, so there is no policy file and every exec is denied."""
    path = gw.config.state_dir / "exec-approvals.json"
    return {
        "path": str(path),
        "exists": False,
        "hash": "missing:" + hashlib.sha256(b"").hexdigest(),
        "file": {"version": 1, "defaults": {}, "agents": {}},
        "resolvedDefaults": {
            "security": "deny",
            "ask": "off",
            "askFallback": "deny",
            "autoAllowSkills": False,
        },
    }


async def _node_call(gw: ApprovalsServices, node_id: str, command: str, params: Any) -> Any:
    """Run ``command`` on the connected node and give back its payload."""
    target = gw.hub.nodes.get(node_id)
    if target is None:
        raise MethodError(
            error_shape(
                ErrorCode.UNAVAILABLE,
                "NOT_CONNECTED: node not connected",
                {
                    "nodeError": {"code": "NOT_CONNECTED", "message": "node not connected"},
                    "nodeCommandDispatched": False,
                },
            )
        )
    if command not in target.commands:
        raise invalid_request(
            f"node command not allowed: the node (platform: {target.platform}) "
            f'does not support "{command}"',
            {"reason": "command not declared by node", "command": command},
        )
    try:
        result = await gw.router.invoke(
            target,
            command,
            params,
            timeout_ms=NODE_TIMEOUT_MS,
            idempotency_key=str(uuid.uuid4()),
        )
    except InvokeError as exc:
        raise MethodError(exc.shape) from None
    return result.get("payload")


@table.method(Method.EXEC_APPROVALS_NODE_GET, scope=ADMIN, params=ExecApprovalsNodeGetParams)
async def exec_approvals_node_get(gw: ApprovalsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``exec.approvals.node.get {nodeId}``: the node's policy, from the node itself."""
    return await _node_call(gw, p["nodeId"], "system.execApprovals.get", {})


_NODE_SET = Method.EXEC_APPROVALS_NODE_SET
#: ``ExecApprovalsNodeSetParams`` of the reference without its ``oneOf`` (see below).
NODE_SET_SCHEMA: dict[str, Any] = derived_schema(ExecApprovalsNodeSetParams)
_ONE_OF = "must match exactly one schema in oneOf"


def _one_of_problems(params: dict[str, Any]) -> list[str]:
    """What the reference's ``oneOf`` says: ``file`` without ``native``, or ``native`` with
    ``baseHash`` and without ``file`` (each branch's first problem, then the summary)."""
    problems: list[str] = []
    passed = 0
    for required, excluded in ((("file",), "native"), (("native", "baseHash"), "file")):
        missing = [name for name in required if name not in params]
        if missing:
            problems.append(f"must have required property '{missing[0]}'")
        if excluded in params:
            problems.append("must not be valid")
        passed += not missing and excluded not in params
    return [] if passed == 1 else list(dict.fromkeys([*problems, _ONE_OF]))


def _nested_problems(params: dict[str, Any]) -> list[str]:
    """The first required property of ``file`` (``version``) and ``native`` (``rules``);
    the node validates the rest."""
    problems = []
    for name, needed in (("file", "version"), ("native", "rules")):
        value = params.get(name)
        if isinstance(value, dict) and needed not in value:
            problems.append(f"at /{name}: must have required property '{needed}'")
    return problems


@table.method(_NODE_SET, scope=ADMIN, params=ExecApprovalsNodeSetParams, check=False)
async def exec_approvals_node_set(gw: ApprovalsServices, peer: Peer, params: Any) -> Any:
    """``exec.approvals.node.set {nodeId, file, baseHash?}`` (or ``native`` with
    ``baseHash``): written by the node, which validates it.

    Checked here, not declared on the table: the reference's ``oneOf`` and the first
    required property of ``file``/``native`` are not property schemas, and its answer
    joins their problems with the schema's (params that are not an object included).
    """
    if params is not None and not isinstance(params, dict):
        raise invalid_params(_NODE_SET, f"must be object; must not be valid; {_ONE_OF}")
    p: dict[str, Any] = params or {}
    problems = [schema_problems(NODE_SET_SCHEMA, p), *_nested_problems(p), *_one_of_problems(p)]
    if any(problems):
        raise invalid_params(_NODE_SET, "; ".join(x for x in problems if x))
    forwarded = {k: p[k] for k in ("file", "native", "baseHash") if k in p}
    return await _node_call(gw, p["nodeId"], "system.execApprovals.set", forwarded)
