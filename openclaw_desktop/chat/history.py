"""``chat.history`` -> timeline items (pure): one item per transcript message, in transcript
order, with the same keys the live stream gives (see :mod:`openclaw_desktop.chat.items`).

* a user message is one item;
* an assistant message is one item for its text (when it has any) and one card per tool
  call, in the order of its content blocks (the real gateway stores a message with text and
  tool calls as two entries with one ``__openclaw.id``: still one message); the n-th
  assistant message of a run gets the key ``<runId>:assistant[:<n>]``, whether or not it
  has text, as the live stream counts;
* a tool result fills in its call's card;
* a user message steered into a run (``__openclaw.steerTargetRunId``) means that run goes
  on, whatever its last message before it said;
* how an assistant message ended (``stopReason``): ``aborted`` (or, on the real gateway,
  ``stop`` with ``openclawAbort.aborted``) is a reply the user stopped;
  ``error`` adds a ``<runId>:error`` item with the ``errorMessage`` (the real gateway's
  ``<runId>:terminal-error`` message is that item alone: its text is the failure in words,
  not a reply); a reply the gateway cut by stopping or restarting (the real gateway's
  ``errorCode: OPENCLAW_RESTART_ABORT``, an ``openclawAbort`` of origin ``interrupted`` as
  the bundled gateway records a reply cut by ``kill -9``, or an error message that says so)
  is ``interrupted``, with an error item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from openclaw_desktop.chat.items import (
    INTERRUPTED,
    ChatItem,
    ItemStatus,
    ToolCard,
    arg_count,
    assistant_key,
    images_of,
    preview,
    tool_images,
    user_content,
)
from openclaw_desktop.chat.tool_summary import describe_call
from openclaw_desktop.sdk.normalize import is_interruption, message_text

__all__ = ["HistoryView", "RunInHistory", "from_history", "is_interruption"]


@dataclass
class RunInHistory:
    """What the history says about one run."""

    #: How its last assistant message ended (None while it only called tools so far).
    ended: ItemStatus | None = None
    #: Assistant messages seen (the next live message has this index).
    messages: int = 0
    #: The text of its last assistant message (empty when that one had none).
    last_text: str = ""
    #: The ``__openclaw.id`` of its last assistant entry (the real gateway stores a message
    #: with text and tool calls as two entries of one id: one message, one index).
    last_id: str = ""


@dataclass
class HistoryView:
    """The items of a history, and what it says about each run."""

    items: list[ChatItem]
    runs: dict[str, RunInHistory]


def _meta(message: dict[str, Any]) -> dict[str, Any]:
    meta = message.get("__openclaw")
    return meta if isinstance(meta, dict) else {}


def from_history(messages: list[Any]) -> HistoryView:
    """The timeline items of ``messages`` (``chat.history``, oldest first)."""
    items: list[ChatItem] = []
    runs: dict[str, RunInHistory] = {}
    calls: dict[str, ChatItem] = {}
    seen: set[str] = set()

    def add(item: ChatItem) -> None:
        if item.key not in seen:
            seen.add(item.key)
            items.append(item)

    for message in messages:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        if role == "user":
            add(_user(message))
            target = _meta(message).get("steerTargetRunId")
            if isinstance(target, str) and target in runs:
                runs[target].ended = None  # steered in: that run goes on to answer it
        elif role == "assistant":
            for item in _assistant(message, runs, calls):
                add(item)
        elif role == "toolResult":
            card = calls.get(str(message.get("toolCallId")))
            if card is not None and card.tool is not None:
                card.tool.status = "failed" if message.get("isError") else "completed"
                card.tool.preview = preview(message)
                card.images = tool_images(message.get("content"))
                card.status = "done"
    return HistoryView(items, runs)


def _user(message: dict[str, Any]) -> ChatItem:
    meta = _meta(message)
    ikey = str(message.get("idempotencyKey") or meta.get("idempotencyKey") or "")
    rid = ikey[: -len(":user")] if ikey.endswith(":user") else None
    mid = str(meta.get("id") or "")
    content = message.get("content")
    text, files = user_content(content)
    return ChatItem(
        f"{rid}:user" if rid else f"msg:{mid}",
        "user",
        text,
        "sent",
        rid,
        mid or None,
        timestamp=int(message.get("timestamp") or 0),
        images=images_of(content),
        files=files,
    )


def _ending(message: dict[str, Any]) -> ItemStatus | None:
    stop = message.get("stopReason")
    if is_interruption(message):
        return "interrupted"
    abort = message.get("openclawAbort")
    if stop == "aborted" or (isinstance(abort, dict) and abort.get("aborted") is True):
        return "aborted"  # the real gateway keeps a stopped reply as ``stop`` with this mark
    if stop == "error":
        return "failed"
    return None if stop == "toolUse" else "done"


def _terminal_error(message: dict[str, Any]) -> bool:
    """The real gateway records a run that failed (a provider error) as an assistant message
    of key ``<runId>:terminal-error`` whose text is the failure in words, without an
    ``errorMessage``."""
    key = message.get("idempotencyKey") or _meta(message).get("idempotencyKey")
    return isinstance(key, str) and key.endswith(":terminal-error")


def _assistant(
    message: dict[str, Any], runs: dict[str, RunInHistory], calls: dict[str, ChatItem]
) -> list[ChatItem]:
    meta = _meta(message)
    mid = str(meta.get("id") or "")
    raw_run = meta.get("runId")
    run_id = str(raw_run) if raw_run else None
    ts = int(message.get("timestamp") or 0)
    raw = message.get("content")
    content: list[Any] = raw if isinstance(raw, list) else []
    ending = _ending(message)
    run = runs.setdefault(run_id, RunInHistory()) if run_id else RunInHistory()
    continued = bool(mid) and mid == run.last_id
    if not continued:
        run.messages += 1
    index = run.messages - 1
    run.last_id = mid
    run.ended = ending
    tools: list[ChatItem] = []
    first_tool = first_text = len(content)
    for position, block in enumerate(content):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and block.get("text"):
            first_text = min(first_text, position)
        if block.get("type") == "toolCall":
            first_tool = min(first_tool, position)
            call_id = str(block.get("id"))
            name, args = str(block.get("name")), block.get("arguments")
            card = ToolCard(
                call_id, name, "running", arg_count(args), summary=describe_call(name, args)
            )
            item = ChatItem(
                f"{run_id}:tool:{call_id}" if run_id else f"msg:{mid}:tool:{call_id}",
                "tool",
                "",
                "streaming",
                run_id,
                mid or None,
                card,
                ts,
            )
            calls[call_id] = item
            tools.append(item)
    out: list[ChatItem] = []
    text = message_text(message)
    failure = message.get("errorMessage")
    if ending == "failed" and not failure and not tools and _terminal_error(message):
        failure, text = text, ""  # the failure in words, not a reply
    run.last_text = text or (run.last_text if continued else "")
    if text:
        status: ItemStatus = "done" if ending is None else ending
        role: Literal["assistant", "note"] = "assistant" if run_id else "note"
        out.append(
            ChatItem(
                assistant_key(run_id, index) if run_id else f"msg:{mid}",
                role,
                text,
                status,
                run_id,
                mid or None,
                timestamp=ts,
                images=images_of(content),
            )
        )
    out = out + tools if first_text <= first_tool else tools + out
    if ending in ("failed", "interrupted"):
        reason = INTERRUPTED if ending == "interrupted" else failure
        out.append(
            ChatItem(
                f"{run_id}:error" if run_id else f"msg:{mid}:error",
                "error",
                str(reason or "the run failed"),
                "failed",
                run_id,
                mid or None,
                timestamp=ts,
            )
        )
    return out
