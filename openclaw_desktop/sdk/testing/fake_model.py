"""A scripted fake model server, OpenAI- and Anthropic-compatible, over real HTTP on 127.0.0.1.

For tests of apps built on the OpenClaw SDK (and of OpenClaw Desktop itself): point a gateway
at it (:class:`~openclaw_desktop.sdk.testing.TestGateway` does) and the model's answers are
decided by the prompt, with no network and no API key. It runs its own event loop in a
background thread (usable from sync and async tests alike), or as a process:
``python -m openclaw_desktop.sdk.testing.fake_model --port N [--log FILE]`` prints
``FAKE-LLM READY <port>`` and serves until SIGTERM/SIGINT.

Endpoints: ``POST /v1/chat/completions`` (and ``/chat/completions``), ``POST /v1/messages``,
``GET /v1/models`` (and ``/models``), ``GET /api/tags`` (Ollama). Behaviour is scripted by the
prompt, the last *real* user message (one not directly following tool results: the real
gateway appends a synthetic user message after them):

* default: ``FAKE-LLM reply #<n>: <prompt>`` in several chunks, a few ms apart;
* ``CALLTOOL:<name>:<json>``: one tool call; once a tool result follows the prompt, a text
  reply quoting the result (``FAKE-LLM tool result: ...``);
* ``PREAMBLE`` with ``CALLTOOL``: a sentence of text first, then the tool call (a reply
  with text before a tool and a final answer after it);
* ``BADJSON:<name>``: a tool call with invalid JSON arguments (then like CALLTOOL);
* ``THINK``: reasoning deltas before the reply;
* ``SLOW:<ms>``: 20 chunks, ``<ms>`` apart;
* ``FAIL:401|429|500|context``: that HTTP error (429 with ``Retry-After``);
* ``HANG``: headers, then silence; ``CUT``: a few chunks, then the connection drops;
  ``CUTCLEAN``: a few chunks, then a clean end without ``[DONE]``/``message_stop``.

``key_status`` maps an API key to an HTTP status every request with that key gets (failover
tests). Every request is recorded (:attr:`FakeLLM.requests`, and a JSONL file with ``log``).
The script language itself lives in :mod:`openclaw_desktop.sdk.testing.fake_model_script`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_desktop.sdk.testing.fake_model_script import (
    INTERNAL_CONTEXT_MARK,
    Script,
    error_payload,
    find_prompt,
    parse_script,
)
from openclaw_desktop.sdk.testing.fake_model_streams import (
    HttpExchange,
    Turn,
    stream_anthropic,
    stream_openai,
)

__all__ = ["INTERNAL_CONTEXT_MARK", "FakeLLM", "RecordedRequest", "find_prompt", "main"]

_HEADER_LIMIT = 64 * 1024
_BODY_LIMIT = 32 * 1024 * 1024


@dataclass
class RecordedRequest:
    """One request the fake received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    api_key: str | None


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

    @property
    def running(self) -> bool:
        """Whether :meth:`start` has run and :meth:`stop` has not."""
        return self._thread is not None

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
        conn = HttpExchange(writer)
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
            script = parse_script(prompt)
            model = str(body.get("model", "")) if isinstance(body, dict) else ""
            if script.kind == "fail":
                code = 400 if script.arg == "context" else int(script.arg)
                await self._error(
                    conn, code, anthropic=anthropic, context=script.arg == "context", key=key
                )
            else:
                turn = Turn(n, model, prompt, result, script, self.chunk_delay_s, self._hang_or_cut)
                await (stream_anthropic if anthropic else stream_openai)(conn, turn)
        else:
            await conn.json(404, {"error": {"message": f"no route {method} {path}"}})

    async def _error(
        self,
        conn: HttpExchange,
        status: int,
        *,
        anthropic: bool,
        context: bool = False,
        key: str | None = None,
    ) -> None:
        """An error answer (see :func:`error_payload`); a 429 carries ``Retry-After``."""
        extra = {"retry-after": self.retry_after} if status == 429 else None
        payload = error_payload(status, anthropic=anthropic, context=context, key=key)
        await conn.json(status, payload, extra)

    async def _hang_or_cut(self, conn: HttpExchange, script: Script) -> bool:
        if script.kind == "hang":
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(300):
                    await self._stopping.wait()
            return True
        if script.kind == "cut":
            conn.writer.transport.abort()
            return True
        if script.kind == "cutclean":
            await conn.end()
            return True
        return False


def main(argv: list[str] | None = None) -> None:
    """Serve until SIGTERM/SIGINT (prints ``FAKE-LLM READY <port>`` once listening)."""
    parser = argparse.ArgumentParser(prog="python -m openclaw_desktop.sdk.testing.fake_model")
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
        sys.stdout.write(f"FAKE-LLM READY {fake.port}\n")
        sys.stdout.flush()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, lambda: fake._stopping.set() if fake._stopping else None)
        await serving
        await fake._shutdown()

    asyncio.run(run())


if __name__ == "__main__":
    main()
