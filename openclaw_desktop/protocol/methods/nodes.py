"""``node.*`` (the operator's node methods and the node role's own)
params, in the reference's property order.

``node.pluginSurface.refresh`` and ``node.runnerInventory.update`` the reference serves
without a params schema and reads by hand (:mod:`openclaw_desktop.protocol.methods.lenient`):
the first is ``plugin.surface.refresh`` under another name (one handler on the reference),
so it shares that model; the second's declaration is read by the gateway's runner rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import ConfigDict, Field

from openclaw_desktop.protocol.base import ClosedModel, OpenModel, WireModel
from openclaw_desktop.protocol.methods.control_ui import PluginSurfaceRefreshParams
from openclaw_desktop.protocol.methods.lenient import LenientParams
from openclaw_desktop.protocol.methods.schema import RECORD

__all__ = [
    "PARAMS",
    "NodeDescribeParams",
    "NodeError",
    "NodeEventParams",
    "NodeInvokeParams",
    "NodeInvokeProgressParams",
    "NodeInvokeResultParams",
    "NodeListParams",
    "NodePairListParams",
    "NodePairRemoveParams",
    "NodePairRequestParams",
    "NodePendingAckParams",
    "NodePendingDrainParams",
    "NodePendingPullParams",
    "NodePluginToolDescriptor",
    "NodePluginToolMcp",
    "NodePluginToolsUpdateParams",
    "NodeRenameParams",
    "NodeRunnerInventoryUpdateParams",
    "NodeSkillDescriptor",
    "NodeSkillsUpdateParams",
    "VoiceTranscriptPayload",
    "node_event_payload",
]

NonEmpty = Annotated[str, Field(min_length=1)]
#: A plugin tool's name (``NodePluginToolNameSchema``).
PLUGIN_TOOL_NAME_PATTERN = "^[A-Za-z][A-Za-z0-9_-]{0,63}$"
#: A skill's name (``NodeSkillNameSchema``): lower-case words joined by single hyphens.
SKILL_NAME_PATTERN = "^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$"
#: The most skills one ``node.skills.update`` carries.
MAX_NODE_SKILLS = 64
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


class NodeError(ClosedModel):
    """``{code?, message?}`` of a failed invoke (each non-empty when given)."""

    code: NonEmpty | None = None
    message: NonEmpty | None = None


class NodeInvokeResultParams(ClosedModel):
    """``node.invoke.result`` (node -> gateway): the answer to one ``node.invoke.request``
    (the reference drops a null ``payloadJSON``/``error`` and moves a non-string
    ``payloadJSON`` to ``payload`` before it checks them: the gateway's handler does too)."""

    id: NonEmpty
    node_id: NonEmpty
    ok: bool
    payload: Any = None
    payload_json: Annotated[str | None, Field(alias="payloadJSON")] = None
    error: NodeError | None = None


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


class VoiceTranscriptPayload(OpenModel):
    """The payload of ``node.event voice.transcript`` (node -> gateway): what the user said
    and, optionally, the session it is for (the main one when absent). Read as it came
    (any other property is kept; ``sessionKey`` only by its wire name): :meth:`transcript`
    and :meth:`session` check the two."""

    model_config = ConfigDict(populate_by_name=False)

    #: The reference's bound on the transcript text.
    MAX_TEXT_CHARS: ClassVar[int] = 20_000

    text: Any = None
    session_key: Any = None

    def transcript(self) -> str:
        """The text as said (not stripped).

        Raises:
            ValueError: no non-blank text, or a longer one than :attr:`MAX_TEXT_CHARS`
                (the message is the gateway's answer).
        """
        text = self.text
        if not isinstance(text, str) or not text.strip():
            raise ValueError("voice.transcript: text is required")
        if len(text) > self.MAX_TEXT_CHARS:
            raise ValueError(f"voice.transcript: text is longer than {self.MAX_TEXT_CHARS}")
        return text

    def session(self) -> str | None:
        """The session key, None when absent.

        Raises:
            ValueError: a session key that is not a non-blank string.
        """
        key = self.session_key
        if key is not None and (not isinstance(key, str) or not key.strip()):
            raise ValueError("voice.transcript: sessionKey must be a non-empty string")
        return key


def node_event_payload(params: Mapping[str, Any]) -> Any:
    """A ``node.event``'s payload as the reference reads it: ``payloadJSON`` parsed when it
    is a string (an empty one is no payload), else ``payload`` (None when neither came).

    Raises:
        ValueError: ``payloadJSON`` is not valid JSON.
    """
    text = params.get("payloadJSON")
    if isinstance(text, str):
        return json.loads(text) if text else None
    return params.get("payload")


class NodePluginToolMcp(ClosedModel):
    """The MCP server and tool a node's plugin tool stands for."""

    server: NonEmpty
    tool: NonEmpty


class NodePluginToolDescriptor(ClosedModel):
    """One agent-visible plugin/MCP tool a node offers (``NodePluginToolDescriptorSchema``)."""

    plugin_id: NonEmpty
    name: Annotated[str, Field(min_length=1, max_length=64, pattern=PLUGIN_TOOL_NAME_PATTERN)]
    description: NonEmpty
    parameters: Annotated[dict[str, Any] | None, RECORD] = None
    command: NonEmpty | None = None
    mcp: NodePluginToolMcp | None = None


class NodePluginToolsUpdateParams(ClosedModel):
    """``node.pluginTools.update`` (node -> gateway): the node's whole tool catalog."""

    tools: list[NodePluginToolDescriptor]


class NodeSkillDescriptor(ClosedModel):
    """One agent-visible skill a node offers (``NodeSkillDescriptorSchema``)."""

    name: Annotated[str, Field(min_length=1, max_length=64, pattern=SKILL_NAME_PATTERN)]
    description: Annotated[str, Field(min_length=1, max_length=1024)]
    content: Annotated[str, Field(min_length=1, max_length=65536)]


class NodeSkillsUpdateParams(ClosedModel):
    """``node.skills.update`` (node -> gateway): the node's whole skill catalog."""

    skills: Annotated[list[NodeSkillDescriptor], Field(max_length=MAX_NODE_SKILLS)]


class NodePendingPullParams(NodeListParams):
    """``node.pending.pull`` (node -> gateway): no params (the reference checks them with
    ``NodeListParamsSchema``)."""


class NodePendingDrainParams(ClosedModel):
    """``node.pending.drain`` (node -> gateway): at most ``maxItems`` (1 to 10) queued items."""

    max_items: Annotated[int | None, Field(ge=1, le=10)] = None


class NodePendingAckParams(ClosedModel):
    """``node.pending.ack`` (node -> gateway): the queued actions the node has consumed."""

    ids: Annotated[list[NonEmpty], Field(min_length=1)]


class NodePairListParams(ClosedModel):
    """``node.pair.list``: no params."""


class NodePairRequestParams(ClosedModel):
    """``node.pair.approve`` / ``node.pair.reject``: a pending surface request."""

    request_id: NonEmpty


class NodePairRemoveParams(ClosedModel):
    """``node.pair.remove``: a paired node."""

    node_id: NonEmpty


class NodeRunnerInventoryUpdateParams(LenientParams):
    """``node.runnerInventory.update``: any params served (no schema on the reference); the
    declaration ``{protocolFeatures, workerHost?}`` (or a retired dialect's ``workerRuns``)
    is judged whole, by which properties came and their exact values, so
    :meth:`properties` hands the rules the params as they came."""

    protocol_features: Any = None
    worker_host: Any = None
    worker_runs: Any = None

    def properties(self) -> dict[str, Any]:
        """Every property given, by wire name, ``null`` included, and any other."""
        fields = type(self).model_fields
        given = {
            fields[name].alias or name: getattr(self, name)
            for name in self.model_fields_set
            if name in fields  # the set holds the extra properties too
        }
        return {**given, **(self.model_extra or {})}


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "node.list": NodeListParams,
    "node.describe": NodeDescribeParams,
    "node.rename": NodeRenameParams,
    "node.invoke": NodeInvokeParams,
    "node.invoke.result": NodeInvokeResultParams,
    "node.invoke.progress": NodeInvokeProgressParams,
    "node.event": NodeEventParams,
    "node.pluginTools.update": NodePluginToolsUpdateParams,
    "node.skills.update": NodeSkillsUpdateParams,
    "node.pending.pull": NodePendingPullParams,
    "node.pending.drain": NodePendingDrainParams,
    "node.pending.ack": NodePendingAckParams,
    "node.pluginSurface.refresh": PluginSurfaceRefreshParams,
    "node.runnerInventory.update": NodeRunnerInventoryUpdateParams,
    "node.pair.list": NodePairListParams,
    "node.pair.approve": NodePairRequestParams,
    "node.pair.reject": NodePairRequestParams,
    "node.pair.remove": NodePairRemoveParams,
}
