"""``node.*`` (the operator's node methods and the node role's own)
params, in the reference's property order.

Not modelled here (their schemas are not property schemas this module can derive, so the
gateway checks them itself): ``node.invoke.result`` (its ``error`` is a nested closed object),
``node.pluginTools.update`` / ``node.skills.update`` (arrays of closed objects, checked by
:mod:`gateway.nodes.inventory`), and the node methods whose answer comes from a handler rule
(``node.pluginSurface.refresh``, ``node.runnerInventory.update``, ``node.pending.*``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, WireModel

__all__ = [
    "PARAMS",
    "NodeDescribeParams",
    "NodeEventParams",
    "NodeInvokeParams",
    "NodeInvokeProgressParams",
    "NodeInvokeResultParams",
    "NodeListParams",
    "NodePairListParams",
    "NodePairRemoveParams",
    "NodePairRequestParams",
    "NodeRenameParams",
]

NonEmpty = Annotated[str, Field(min_length=1)]
#: The largest ``node.invoke.progress`` chunk (``MAX_PROGRESS_CHUNK_BYTES``; the schema
#: bounds its characters, the gateway its UTF-8 bytes too).
MAX_PROGRESS_CHUNK = 16384


class NodeListParams(ClosedModel):
    """``node.list``: no params (``NodeListParamsSchema``)."""


class NodeDescribeParams(ClosedModel):
    """``node.describe``: one node (a blank id is ``nodeId required``: the handler's rule)."""

    node_id: NonEmpty


class NodeRenameParams(ClosedModel):
    """``node.rename``: a paired node's new name (blank: ``displayName required``, the
    handler's rule)."""

    node_id: NonEmpty
    display_name: NonEmpty


class NodeInvokeParams(ClosedModel):
    """``node.invoke``: run ``command`` on a node (``params`` are the command's own, passed
    on as they are; ``turnSource*`` say which chat turn asked, and are taken, not acted on)."""

    node_id: NonEmpty
    command: NonEmpty
    params: Any = None
    timeout_ms: Annotated[int | None, Field(ge=0)] = None
    idempotency_key: NonEmpty
    session_key: NonEmpty | None = None
    turn_source_channel: str | None = None
    turn_source_to: str | None = None
    turn_source_account_id: str | None = None
    turn_source_thread_id: str | float | None = None


class NodeInvokeResultParams(ClosedModel):
    """``node.invoke.result`` (node -> gateway), as a node builds it (the gateway checks
    the required properties itself: see the module docstring)."""

    id: NonEmpty
    node_id: NonEmpty
    ok: bool
    payload: Any = None
    payload_json: Annotated[str | None, Field(alias="payloadJSON")] = None
    error: dict[str, Any] | None = None


class NodeInvokeProgressParams(ClosedModel):
    """``node.invoke.progress`` (node -> gateway): one chunk of a running invoke's output
    (``nodeId mismatch`` and the UTF-8 byte bound are the handler's rules)."""

    invoke_id: NonEmpty
    node_id: NonEmpty
    seq: Annotated[int, Field(ge=0)]
    chunk: Annotated[str, Field(max_length=MAX_PROGRESS_CHUNK)]


class NodeEventParams(ClosedModel):
    """``node.event`` (node -> gateway): an event and its payload (``payloadJSON``, when a
    string, wins over ``payload``)."""

    event: NonEmpty
    payload: Any = None
    payload_json: Annotated[str | None, Field(alias="payloadJSON")] = None


class NodePairListParams(ClosedModel):
    """``node.pair.list``: no params."""


class NodePairRequestParams(ClosedModel):
    """``node.pair.approve`` / ``node.pair.reject``: a pending surface request."""

    request_id: NonEmpty


class NodePairRemoveParams(ClosedModel):
    """``node.pair.remove``: a paired node."""

    node_id: NonEmpty


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "node.list": NodeListParams,
    "node.describe": NodeDescribeParams,
    "node.rename": NodeRenameParams,
    "node.invoke": NodeInvokeParams,
    "node.invoke.progress": NodeInvokeProgressParams,
    "node.event": NodeEventParams,
    "node.pair.list": NodePairListParams,
    "node.pair.approve": NodePairRequestParams,
    "node.pair.reject": NodePairRequestParams,
    "node.pair.remove": NodePairRemoveParams,
}
