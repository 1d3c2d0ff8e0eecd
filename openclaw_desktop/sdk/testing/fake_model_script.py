"""The script language of the fake model: which prompt it answers and how.

Pure functions, no I/O: :func:`find_prompt` picks the prompt out of a chat request's
messages, :func:`parse_script` turns it into a :class:`Script`, :func:`plan_reply` says what
a text answer looks like and :func:`error_payload` builds an OpenAI- or Anthropic-shaped
error body. :mod:`openclaw_desktop.sdk.testing.fake_model` serves them over HTTP.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "INTERNAL_CONTEXT_MARK",
    "Script",
    "chunks",
    "error_payload",
    "find_prompt",
    "parse_script",
    "plan_reply",
    "preamble",
]

#: The real gateway 2026.9.6 appends a synthetic user message starting with this after the
#: user's prompt (and after tool results); it is never the prompt.
INTERNAL_CONTEXT_MARK = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


@dataclass(frozen=True)
class Script:
    """What a prompt asks the fake for: ``kind`` (``reply``, ``calltool``, ``badjson``,
    ``slow``, ``fail``, ``think``, ``hang``, ``cut``, ``cutclean``) and its arguments."""

    kind: str
    arg: str = ""
    extra: str = ""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    return ""


def _is_tool_message(message: dict[str, Any]) -> bool:
    if message.get("role") == "tool":
        return True
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and any(isinstance(p, dict) and p.get("type") == "tool_result" for p in content)
    )


def find_prompt(messages: list[dict[str, Any]]) -> tuple[str, str | None]:
    """The prompt (last real user message) and the text of the first tool result after it
    (None when the prompt's tool call is not answered yet)."""
    prompt_index = -1
    for i, message in enumerate(messages):
        if message.get("role") != "user" or _is_tool_message(message):
            continue
        if _text(message.get("content")).lstrip().startswith(INTERNAL_CONTEXT_MARK):
            continue
        if i > 0 and _is_tool_message(messages[i - 1]):
            continue  # synthetic follow-up of tool results
        prompt_index = i
    prompt = _text(messages[prompt_index].get("content")) if prompt_index >= 0 else ""
    for message in messages[prompt_index + 1 :]:
        if message.get("role") == "tool":
            return prompt, _text(message.get("content"))
        if _is_tool_message(message):
            for part in message["content"]:
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    return prompt, _text(part.get("content"))
    return prompt, None


def parse_script(prompt: str) -> Script:
    """The first script word found in ``prompt`` (a plain reply when there is none)."""
    match = re.search(r"CALLTOOL:([\w.\-]+):(.*)", prompt)
    if match:
        return Script("calltool", match.group(1), match.group(2).strip())
    match = re.search(r"BADJSON:([\w.\-]+)", prompt)
    if match:
        return Script("badjson", match.group(1))
    match = re.search(r"SLOW:(\d+)", prompt)
    if match:
        return Script("slow", match.group(1))
    match = re.search(r"FAIL:(401|429|500|context)", prompt)
    if match:
        return Script("fail", match.group(1))
    for word in ("CUTCLEAN", "CUT", "HANG", "THINK"):
        if word in prompt:
            return Script(word.lower())
    return Script("reply")


#: What the model says before its tool call when the prompt also holds ``PREAMBLE``.
PREAMBLE_TEXT = "Let me look that up first."


def preamble(prompt: str, script: Script) -> str:
    """The text streamed before a ``CALLTOOL`` call ("" unless the prompt says ``PREAMBLE``):
    a reply with text, then a tool call, then (after the result) a final answer."""
    return PREAMBLE_TEXT if script.kind == "calltool" and "PREAMBLE" in prompt else ""


def chunks(text: str, size: int = 8) -> list[str]:
    """``text`` in pieces of ``size`` characters (one empty piece for an empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def plan_reply(
    n: int, prompt: str, result: str | None, script: Script, delay: float
) -> tuple[str, float, list[str]]:
    """(reply text, chunk delay, thinking chunks) of the ``n``-th answer when it is text."""
    thinking: list[str] = []
    if script.kind in ("calltool", "badjson") and result is not None:
        return f"FAKE-LLM tool result: {result[:200]}", delay, thinking
    if script.kind == "slow":
        return "".join(f"slow{i} " for i in range(20)), int(script.arg) / 1000, thinking
    if script.kind == "think":
        thinking = ["Let me ", "think about ", "this."]
    return f"FAKE-LLM reply #{n}: {prompt}", delay, thinking


def error_payload(
    status: int, *, anthropic: bool, context: bool = False, key: str | None = None
) -> dict[str, Any]:
    """The body of an HTTP error answer; a 401 echoes the key like OpenAI does (so tests can
    check that the gateway redacts it)."""
    kinds = {
        401: ("authentication_error", "invalid_api_key", f"Incorrect API key provided: {key}"),
        429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached"),
        500: ("api_error", "server_error", "The server had an error"),
    }
    if context:
        kind, code, text = (
            "invalid_request_error",
            "context_length_exceeded",
            "This model's maximum context length is 8192 tokens",
        )
    else:
        kind, code, text = kinds.get(status, ("api_error", "error", f"HTTP {status}"))
    if anthropic:
        return {"type": "error", "error": {"type": kind, "message": text}}
    return {"error": {"message": text, "type": kind, "code": code}}
