"""What a tool card says about a call: which command, on which node, with the key arguments.

``describe_call("node_invoke", {"node": "laptop", "command": "screen.snapshot",
"params": {"format": "png"}})`` is ``"screen.snapshot on laptop · format=png"``; the real
gateway's ``nodes`` tool (``{"action": "invoke", "node": …, "invokeCommand": …,
"invokeParamsJson": "{…}"}``) reads the same. Other tools show their scalar arguments.

Everything shown is redacted (:func:`openclaw_desktop.chat.redact.redact`), stripped of
control characters, on one line and bounded: an argument named like a secret (``token``,
``password``, ``apiKey``…) is never shown, whatever its value looks like.
"""

from __future__ import annotations

import json
import re
from typing import Any

from openclaw_desktop.chat.redact import REDACTED, redact, strip_control

__all__ = ["SUMMARY_CHARS", "describe_call"]

#: A summary is at most this long; each value at most :data:`VALUE_CHARS`.
SUMMARY_CHARS = 160
VALUE_CHARS = 48
#: Key arguments shown at most.
KEY_ARGS = 4

_NODE_KEYS = ("node", "nodeId", "node_id", "device", "deviceId")
_COMMAND_KEYS = ("invokeCommand", "command", "cmd")
_PARAMS_KEYS = ("params", "invokeParams", "invokeParamsJson", "arguments")
#: Arguments that are how the call is made, not what it does.
_PLUMBING = frozenset({"action", "timeoutMs", "invokeTimeoutMs", "idempotencyKey", "executionId"})
_SECRET_NAME = re.compile(r"(?i)token|passw|secret|api.?key|auth|credential|private|cookie")
_SPACE = re.compile(r"\s+")


def _clean(value: str, limit: int) -> str:
    text = _SPACE.sub(" ", redact(strip_control(value))).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value(key: str, value: Any) -> str | None:
    """One argument as shown, or None when it is not worth a place (objects, empties)."""
    if _SECRET_NAME.search(key):
        return REDACTED
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value.strip():
        return _clean(value, VALUE_CHARS)
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return _clean(",".join(str(v) for v in value), VALUE_CHARS)
    return None


def _pairs(args: dict[str, Any], skip: set[str]) -> list[str]:
    out = []
    for key, value in args.items():
        if key in skip or key in _PLUMBING:
            continue
        shown = _value(str(key), value)
        if shown is not None:
            out.append(f"{_clean(str(key), 24)}={shown}")
        if len(out) == KEY_ARGS:
            break
    return out


def _params(args: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The invoked command's own params (an object, or the real gateway's JSON text)."""
    for key in _PARAMS_KEYS:
        raw = args.get(key)
        if isinstance(raw, str) and raw.strip():
            try:
                raw = json.loads(raw)
            except ValueError:
                return {}, key
        if isinstance(raw, dict):
            return raw, key
    return {}, None


def describe_call(name: str, args: Any) -> str:
    """The one-line summary of a tool call (empty when the arguments say nothing)."""
    if not isinstance(args, dict):
        return ""
    node = next((args[k] for k in _NODE_KEYS if isinstance(args.get(k), str) and args[k]), None)
    command = next(
        (args[k] for k in _COMMAND_KEYS if isinstance(args.get(k), str) and args[k]), None
    )
    action = args.get("action") if isinstance(args.get("action"), str) else None
    if command is None and action and action != "invoke":
        command = action  # the real ``nodes`` tool: camera_snap, screen_record, …
    params, params_key = _params(args)
    used = {k for k in (*_NODE_KEYS, *_COMMAND_KEYS) if k in args}
    if params_key is not None:
        used.add(params_key)
    head = ""
    if command is not None:
        head = _clean(command, VALUE_CHARS)
    if node is not None:
        head = f"{head} on {_clean(node, VALUE_CHARS)}" if head else f"on {_clean(node, 48)}"
    pairs = _pairs(params, set()) if params else []
    pairs += _pairs(args, used)[: max(0, KEY_ARGS - len(pairs))]
    summary = " · ".join(part for part in (head, ", ".join(pairs)) if part)
    return summary if len(summary) <= SUMMARY_CHARS else summary[: SUMMARY_CHARS - 1] + "…"
