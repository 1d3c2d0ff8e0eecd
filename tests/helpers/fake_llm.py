"""A fake model server, OpenAI-compatible and Anthropic-compatible, over real HTTP on 127.0.0.1.

Runs its own event loop in a background thread (usable from sync and async tests alike), or
as a process: ``python -m tests.helpers.fake_llm --port N [--log FILE]`` prints
``FAKE-LLM READY <port>`` and serves until SIGTERM/SIGINT.

Endpoints: ``POST /v1/chat/completions`` (and ``/chat/completions``), ``POST /v1/messages``,
``GET /v1/models`` (and ``/models``), ``GET /api/tags`` (Ollama). Behaviour is scripted by the
prompt, the last *real* user message (one not directly following tool results: the real
gateway appends a synthetic user message after them):

* default: ``FAKE-LLM reply #<n>: <prompt>`` in several chunks, a few ms apart;
* ``CALLTOOL:<name>:<json>``: one tool call; once a tool result follows the prompt, a text
  reply quoting the result (``FAKE-LLM tool result: ...``);
* ``BADJSON:<name>``: a tool call with invalid JSON arguments (then like CALLTOOL);
* ``THINK``: reasoning deltas before the reply;
* ``SLOW:<ms>``: 20 chunks, ``<ms>`` apart;
* ``FAIL:401|429|500|context``: that HTTP error (429 with ``Retry-After``);
* ``HANG``: headers, then silence; ``CUT``: a few chunks, then the connection drops;
  ``CUTCLEAN``: a few chunks, then a clean end without ``[DONE]``/``message_stop``.

``key_status`` maps an API key to an HTTP status every request with that key gets (failover
tests). Every request is recorded (:attr:`FakeLLM.requests`, and a JSONL file with ``log``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import re
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FakeLLM", "RecordedRequest", "find_prompt"]

_HEADER_LIMIT = 64 * 1024
_BODY_LIMIT = 32 * 1024 * 1024
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
}


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    api_key: str | None


@dataclass
class _Script:
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


#: The real gateway 2026.9.6 appends a synthetic user message starting with this after the
#: user's prompt (and after tool results); it is never the prompt.
INTERNAL_CONTEXT_MARK = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"


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


def _script(prompt: str) -> _Script:
    match = re.search(r"CALLTOOL:([\w.\-]+):(.*)", prompt)
    if match:
        return _Script("calltool", match.group(1), match.group(2).strip())
    match = re.search(r"BADJSON:([\w.\-]+)", prompt)
    if match:
        return _Script("badjson", match.group(1))
    match = re.search(r"SLOW:(\d+)", prompt)
    if match:
        return _Script("slow", match.group(1))
    match = re.search(r"FAIL:(401|429|500|context)", prompt)
    if match:
        return _Script("fail", match.group(1))
    for word in ("CUTCLEAN", "CUT", "HANG", "THINK"):
        if word in prompt:
            return _Script(word.lower())
    return _Script("reply")


def _chunks(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class _Conn:
    """One HTTP/1.1 exchange (``Connection: close``), chunked when streaming."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def head(
        self, status: int, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        lines = [
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
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


class FakeLLM:
    """The fake server. ``start()``/``stop()`` or use it as a context manager."""

    def __init__(
        self,
        *,
        models: list[str] | None = None,
        key_status: dict[str, int] | None = None,
        retry_after: str = "1",
        chunk_delay_s: float = 0.005,
        log: Path | None = None,
        port: int = 0,
    ) -> None:
        self.models = models or ["fake-model", "fake-model-2"]
        self.key_status = dict(key_status or {})
        self.retry_after = retry_after
        self.chunk_delay_s = chunk_delay_s
        self.log = log
        self.port = port
        self.requests: list[RecordedRequest] = []
        self._count = 0
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping: asyncio.Event | None = None

    # ------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (Anthropic base URL)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (OpenAI base URL)."""
        return f"{self.base_url}/v1"

    def start(self) -> FakeLLM:
        """Start serving in a background thread; returns when the port is bound."""
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="fake-llm", daemon=True)
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), loop).result(timeout=10)
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections, and join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _shutdown(self) -> None:
        assert self._stopping is not None and self._server is not None
        self._stopping.set()
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def serve_forever(self) -> None:
        """Serve on this loop until cancelled (the ``__main__`` entry point)."""
        await self._serve()
        assert self._stopping is not None
        await self._stopping.wait()

    def bodies(self, path_suffix: str = "") -> list[Any]:
        """The bodies of the recorded requests whose path ends with ``path_suffix``."""
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith(path_suffix)]

    # ------------------------------------------------------------ HTTP
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._exchange(reader, writer)
        except (
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
            ValueError,
        ):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > _HEADER_LIMIT:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        if length > _BODY_LIMIT:
            return
        raw = await reader.readexactly(length) if length else b""
        body: Any = json.loads(raw) if raw else None
        auth = headers.get("authorization", "")
        key = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else None
        key = headers.get("x-api-key") or key
        with self._lock:
            self.requests.append(RecordedRequest(method, path, headers, body, key))
            self._count += 1 if method == "POST" else 0
            n = self._count
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as f:
                f.write(
                    json.dumps({"t": time.time(), "method": method, "path": path, "body": body})
                    + "\n"
                )
        conn = _Conn(writer)
        path = path.split("?", 1)[0]
        anthropic = path == "/v1/messages"
        if method == "GET" and path in ("/v1/models", "/models"):
            await conn.json(
                200, {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
            )
        elif method == "GET" and path == "/api/tags":
            await conn.json(200, {"models": [{"name": m, "model": m} for m in self.models]})
        elif method == "POST" and (
            anthropic or path in ("/v1/chat/completions", "/chat/completions")
        ):
            status = self.key_status.get(key or "")
            if status is not None:
                await self._error(conn, status, anthropic=anthropic, key=key)
                return
            messages = body.get("messages", []) if isinstance(body, dict) else []
            prompt, result = find_prompt(messages)
            script = _script(prompt)
            model = str(body.get("model", "")) if isinstance(body, dict) else ""
            if script.kind == "fail":
                code = 400 if script.arg == "context" else int(script.arg)
                await self._error(
                    conn, code, anthropic=anthropic, context=script.arg == "context", key=key
                )
            elif anthropic:
                await self._anthropic(conn, n, model, prompt, result, script)
            else:
                await self._openai(conn, n, model, prompt, result, script)
        else:
            await conn.json(404, {"error": {"message": f"no route {method} {path}"}})

    async def _error(
        self,
        conn: _Conn,
        status: int,
        *,
        anthropic: bool,
        context: bool = False,
        key: str | None = None,
    ) -> None:
        """An error answer; a 401 echoes the key like OpenAI does (redaction tests)."""
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
        extra = {"retry-after": self.retry_after} if status == 429 else None
        payload: dict[str, Any]
        if anthropic:
            payload = {"type": "error", "error": {"type": kind, "message": text}}
        else:
            payload = {"error": {"message": text, "type": kind, "code": code}}
        await conn.json(status, payload, extra)

    def _plan(
        self, n: int, prompt: str, result: str | None, script: _Script
    ) -> tuple[str, float, list[str]]:
        """(reply text, chunk delay, thinking chunks) of a text answer."""
        delay = self.chunk_delay_s
        thinking: list[str] = []
        if script.kind in ("calltool", "badjson") and result is not None:
            return f"FAKE-LLM tool result: {result[:200]}", delay, thinking
        if script.kind == "slow":
            return "".join(f"slow{i} " for i in range(20)), int(script.arg) / 1000, thinking
        if script.kind == "think":
            thinking = ["Let me ", "think about ", "this."]
        return f"FAKE-LLM reply #{n}: {prompt}", delay, thinking

    async def _hang_or_cut(self, conn: _Conn, script: _Script) -> bool:
        if script.kind == "hang":
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=300)
            return True
        if script.kind == "cut":
            conn.writer.transport.abort()
            return True
        if script.kind == "cutclean":
            await conn.end()
            return True
        return False

    async def _openai(
        self, conn: _Conn, n: int, model: str, prompt: str, result: str | None, script: _Script
    ) -> None:
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
            for piece in _chunks(args, 5):
                await asyncio.sleep(self.chunk_delay_s)
                await send({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            finish, count = "tool_calls", 3
        else:
            text, delay, thinking = self._plan(n, prompt, result, script)
            for piece in thinking:
                await send({"reasoning_content": piece})
            pieces = _chunks(text)
            for i, piece in enumerate(pieces):
                await asyncio.sleep(delay)
                await send({"content": piece})
                if i == 2 and await self._hang_or_cut(conn, script):
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

    async def _anthropic(
        self, conn: _Conn, n: int, model: str, prompt: str, result: str | None, script: _Script
    ) -> None:
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
            await send(
                "content_block_start",
                {
                    "index": 0,
                    "content_block": {
                        "type": "tool_use",
                        "id": f"toolu_fake_{n}",
                        "name": script.arg,
                        "input": {},
                    },
                },
            )
            for piece in _chunks(args, 5):
                await asyncio.sleep(self.chunk_delay_s)
                await send(
                    "content_block_delta",
                    {"index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
            await send("content_block_stop", {"index": 0})
            stop, count = "tool_use", 3
        else:
            text, delay, thinking = self._plan(n, prompt, result, script)
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
            pieces = _chunks(text)
            for i, piece in enumerate(pieces):
                await asyncio.sleep(delay)
                await send(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "text_delta", "text": piece}},
                )
                if i == 2 and await self._hang_or_cut(conn, script):
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


def main(argv: list[str] | None = None) -> None:
    """Serve until SIGTERM/SIGINT (prints ``FAKE-LLM READY <port>`` once listening)."""
    parser = argparse.ArgumentParser(prog="python -m tests.helpers.fake_llm")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path, default=None)
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--bad-key", action="append", default=[], help="a key answered with 401")
    args = parser.parse_args(argv)

    async def run() -> None:
        fake = FakeLLM(
            port=args.port,
            log=args.log,
            models=args.model,
            key_status=dict.fromkeys(args.bad_key, 401),
        )
        serving = asyncio.ensure_future(fake.serve_forever())
        while fake._server is None and not serving.done():
            await asyncio.sleep(0.01)
        print(f"FAKE-LLM READY {fake.port}", flush=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda: fake._stopping.set() if fake._stopping else None)
        await serving
        await fake._shutdown()

    asyncio.run(run())


if __name__ == "__main__":
    main()
