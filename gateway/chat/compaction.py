"""What the model sees of a session, and auto-compaction when that would not fit.

A compaction entry (``role: "compaction"``) in the transcript summarizes everything before
``keptFromId``; the model then sees the summary, the kept messages and what followed. The
original messages stay in the transcript (``chat.history`` still shows them).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Protocol

from gateway.chat.events import now_ms
from gateway.chat.failure_words import is_terminal_error
from gateway.chat.providers.base import CompletionRequest, ModelRef, StreamEvent, TextDelta
from gateway.chat.transcript import Transcript

__all__ = ["build_context", "estimate_tokens", "maybe_compact"]

log = logging.getLogger("gateway.chat")

#: Compact when the context would use more than this share of the model's window.
COMPACT_AT = 0.8
#: Keep about this share of the window verbatim after compacting.
KEEP_SHARE = 0.3
_MODEL_ROLES = ("user", "assistant", "toolResult")
_SUMMARY_PROMPT = (
    "You compact a conversation between a user and an assistant that can use tools on the "
    "user's devices. Write a concise summary that keeps every fact, decision, open question, "
    "file, device and command that later turns may need. Plain text, no preamble."
)


class _Streams(Protocol):
    def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]: ...


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap token estimate (about 4 characters per token)."""
    return len(json.dumps(messages, ensure_ascii=False)) // 4


def _model_message(entry: dict[str, Any]) -> dict[str, Any]:
    keep = ("role", "content", "toolCallId", "toolName", "isError")
    return {k: entry[k] for k in keep if k in entry}


def _last_compaction(path: list[dict[str, Any]]) -> int | None:
    for index in range(len(path) - 1, -1, -1):
        if path[index].get("role") == "compaction":
            return index
    return None


def build_context(path: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The model's messages for a visible path: summary + kept + newer, with every tool call
    answered (a call interrupted by a crash or abort gets a synthetic error result)."""
    entries = path
    prefix: list[dict[str, Any]] = []
    at = _last_compaction(path)
    if at is not None:
        compaction = path[at]
        ids = [m.get("id") for m in path]
        kept_from = compaction.get("keptFromId")
        start = ids.index(kept_from) if kept_from in ids[:at] else at
        entries = path[start:at] + path[at + 1 :]
        summary = str(compaction.get("summary") or "")
        prefix = [{"role": "user", "content": f"[Summary of the earlier conversation]\n{summary}"}]
    messages: list[dict[str, Any]] = []
    open_calls: dict[str, str] = {}
    for entry in entries:
        role = entry.get("role")
        if role not in _MODEL_ROLES or is_terminal_error(entry):
            continue  # (a failed run's record is for people, as on the reference)
        if role != "toolResult" and open_calls:
            messages += _interrupted(open_calls)
        if role == "assistant":
            content = entry.get("content")
            if not content:
                continue
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "toolCall":
                    open_calls[str(block.get("id"))] = str(block.get("name"))
        if role == "toolResult":
            if entry.get("toolCallId") not in open_calls:
                continue
            open_calls.pop(str(entry.get("toolCallId")))
        messages.append(_model_message(entry))
    if open_calls:
        messages += _interrupted(open_calls)
    return prefix + messages


def _interrupted(open_calls: dict[str, str]) -> list[dict[str, Any]]:
    results = [
        {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": "the tool call was interrupted"}],
            "isError": True,
        }
        for call_id, name in open_calls.items()
    ]
    open_calls.clear()
    return results


def _cut_index(path: list[dict[str, Any]], budget: int) -> int:
    """Index of the first kept message: a user message, keeping about ``budget`` tokens."""
    kept = 0
    for index in range(len(path) - 1, 0, -1):
        kept += estimate_tokens([path[index]])
        if kept >= budget and path[index].get("role") == "user":
            return index
    return 0


async def maybe_compact(
    pool: _Streams, model: ModelRef, transcript: Transcript, path: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Summarize older turns when the context would not fit; returns what was done."""
    context = build_context(path)
    limit = int(model.context_window * COMPACT_AT) - model.max_output_tokens
    estimate = estimate_tokens(context)
    if estimate <= max(limit, 0):
        return None
    at = _last_compaction(path)
    base = at + 1 if at is not None else 0
    cut = _cut_index(path[base:], int(model.context_window * KEEP_SHARE))
    if cut <= 0:
        return None
    older = build_context(path[: base + cut])
    text = "\n\n".join(json.dumps(m, ensure_ascii=False)[:4000] for m in older)
    request = CompletionRequest(
        model=model,
        system=_SUMMARY_PROMPT,
        messages=[{"role": "user", "content": f"Conversation so far:\n{text}"}],
        max_tokens=min(2048, model.max_output_tokens),
    )
    summary = ""
    async for item in pool.stream(request):
        if isinstance(item, TextDelta):
            summary += item.text
    kept_from = path[base + cut].get("id")
    entry = {
        "role": "compaction",
        "summary": summary.strip(),
        "keptFromId": kept_from,
        "compactedMessages": cut,
        "tokensBefore": estimate,
        "timestamp": now_ms(),
    }
    await asyncio.to_thread(transcript.append, entry)
    log.info("compacted %d messages of %s (about %d tokens)", cut, transcript.key, estimate)
    return {"compactedMessages": cut, "tokensBefore": estimate, "summaryChars": len(summary)}
