"""Anthropic Messages API, streaming (``POST {baseUrl}/v1/messages`` with ``stream: true``).

The answer is server-sent events: ``message_start``, per content block ``content_block_start``
/ ``content_block_delta`` / ``content_block_stop``, then ``message_delta`` (stop reason,
output tokens) and ``message_stop``; ``error`` may come at any point. The conversion and the
event assembly (:class:`AnthropicStreamState`) are pure; :class:`AnthropicProvider` does I/O.
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
    ErrorKind,
    ModelRef,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    Usage,
)
from gateway.chat.providers.openai import assemble_tool_call
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
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_VERSION",
    "AnthropicProvider",
    "AnthropicStreamState",
    "anthropic_body",
    "to_anthropic_messages",
]

log = logging.getLogger("gateway.providers")

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
_STOP = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "refusal": "refusal",
}
_ERROR_KINDS: dict[str, ErrorKind] = {
    "authentication_error": "auth",
    "permission_error": "auth",
    "rate_limit_error": "rate_limit",
    "request_too_large": "context_length",
    "overloaded_error": "unavailable",
    "api_error": "unavailable",
    "timeout_error": "timeout",
    "not_found_error": "bad_request",
}
_THINKING_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
_IMAGE_OMITTED = "[image omitted: this model does not accept images]"


def _blocks(content: Any, *, vision: bool) -> list[dict[str, Any]]:
    """Text and image parts as Anthropic content blocks (empty text is dropped: the API
    rejects empty text blocks)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and part.get("text"):
            blocks.append({"type": "text", "text": str(part["text"])})
        elif part.get("type") == "image":
            if vision:
                source = {
                    "type": "base64",
                    "media_type": part.get("mimeType") or "image/png",
                    "data": part.get("data", ""),
                }
                blocks.append({"type": "image", "source": source})
            else:
                blocks.append({"type": "text", "text": _IMAGE_OMITTED})
    return blocks


def _assistant_blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            blocks.append({"type": "text", "text": str(part["text"])})
        elif kind == "thinking" and part.get("thinking") and part.get("thinkingSignature"):
            # Without its signature the API rejects a thinking block: unsigned ones are dropped.
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(part["thinking"]),
                    "signature": str(part["thinkingSignature"]),
                }
            )
        elif kind == "toolCall":
            arguments = part.get("arguments")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(part.get("id", "")),
                    "name": str(part.get("name", "")),
                    "input": arguments if isinstance(arguments, dict) else {},
                }
            )
    return blocks


def to_anthropic_messages(messages: list[dict[str, Any]], *, vision: bool) -> list[dict[str, Any]]:
    """Our transcript messages as Anthropic messages (the system prompt goes separately).

    Tool results become ``tool_result`` blocks of a user message; consecutive user-side
    messages merge into one (the API wants alternating roles and all results of one turn
    in the next user message). Empty messages are dropped.
    """
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        if role == "user":
            add("user", _blocks(message.get("content"), vision=vision))
        elif role == "assistant":
            add("assistant", _assistant_blocks(message.get("content")))
        elif role == "toolResult":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(message.get("toolCallId", "")),
                "content": _blocks(message.get("content"), vision=vision),
            }
            if message.get("isError"):
                result["is_error"] = True
            add("user", [result])
    return out


def anthropic_body(request: CompletionRequest) -> dict[str, Any]:
    """The JSON body of a streaming Messages request for ``request``."""
    model = request.model
    max_tokens = request.max_tokens or model.max_output_tokens
    body: dict[str, Any] = {
        "model": model.model,
        "max_tokens": max_tokens,
        "messages": to_anthropic_messages(request.messages, vision=model.vision),
        "stream": True,
    }
    if request.system:
        body["system"] = request.system
    if request.tools:
        body["tools"] = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
    budget = _THINKING_BUDGET.get(request.thinking or "")
    if model.reasoning and budget:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if max_tokens <= budget:
            body["max_tokens"] = budget + max_tokens
    return body


def error_kind(error_type: str, message: str) -> ErrorKind:
    """The kind of an Anthropic error ``type`` (an in-stream ``error`` event)."""
    if error_type == "invalid_request_error":
        return kind_for_status(400, message)
    return _ERROR_KINDS.get(error_type, "unknown")


class _Block:
    def __init__(self, kind: str, call_id: str = "", name: str = "") -> None:
        self.kind = kind
        self.id = call_id
        self.name = name
        self.json: list[str] = []


