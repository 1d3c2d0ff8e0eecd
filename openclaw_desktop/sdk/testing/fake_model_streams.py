"""The wire side of the fake model: one HTTP/1.1 exchange and the two streaming formats.

:func:`stream_openai` writes an OpenAI chat-completions SSE stream, :func:`stream_anthropic`
an Anthropic messages SSE stream, both for one :class:`Turn` (what
:mod:`openclaw_desktop.sdk.testing.fake_model_script` decided to answer).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.sdk.testing.fake_model_script import Script, chunks, plan_reply, preamble

__all__ = ["REASONS", "HttpExchange", "Turn", "stream_anthropic", "stream_openai"]

#: Reason phrases of the statuses the fake answers with.
REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


class HttpExchange:
    """One HTTP/1.1 exchange (``Connection: close``), chunked when streaming."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def head(
        self, status: int, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        lines = [
            f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
            f"content-type: {content_type}",
            "transfer-encoding: chunked",
            "connection: close",
            "cache-control: no-cache",
        ]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await self.writer.drain()

    async def chunk(self, data: str) -> None:
        raw = data.encode()
        self.writer.write(f"{len(raw):x}\r\n".encode() + raw + b"\r\n")
        await self.writer.drain()

    async def end(self) -> None:
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()

    async def json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        await self.head(status, "application/json", extra)
        await self.chunk(json.dumps(payload))
        await self.end()


@dataclass(frozen=True)
class Turn:
    """One model answer to write: the request's number, model and prompt, the tool result
    after the prompt (None before the tool call is answered), the script, the delay between
    chunks, and ``interrupt`` (called after the third text chunk: True ends the answer there,
    for ``HANG``/``CUT``/``CUTCLEAN``)."""

    n: int
    model: str
    prompt: str
    result: str | None
    script: Script
    chunk_delay_s: float
    interrupt: Callable[[HttpExchange, Script], Awaitable[bool]]


async def stream_openai(conn: HttpExchange, turn: Turn) -> None:
    """Answer one turn as an OpenAI chat-completions event stream."""
    n, model, prompt, result, script = turn.n, turn.model, turn.prompt, turn.result, turn.script
    await conn.head(200, "text/event-stream")
    rid = f"chatcmpl-fake-{n}"

    async def send(delta: dict[str, Any], finish: str | None = None) -> None:
        chunk = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        await conn.chunk(f"data: {json.dumps(chunk)}\n\n")

    await send({"role": "assistant", "content": ""})
    if script.kind in ("calltool", "badjson") and result is None:
        args = script.extra if script.kind == "calltool" else '{"path": "/tmp/x", '
        if said := preamble(prompt, script):
            for piece in chunks(said):
                await asyncio.sleep(turn.chunk_delay_s)
                await send({"content": piece})
        await send(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": f"call_fake_{n}",
                        "type": "function",
                        "function": {"name": script.arg, "arguments": ""},
                    }
                ]
            }
        )
        for piece in chunks(args, 5):
            await asyncio.sleep(turn.chunk_delay_s)
            await send({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        finish, count = "tool_calls", 3
    else:
        text, delay, thinking = plan_reply(n, prompt, result, script, turn.chunk_delay_s)
        for piece in thinking:
            await send({"reasoning_content": piece})
        pieces = chunks(text)
        for i, piece in enumerate(pieces):
            await asyncio.sleep(delay)
            await send({"content": piece})
            if i == 2 and await turn.interrupt(conn, script):
                return
        finish, count = "stop", len(pieces)
    await send({}, finish)
    usage = {
        "prompt_tokens": max(1, len(json.dumps(prompt)) // 4),
        "completion_tokens": count,
        "total_tokens": 0,
    }
    usage["total_tokens"] = usage["prompt_tokens"] + count
    final = {
        "id": rid,
        "object": "chat.completion.chunk",
        "model": model,
        "choices": [],
        "usage": usage,
    }
    await conn.chunk(f"data: {json.dumps(final)}\n\n")
    await conn.chunk("data: [DONE]\n\n")
    await conn.end()


async def stream_anthropic(conn: HttpExchange, turn: Turn) -> None:
    """Answer one turn as an Anthropic messages event stream."""
    n, model, prompt, result, script = turn.n, turn.model, turn.prompt, turn.result, turn.script
    await conn.head(200, "text/event-stream")

    async def send(kind: str, data: dict[str, Any]) -> None:
        await conn.chunk(f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n")

    await send(
        "message_start",
        {
            "message": {
                "id": f"msg_fake_{n}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": max(1, len(prompt) // 4), "output_tokens": 1},
            }
        },
    )
    await send("ping", {})
    if script.kind in ("calltool", "badjson") and result is None:
        args = script.extra if script.kind == "calltool" else '{"path": "/tmp/x", '
        index = 0
        if said := preamble(prompt, script):
            await send(
                "content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}
            )
            for piece in chunks(said):
                await asyncio.sleep(turn.chunk_delay_s)
                await send(
                    "content_block_delta",
                    {"index": 0, "delta": {"type": "text_delta", "text": piece}},
                )
            await send("content_block_stop", {"index": 0})
            index = 1
        await send(
            "content_block_start",
            {
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": f"toolu_fake_{n}",
                    "name": script.arg,
                    "input": {},
                },
            },
        )
        for piece in chunks(args, 5):
            await asyncio.sleep(turn.chunk_delay_s)
            await send(
                "content_block_delta",
                {"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}},
            )
        await send("content_block_stop", {"index": index})
        stop, count = "tool_use", 3
    else:
        text, delay, thinking = plan_reply(n, prompt, result, script, turn.chunk_delay_s)
        index = 0
        if thinking:
            await send(
                "content_block_start",
                {"index": 0, "content_block": {"type": "thinking", "thinking": ""}},
            )
            for piece in thinking:
                await send(
                    "content_block_delta",
                    {"index": 0, "delta": {"type": "thinking_delta", "thinking": piece}},
                )
            await send("content_block_stop", {"index": 0})
            index = 1
        await send(
            "content_block_start",
            {"index": index, "content_block": {"type": "text", "text": ""}},
        )
        pieces = chunks(text)
        for i, piece in enumerate(pieces):
            await asyncio.sleep(delay)
            await send(
                "content_block_delta",
                {"index": index, "delta": {"type": "text_delta", "text": piece}},
            )
            if i == 2 and await turn.interrupt(conn, script):
                return
        await send("content_block_stop", {"index": index})
        stop, count = "end_turn", len(pieces)
    await send(
        "message_delta",
        {
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": count},
        },
    )
    await send("message_stop", {})
    await conn.end()
