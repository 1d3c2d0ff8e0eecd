"""Slash commands (work with or without a model) and the honest offline reply.

``/nodes``, ``/invoke <node> <command> [json]``, ``/snap [node]``, ``/notify <text>`` and
``/help`` run through the same tools as the model (so the same policy), which keeps the node
features of the app usable when no model provider is configured.
"""

from __future__ import annotations

import json
from typing import Any

from gateway.chat.tools import AgentTools, ToolOutcome

__all__ = ["OFFLINE_REPLY", "SLASH_HELP", "is_slash_command", "run_slash_command"]

SLASH_HELP = """Commands that work without a model:
/nodes — list connected devices and their commands
/invoke <node> <command> [json params] — run a node command, e.g. /invoke laptop device.status
/snap [node] — take a photo with a node's camera
/notify <text> — show a notification on a node
/help — this list"""

OFFLINE_REPLY = (
    "No model provider is configured for this gateway, so I cannot answer in words yet.\n\n"
    "To add one, start the gateway with a provider in its environment, e.g.\n"
    "  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 openclaw-desktop gateway   (llama.cpp, vLLM, "
    "LM Studio)\n"
    "  OPENAI_API_KEY=…   or   ANTHROPIC_API_KEY=…\n"
    "or run Ollama on this computer (it is found by itself), or list providers in "
    "providers.json in the gateway's state folder.\n\n" + SLASH_HELP
)
_COMMANDS = ("/nodes", "/invoke", "/snap", "/notify", "/help")


def is_slash_command(text: str) -> bool:
    """Whether ``text`` is one of the slash commands."""
    word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return word in _COMMANDS


def _render(outcome: ToolOutcome) -> str:
    parts = []
    for block in outcome.content:
        if block.get("type") == "text":
            parts.append(str(block.get("text")))
        elif block.get("type") == "image":
            parts.append(f"[image, {len(str(block.get('data'))) * 3 // 4} bytes]")
    prefix = "Failed: " if outcome.is_error else ""
    return prefix + "\n".join(parts)


def _first_node(tools: AgentTools, command: str) -> str | None:
    for node in tools.list_nodes():
        if command in (node.get("commands") or []):
            return str(node["nodeId"])
    return None


async def run_slash_command(text: str, tools: AgentTools) -> str:
    """Run one slash command; returns the reply text (errors are replies too)."""
    word, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if word == "/help":
        return SLASH_HELP
    if word == "/nodes":
        return _render(await tools.run("nodes_list", {}))
    if word == "/invoke":
        node, _, tail = rest.partition(" ")
        command, _, raw = tail.strip().partition(" ")
        if not node or not command:
            return "Usage: /invoke <node> <command> [json params]"
        try:
            params: Any = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return f"The params are not valid JSON: {exc.msg} (column {exc.colno})"
        args = {"node": node, "command": command, "params": params}
        return _render(await tools.run("node_invoke", args))
    if word == "/snap":
        camera = rest or _first_node(tools, "camera.snap")
        if camera is None:
            return "No connected node offers camera.snap (enable Camera in its settings)."
        args = {"node": camera, "command": "camera.snap", "params": {}}
        return _render(await tools.run("node_invoke", args))
    if word == "/notify":
        notifier = _first_node(tools, "system.notify")
        if not rest:
            return "Usage: /notify <text>"
        if notifier is None:
            return "No connected node offers system.notify."
        notice = {"title": "OpenClaw", "body": rest}
        args = {"node": notifier, "command": "system.notify", "params": notice}
        return _render(await tools.run("node_invoke", args))
    return SLASH_HELP