class AnthropicStreamState:
    """Assembles Messages stream events into our stream events."""

    def __init__(self, *, provider: str = "anthropic", model: str = "") -> None:
        self._provider = provider
        self._model = model
        self._blocks: dict[int, _Block] = {}
        self._stop: str | None = None
        self._response_id: str | None = None
        self._input = 0
        self._output = 0
        self._cache_read = 0
        self._cache_write = 0
        self.finished = False

    def feed(self, event_type: str, data: Mapping[str, Any]) -> list[StreamEvent]:
        """The events of one server-sent event; raises ProviderError on an ``error`` event."""
        kind = data.get("type", event_type)
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            return []  # ping and future event types
        events: list[StreamEvent] = handler(data)
        return events

    def _on_message_start(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        message = data.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                self._response_id = message["id"]
            self._take_usage(message.get("usage"))
        return []

    def _on_content_block_start(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        block = data.get("content_block")
        index = data.get("index")
        if not isinstance(block, dict) or not isinstance(index, int):
            return []
        kind = str(block.get("type", ""))
        self._blocks[index] = _Block(kind, str(block.get("id", "")), str(block.get("name", "")))
        if kind == "text" and block.get("text"):
            return [TextDelta(str(block["text"]))]
        if kind == "thinking" and block.get("thinking"):
            return [ThinkingDelta(str(block["thinking"]))]
        return []

    def _on_content_block_delta(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        delta = data.get("delta")
        if not isinstance(delta, dict):
            return []
        kind = delta.get("type")
        if kind == "text_delta" and delta.get("text"):
            return [TextDelta(str(delta["text"]))]
        if kind == "thinking_delta" and delta.get("thinking"):
            return [ThinkingDelta(str(delta["thinking"]))]
        if kind == "input_json_delta" and delta.get("partial_json"):
            block = self._blocks.get(data.get("index", -1))
            if block is None:
                return []
            fragment = str(delta["partial_json"])
            block.json.append(fragment)
            return [ToolCallDelta(id=block.id, name=block.name, fragment=fragment)]
        return []

    def _on_content_block_stop(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        block = self._blocks.get(data.get("index", -1))
        if block is None or block.kind != "tool_use":
            return []
        return [assemble_tool_call(block.id, block.name, "".join(block.json))]

    def _on_message_delta(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        delta = data.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            self._stop = delta["stop_reason"]
        self._take_usage(data.get("usage"))
        return []

    def _on_message_stop(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        self.finished = True
        usage = Usage(
            input_tokens=self._input,
            output_tokens=self._output,
            cache_read_tokens=self._cache_read,
            cache_write_tokens=self._cache_write,
        )
        reason = _STOP.get(self._stop or "end_turn", "stop")
        return [usage, Done(stop_reason=reason, response_id=self._response_id)]

    def _on_error(self, data: Mapping[str, Any]) -> list[StreamEvent]:
        error = data.get("error")
        error = error if isinstance(error, dict) else {}
        error_type = str(error.get("type", ""))
        message = str(error.get("message", "")) or error_type or "error"
        raise ProviderError(
            error_kind(error_type, message),
            f"{self._provider}: {message}"[:400],
            provider=self._provider,
            model=self._model,
        )

    def _take_usage(self, raw: Any) -> None:
        if not isinstance(raw, dict):
            return
        if isinstance(raw.get("input_tokens"), int):
            self._input = raw["input_tokens"]
        if isinstance(raw.get("output_tokens"), int):
            self._output = raw["output_tokens"]  # cumulative in message_delta
        if isinstance(raw.get("cache_read_input_tokens"), int):
            self._cache_read = raw["cache_read_input_tokens"]
        if isinstance(raw.get("cache_creation_input_tokens"), int):
            self._cache_write = raw["cache_creation_input_tokens"]


class AnthropicProvider:
    """One Anthropic account (``x-api-key``); models are the configured ones."""

    def __init__(
        self,
        name: str,
        *,
        base_url: str = ANTHROPIC_BASE_URL,
        api_key: ApiKey | str | None = None,
        models: list[ModelRef] | None = None,
        headers: Mapping[str, str] | None = None,
        timeouts: Timeouts | None = None,
        label: str = "",
    ) -> None:
        self.name = name
        self.label = label or name
        base = base_url.rstrip("/")
        self.base_url = base.removesuffix("/v1")
        self._key = api_key if isinstance(api_key, ApiKey) else ApiKey(api_key)
        self._models = list(models or [])
        self._headers = dict(headers or {})
        self.timeouts = timeouts or Timeouts()
        self._client = http_client(self.base_url)

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.label!r}, {public_url(self.base_url)!r})"

    async def list_models(self) -> list[ModelRef]:
        """The configured models."""
        return list(self._models)

    async def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn (see the module docstring); raises ProviderError."""
        model = request.model.model
        headers = {
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
            **self._headers,
        }
        key = await self._key.get(provider=self.name)
        if key:
            headers["x-api-key"] = key
        state = AnthropicStreamState(provider=self.name, model=model)
        events = stream_sse(
            self._client,
            f"{self.base_url}/v1/messages",
            headers=headers,
            body=anthropic_body(request),
            timeouts=self.timeouts,
            provider=self.name,
            model=model,
            secrets=[key],
        )
        async with aclosing(events):
            async for event in events:
                try:
                    data = json.loads(event.data) if event.data.strip() else {}
                except ValueError:
                    log.debug("%s: skipping a non-JSON event", self.label)
                    continue
                if not isinstance(data, dict):
                    continue
                try:
                    out = state.feed(event.event, data)
                except ProviderError as exc:
                    exc.message = redact(exc.message, [key])
                    exc.args = (exc.message,)
                    raise
                for item in out:
                    yield item
                if state.finished:
                    return
        raise ProviderError(
            "unavailable",
            f"{self.name}: the stream ended early (no message_stop)",
            provider=self.name,
            model=model,
            transport="interrupted",
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()
