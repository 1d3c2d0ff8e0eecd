"""OpenAI-compatible streaming chat completions: OpenAI, Ollama, llama.cpp, vLLM, LM Studio.

``POST {baseUrl}/chat/completions`` with ``stream: true``; the answer is server-sent events
of ``chat.completion.chunk`` objects ending with ``data: [DONE]``. The message conversion and
the chunk assembly (:class:`OpenAIStreamState`) are pure; :class:`OpenAIProvider` does the I/O.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

from gateway.chat.providers.base import (
    CompletionRequest,
    Done,
    ModelRef,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from gateway.chat.providers.sse import (
    ApiKey,
    Timeouts,
    http_client,
    kind_for_status,
    public_url,
    redact,
    stream_sse,
)

__all__ = [
    "OPENAI_BASE_URL",
    "OpenAIProvider",
    "OpenAIStreamState",
    "assemble_tool_call",
    "openai_body",
    "to_openai_messages",
]

log = logging.getLogger("gateway.providers")

OPENAI_BASE_URL = "https://api.openai.com/v1"
_FINISH = {
    "stop": "stop",
    "tool_calls": "toolUse",
    "function_call": "toolUse",
    "length": "length",
    "content_filter": "refusal",
}
_IMAGE_OMITTED = "[image omitted: this model does not accept images]"
_EFFORTS = ("minimal", "low", "medium", "high")


def _text_of(parts: Any) -> str:
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return ""
    return "".join(
        p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"
    )


def _image_url(part: Mapping[str, Any]) -> dict[str, Any]:
    mime = part.get("mimeType") or "image/png"
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{part.get('data', '')}"}}


def _user_content(content: Any, *, vision: bool) -> str | list[dict[str, Any]]:
    """A user message's content: a plain string when it is text only (every server accepts
    that), else text and ``image_url`` parts (images replaced by a note without vision)."""
    if isinstance(content, str):
        return content
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            parts.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image":
            parts.append(_image_url(part) if vision else {"type": "text", "text": _IMAGE_OMITTED})
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def to_openai_messages(
    system: str, messages: list[dict[str, Any]], *, vision: bool
) -> list[dict[str, Any]]:
    """Our transcript messages as OpenAI chat messages.

    Assistant tool calls become ``tool_calls``; tool results become ``role: "tool"``
    messages. OpenAI tool messages carry text only, so images of tool results follow the
    run of tool messages as one user message (with vision), or as a note (without).
    """
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    pending_images: list[dict[str, Any]] = []

    def flush_images() -> None:
        if pending_images:
            out.append({"role": "user", "content": list(pending_images)})
            pending_images.clear()

    for message in messages:
        role = message.get("role")
        if role != "toolResult":
            flush_images()
        if role == "user":
            out.append(
                {"role": "user", "content": _user_content(message.get("content"), vision=vision)}
            )
        elif role == "assistant":
            content = message.get("content")
            text = _text_of(content)
            calls = [
                {
                    "id": str(p.get("id", "")),
                    "type": "function",
                    "function": {
                        "name": str(p.get("name", "")),
                        "arguments": json.dumps(p.get("arguments") or {}, ensure_ascii=False),
                    },
                }
                for p in (content if isinstance(content, list) else [])
                if isinstance(p, dict) and p.get("type") == "toolCall"
            ]
            converted: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                converted["tool_calls"] = calls
            elif not text:
                converted["content"] = ""
            out.append(converted)
        elif role == "toolResult":
            content = message.get("content")
            text = _text_of(content)
            images = [
                p
                for p in (content if isinstance(content, list) else [])
                if isinstance(p, dict) and p.get("type") == "image"
            ]
            if images and not vision:
                text = f"{text}\n{_IMAGE_OMITTED}" if text else _IMAGE_OMITTED
            elif images:
                pending_images.extend(_image_url(p) for p in images)
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": str(message.get("toolCallId", "")),
                    "content": text,
                }
            )
    flush_images()
    return out


def openai_body(request: CompletionRequest) -> dict[str, Any]:
    """The JSON body of a streaming chat completion for ``request``."""
    model = request.model
    body: dict[str, Any] = {
        "model": model.model,
        "messages": to_openai_messages(request.system, request.messages, vision=model.vision),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.max_tokens:
        body["max_tokens"] = request.max_tokens
    if request.tools:
        body["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    if model.reasoning and request.thinking in _EFFORTS:
        body["reasoning_effort"] = request.thinking
    return body


def assemble_tool_call(call_id: str, name: str, raw: str) -> ToolCall:
    """A complete tool call from its streamed JSON arguments; invalid JSON or a non-object
    gives ``arguments=None`` and an ``error`` (never an exception). Empty means ``{}``."""
    if not raw.strip():
        return ToolCall(id=call_id, name=name, arguments={}, raw=raw)
    try:
        parsed = json.loads(raw)
    except ValueError as exc:
        return ToolCall(
            id=call_id, name=name, arguments=None, raw=raw, error=f"invalid JSON arguments: {exc}"
        )
    if not isinstance(parsed, dict):
        return ToolCall(
            id=call_id,
            name=name,
            arguments=None,
            raw=raw,
            error=f"invalid JSON arguments: expected an object, got {type(parsed).__name__}",
        )
    return ToolCall(id=call_id, name=name, arguments=parsed, raw=raw)


class _PendingCall:
    def __init__(self, call_id: str, name: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments: list[str] = []


class OpenAIStreamState:
    """Assembles ``chat.completion.chunk`` objects into stream events.

    :meth:`feed` returns the deltas of one chunk; :meth:`finish` (at ``[DONE]``) returns the
    complete tool calls, the usage and :class:`Done`.
    """

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._finish: str | None = None
        self._usage: Usage | None = None
        self._response_id: str | None = None
        self._refused = False

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """The events of one chunk (a parsed ``data:`` payload)."""
        events: list[StreamEvent] = []
        if isinstance(chunk.get("id"), str) and self._response_id is None:
            self._response_id = chunk["id"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self._usage = _usage(usage)
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return events
        choice = choices[0]
        delta = choice.get("delta")
        if isinstance(delta, dict):
            for key in ("reasoning_content", "reasoning"):
                thinking = delta.get(key)
                if isinstance(thinking, str) and thinking:
                    events.append(ThinkingDelta(thinking))
                    break
            for key in ("content", "refusal"):
                text = delta.get(key)
                if isinstance(text, str) and text:
                    events.append(TextDelta(text))
                    self._refused = self._refused or key == "refusal"
            calls = delta.get("tool_calls")
            if isinstance(calls, list):
                for position, fragment in enumerate(calls):
                    if isinstance(fragment, dict):
                        events.extend(self._tool_fragment(position, fragment))
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self._finish = reason
        return events

    def _tool_fragment(self, position: int, fragment: Mapping[str, Any]) -> list[StreamEvent]:
        index = fragment.get("index")
        if not isinstance(index, int):
            index = position
        function = fragment.get("function")
        function = function if isinstance(function, dict) else {}
        pending = self._calls.get(index)
        if pending is None:
            call_id = fragment.get("id")
            pending = _PendingCall(
                call_id if isinstance(call_id, str) and call_id else f"call_{len(self._calls) + 1}",
                "",
            )
            self._calls[index] = pending
        name = function.get("name")
        if isinstance(name, str) and name and not pending.name:
            pending.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, dict):  # some servers send an object, not a string
            arguments = json.dumps(arguments)
        if isinstance(arguments, str) and arguments:
            pending.arguments.append(arguments)
            return [ToolCallDelta(id=pending.id, name=pending.name, fragment=arguments)]
        return []

    def finish(self) -> list[StreamEvent]:
        """The closing events: complete tool calls, usage, and Done."""
        events: list[StreamEvent] = [
            assemble_tool_call(c.id, c.name, "".join(c.arguments))
            for _, c in sorted(self._calls.items())
        ]
        if self._usage is not None:
            events.append(self._usage)
        reason = _FINISH.get(self._finish or "stop", "stop")
        if self._calls and reason == "stop":
            reason = "toolUse"  # servers that report "stop" after tool calls
        if self._refused:
            reason = "refusal"
        events.append(Done(stop_reason=reason, response_id=self._response_id))
        return events


def _usage(raw: Mapping[str, Any]) -> Usage:
    """OpenAI usage; ``input_tokens`` excludes the cached part (reported as cache reads)."""
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    cached = cached if isinstance(cached, int) else 0
    prompt = raw.get("prompt_tokens")
    completion = raw.get("completion_tokens")
    return Usage(
        input_tokens=max(0, (prompt if isinstance(prompt, int) else 0) - cached),
        output_tokens=completion if isinstance(completion, int) else 0,
        cache_read_tokens=cached,
    )


class OpenAIProvider:
    """One account of an OpenAI-compatible endpoint.

    ``models`` are the configured models; with ``discover`` :meth:`list_models` adds the
    ones ``GET {baseUrl}/models`` lists. ``api_key`` None sends no Authorization header
    (local servers).
    """

    def __init__(
        self,
        name: str,
        *,
        base_url: str = OPENAI_BASE_URL,
        api_key: ApiKey | str | None = None,
        models: list[ModelRef] | None = None,
        discover: bool = False,
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
        label: str = "",
    ) -> None:
        self.name = name
        self.label = label or name
        self.base_url = base_url.rstrip("/")
        self._key = api_key if isinstance(api_key, ApiKey) else ApiKey(api_key)
        self._models = list(models or [])
        self._discover = discover
        self._headers = dict(headers or {})
        self.timeouts = timeouts or Timeouts()
        self._client = http_client(self.base_url)

    def __repr__(self) -> str:
        return f"OpenAIProvider({self.label!r}, {public_url(self.base_url)!r})"

    async def _request_headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream", **self._headers}
        key = await self._key.get(provider=self.name)
        if key:
            headers["authorization"] = f"Bearer {key}"
        return headers

    async def list_models(self) -> list[ModelRef]:
        """The configured models, then the discovered ones not configured (on failure of
        discovery, the configured ones alone)."""
        models = list(self._models)
        if not self._discover:
            return models
        try:
            found = await self.discover_model_ids()
        except ProviderError as exc:
            log.warning("model discovery failed for %s: %s", self.label, exc.message)
            return models
        known = {m.model for m in models}
        models.extend(
            ModelRef(provider=self.name, model=model_id, api="openai-completions", name=model_id)
            for model_id in found
            if model_id not in known
        )
        return models

    async def discover_model_ids(self) -> list[str]:
        """The model ids of ``GET {baseUrl}/models`` (bounded by the connect timeout)."""
        import httpx

        url = f"{self.base_url}/models"
        headers = await self._request_headers()
        headers["accept"] = "application/json"
        try:
            response = await self._client.get(url, headers=headers, timeout=self.timeouts.connect)
            response.raise_for_status()
            data = response.json().get("data")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            text = redact(
                f"{self.name}: GET {public_url(url)} failed: {type(exc).__name__}",
                [self._key.known],
            )
            raise ProviderError("unavailable", text, provider=self.name) from None
        ids = [m.get("id") for m in data if isinstance(m, dict)] if isinstance(data, list) else []
        return [i for i in ids if isinstance(i, str) and i]

    async def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn (see the module docstring); raises ProviderError."""
        model = request.model.model
        headers = await self._request_headers()
        state = OpenAIStreamState()
        events = stream_sse(
            self._client,
            f"{self.base_url}/chat/completions",
            headers=headers,
            body=openai_body(request),
            timeouts=self.timeouts,
            provider=self.name,
            model=model,
            secrets=[self._key.known],
        )
        async with aclosing(events):
            async for event in events:
                data = event.data.strip()
                if data == "[DONE]":
                    for out in state.finish():
                        yield out
                    return
                if not data:
                    continue
                try:
                    chunk = json.loads(data)
                except ValueError:
                    log.debug("%s: skipping a non-JSON event", self.label)
                    continue
                if not isinstance(chunk, dict):
                    continue
                if isinstance(chunk.get("error"), dict | str):
                    raise _stream_error(
                        chunk["error"], provider=self.name, model=model, secret=self._key.known
                    )
                for out in state.feed(chunk):
                    yield out
        raise ProviderError(
            "unavailable",
            f"{self.name}: the stream ended early (no [DONE])",
            provider=self.name,
            model=model,
            transport="interrupted",
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()


def _stream_error(error: Any, *, provider: str, model: str, secret: str | None) -> ProviderError:
    """An error object sent inside the stream (vLLM, OpenRouter, Ollama do this)."""
    text = error if isinstance(error, str) else str(error.get("message") or error)
    code = error.get("code") if isinstance(error, dict) else None
    status = code if isinstance(code, int) else 500
    kind = kind_for_status(status, text)
    return ProviderError(
        kind, redact(f"{provider}: {text}"[:400], [secret]), provider=provider, model=model
    )
