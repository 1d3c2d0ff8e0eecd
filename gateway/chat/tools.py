"""The tools the bundled gateway's agent offers the model: the connected nodes and sessions.

``node_invoke`` goes through the same checks as the ``node.invoke`` method (the gateway's
command policy and the node's declared surface), so a command the user has not allowed stays
out of reach of the model too. Images from ``camera.snap`` / ``screen.snapshot`` come back as
image content, which vision-capable models see.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.chat.providers.base import ToolSpec
from gateway.nodes.progress import INVOKE_PROGRESS

__all__ = [
    "TOOL_TIMEOUT_S",
    "AgentTools",
    "NodeAccess",
    "ToolOutcome",
    "ToolUpdate",
    "tool_title",
]

#: Upper bound of one tool call (a node's own ``timeoutMs`` is shorter).
TOOL_TIMEOUT_S = 90.0
NODE_INVOKE_TIMEOUT_MS = 60_000
_IMAGE_COMMANDS = {"camera.snap": "image/jpeg", "screen.snapshot": None}
_MAX_TEXT = 20_000
#: What a recording needs beyond its length (opening the device, encoding, sending).
_ENCODE_MARGIN_MS = 20_000
#: Hears a running tool call's partial result (the agent's tool ``update`` phase).
ToolUpdate = Callable[[dict[str, Any]], None]


class NodeAccess(Protocol):
    """What the tools need from the gateway."""

    def list_nodes(self) -> list[dict[str, Any]]:
        """Connected nodes: ``{nodeId, displayName, platform, commands}``."""
        ...

    async def invoke(
        self, node_id: str, command: str, params: Any, timeout_ms: int
    ) -> dict[str, Any]:
        """Run a command through policy; returns the operator's ``node.invoke`` result.
        Raises an exception whose ``str`` is the gateway's error text."""
        ...


@dataclass
class ToolOutcome:
    """A tool's answer as transcript content."""

    content: list[dict[str, Any]]
    is_error: bool = False


def _invoke_timeout_ms(params: dict[str, Any]) -> int:
    """A node's time for one command: :data:`NODE_INVOKE_TIMEOUT_MS`, or a recording's
    length and time to encode it (``durationMs``: camera.clip, screen.record), within the
    tool's own bound."""
    duration = params.get("durationMs")
    if isinstance(duration, int | float) and not isinstance(duration, bool) and duration > 0:
        wanted = int(duration) + _ENCODE_MARGIN_MS
        return max(NODE_INVOKE_TIMEOUT_MS, min(wanted, int(TOOL_TIMEOUT_S * 1000) - 5_000))
    return NODE_INVOKE_TIMEOUT_MS


def _text(value: Any) -> list[dict[str, Any]]:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT] + f"\n[… {len(text) - _MAX_TEXT} more characters cut]"
    return [{"type": "text", "text": text}]


class _LiveOutput:
    """A node's streamed output as the tool's partial result, the text so far each time."""

    def __init__(self, on_update: ToolUpdate) -> None:
        self._on_update = on_update
        self._parts: list[str] = []
        self._length = 0

    def __call__(self, chunk: str) -> None:
        if not chunk or self._length > _MAX_TEXT:  # past the bound nothing more is shown
            return
        self._parts.append(chunk)
        self._length += len(chunk)
        self._on_update({"content": _text("".join(self._parts))})


def tool_title(name: str, args: Any) -> str:
    """A short human title for tool cards (``Node invoke camera.snap``)."""
    label = name.replace("_", " ").capitalize()
    if isinstance(args, dict):
        detail = args.get("command") or args.get("node") or args.get("sessionKey")
        if isinstance(detail, str) and detail:
            return f"{label} {detail[:60]}"
    return label


