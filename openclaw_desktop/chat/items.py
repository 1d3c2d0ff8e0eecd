"""The rows of the chat (:class:`ChatItem`, :class:`ToolCard`), their keys, and the helpers
that turn gateway content (tool results, user content blocks) into what a row shows.

Keys are the same whether an item came from the live stream or from ``chat.history``, so
the two never show a message twice:

* a user message: ``<runId>:user`` (its idempotency key) or ``msg:<id>``;
* the text of the n-th assistant message of a run (0 first, counting messages that only
  call tools): ``<runId>:assistant`` for the first, ``<runId>:assistant:<n>`` after it;
* a tool call: ``<runId>:tool:<toolCallId>``;
* how a run failed or was interrupted: ``<runId>:error``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from openclaw_desktop.chat.redact import redact, strip_control
from openclaw_desktop.sdk.normalize import INTERRUPTED

__all__ = [
    "INTERRUPTED",
    "ChatItem",
    "ItemStatus",
    "ToolCard",
    "arg_count",
    "assistant_key",
    "images_of",
    "preview",
    "tool_images",
    "user_content",
]

ItemStatus = Literal[
    "sending",
    "waiting",
    "queued",
    "sent",
    "streaming",
    "done",
    "aborted",
    "interrupted",
    "failed",
]
PREVIEW_CHARS = 400


@dataclass
class ToolCard:
    """One tool call as a card."""

    call_id: str
    name: str
    status: Literal["running", "completed", "failed"] = "running"
    arg_count: int = 0
    preview: str = ""
    #: Which command, on which node, with the key arguments: redacted, one line
    #: (:func:`openclaw_desktop.chat.tool_summary.describe_call`).
    summary: str = ""


@dataclass
class ChatItem:
    """One row of the chat."""

    key: str
    role: Literal["user", "assistant", "tool", "note", "error"]
    text: str = ""
    status: ItemStatus = "done"
    run_id: str | None = None
    message_id: str | None = None
    tool: ToolCard | None = None
    timestamp: int = 0
    #: Inline images ``{mimeType, data}`` (base64), shown under the text.
    images: list[dict[str, Any]] = field(default_factory=list)
    #: Attached files, as ``name (size)`` labels.
    files: list[str] = field(default_factory=list)


def assistant_key(run_id: str, index: int) -> str:
    """The key of the text of a run's ``index``-th assistant message."""
    return f"{run_id}:assistant" if index <= 0 else f"{run_id}:assistant:{index}"


def preview(result: Any) -> str:
    """A tool result's text, control characters stripped, secrets redacted, shortened."""
    if isinstance(result, dict):
        content = result.get("content")
        if isinstance(content, list):
            text = "\n".join(
                str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
            )
        else:
            text = str(result.get("text") or "")
    else:
        text = "" if result is None else str(result)
    text = redact(strip_control(text))
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def images_of(content: Any) -> list[dict[str, Any]]:
    """The image blocks of a message's content (``{type: image, data, mimeType}``)."""
    if not isinstance(content, list):
        return []
    return [
        {"mimeType": str(b.get("mimeType") or "image/png"), "data": b["data"]}
        for b in content
        if isinstance(b, dict) and b.get("type") == "image" and isinstance(b.get("data"), str)
    ]


def tool_images(content: Any) -> list[dict[str, Any]]:
    """The images of a tool result's content: its own image blocks, and those of the tool
    that the real gateway's Tool Search ran (its ``tool_call`` answers with one text block,
    ``{"tool": {...}, "result": {"content": [...]}}`` as JSON, the image data inside). An
    image given only by URL (no ``data``) is never fetched: it is not shown."""
    found = images_of(content)
    if found or not isinstance(content, list) or len(content) != 1:
        return found
    block = content[0]
    text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
    if not isinstance(text, str) or not text.startswith("{") or '"image"' not in text:
        return found
    try:
        inner = json.loads(text)
    except ValueError:
        return found
    result = inner.get("result") if isinstance(inner, dict) and "tool" in inner else None
    return images_of(result.get("content")) if isinstance(result, dict) else found


_FILE_HEAD = "[attached file "


def user_content(content: Any) -> tuple[str, list[str]]:
    """A user message's own text and its attached files' labels (file text is not shown)."""
    if isinstance(content, str):
        return content, []
    texts = [b for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
    own = [
        str(b.get("text", "")) for b in texts if not str(b.get("text", "")).startswith(_FILE_HEAD)
    ]
    files = [
        str(b["text"]).split("\n", 1)[0][len(_FILE_HEAD) : -1]
        for b in texts
        if str(b.get("text", "")).startswith(_FILE_HEAD)
    ]
    return "\n".join(own), files


def arg_count(args: Any) -> int:
    """How many arguments a tool call has (they are counted, never shown)."""
    return len(args) if isinstance(args, dict) else 0