class AgentTools:
    """Tool specs and their execution."""

    def __init__(
        self, nodes: NodeAccess, sessions: Callable[[], Awaitable[list[dict[str, Any]]]]
    ) -> None:
        self._nodes = nodes
        self._sessions = sessions

    def specs(self) -> list[ToolSpec]:
        """What the model is offered."""
        return [
            ToolSpec(
                "nodes_list",
                "List the devices (nodes) connected to this gateway and the commands each offers.",
                {"type": "object", "properties": {}, "additionalProperties": False},
            ),
            ToolSpec(
                "node_invoke",
                "Run a command on a connected node, e.g. camera.snap, screen.snapshot, "
                "system.notify, device.status. Use nodes_list to see what each node offers.",
                {
                    "type": "object",
                    "properties": {
                        "node": {"type": "string", "description": "node id or display name"},
                        "command": {"type": "string"},
                        "params": {"type": "object", "description": "the command's params"},
                    },
                    "required": ["node", "command"],
                    "additionalProperties": False,
                },
            ),
            ToolSpec(
                "sessions_list",
                "List this gateway's chat sessions (key, label, last update).",
                {"type": "object", "properties": {}, "additionalProperties": False},
            ),
        ]

    def list_nodes(self) -> list[dict[str, Any]]:
        """The connected nodes."""
        return self._nodes.list_nodes()

    def describe_nodes(self) -> str:
        """The system-prompt paragraph naming connected nodes and their commands."""
        nodes = self._nodes.list_nodes()
        if not nodes:
            return "No device nodes are connected right now."
        lines = ["Connected device nodes (use node_invoke):"]
        for node in nodes:
            commands = ", ".join(node.get("commands") or []) or "no commands yet"
            name = node.get("displayName") or node["nodeId"][:12]
            lines.append(f"- {name} (id {node['nodeId']}, {node.get('platform')}): {commands}")
        return "\n".join(lines)

    async def run(
        self, name: str, args: dict[str, Any], on_update: ToolUpdate | None = None
    ) -> ToolOutcome:
        """Execute one tool call (bounded by :data:`TOOL_TIMEOUT_S`); never raises except
        for cancellation. ``on_update`` hears the partial result while a node command
        streams its output (``system.run``): ``{content: [{type: text, text}]}`` with the
        output so far (cut as the final text is)."""
        try:
            async with asyncio.timeout(TOOL_TIMEOUT_S):
                if name == "nodes_list":
                    return ToolOutcome(_text({"nodes": self._nodes.list_nodes()}))
                if name == "sessions_list":
                    return ToolOutcome(_text({"sessions": await self._sessions()}))
                if name == "node_invoke":
                    return await self._invoke(args, on_update)
        except TimeoutError:
            return ToolOutcome(_text(f"{name} timed out after {TOOL_TIMEOUT_S:g} s"), True)
        except Exception as exc:  # the model hears what failed, the run goes on
            return ToolOutcome(_text(f"{name} failed: {exc}"), True)
        return ToolOutcome(_text(f"unknown tool {name!r}"), True)

    def _resolve(self, wanted: str) -> str | None:
        for node in self._nodes.list_nodes():
            if wanted in (node["nodeId"], node.get("displayName")):
                return str(node["nodeId"])
        return None

    async def _invoke(self, args: dict[str, Any], on_update: ToolUpdate | None) -> ToolOutcome:
        node, command = args.get("node"), args.get("command")
        params = args.get("params") or {}
        if not isinstance(node, str) or not isinstance(command, str) or not node or not command:
            return ToolOutcome(_text("node and command are required strings"), True)
        if not isinstance(params, dict):
            return ToolOutcome(_text("params must be an object"), True)
        node_id = self._resolve(node)
        if node_id is None:
            return ToolOutcome(_text(f"no connected node named {node!r}; see nodes_list"), True)
        token = INVOKE_PROGRESS.set(_LiveOutput(on_update) if on_update is not None else None)
        try:
            result = await self._nodes.invoke(node_id, command, params, _invoke_timeout_ms(params))
        finally:
            INVOKE_PROGRESS.reset(token)
        payload = result.get("payload")
        if command in _IMAGE_COMMANDS and isinstance(payload, dict) and "base64" in payload:
            fmt = str(payload.get("format") or "jpeg").lower()
            mime = _IMAGE_COMMANDS[command] or ("image/png" if fmt == "png" else "image/jpeg")
            meta = {k: v for k, v in payload.items() if k != "base64"}
            image = {"type": "image", "data": payload["base64"], "mimeType": mime}
            return ToolOutcome([image, *_text(meta)])
        if isinstance(payload, dict) and isinstance(payload.get("base64"), str):
            # A clip or a recording (camera.clip, screen.record): a model cannot watch an
            # mp4 given as text, and cut at the text bound it is noise; it hears what was
            # recorded and how large it is.
            meta = {k: v for k, v in payload.items() if k != "base64"}
            meta["mediaBytes"] = len(payload["base64"]) * 3 // 4
            meta["note"] = "the media itself is kept out of the conversation"
            return ToolOutcome(_text(meta))
        return ToolOutcome(_text(payload if payload is not None else {"ok": True}))
