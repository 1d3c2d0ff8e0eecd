"""The model-provider interface of the bundled gateway's agent runs.

Messages are in the transcript's (reference) shape:

* user: ``{"role": "user", "content": str | [{"type": "text", "text"}, {"type": "image",
  "data": <base64>, "mimeType"}]}``
* assistant: ``{"role": "assistant", "content": [{"type": "text", "text"}, {"type":
  "thinking", "thinking"}, {"type": "toolCall", "id", "name", "arguments": {...}}]}``
* tool result: ``{"role": "toolResult", "toolCallId", "toolName", "content": [{"type":
  "text", "text"} | {"type": "image", "data", "mimeType"}], "isError": bool}``

A provider turns a :class:`CompletionRequest` into a stream of :data:`StreamEvent` and raises
:class:`ProviderError` (with a kind the run maps to the ``chat`` event's ``errorKind``) on
failure. Providers never retry by themselves; failover between accounts is the pool's job.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from gateway.errors import BundledGatewayError

__all__ = [
    "CompletionRequest",
    "Done",
    "ErrorKind",
    "ModelRef",
    "Provider",
    "ProviderError",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
]

#: Why a provider call failed. ``auth``, ``rate_limit`` and ``context_length`` make the pool
#: fail over to the next account; the run reports the chat ``errorKind`` derived from it.
ErrorKind = Literal[
    "auth",
    "rate_limit",
    "context_length",
    "timeout",
    "refusal",
    "unavailable",
    "bad_request",
    "unknown",
]


@dataclass(frozen=True)
class ModelRef:
    """One model of one provider account."""

    provider: str
    model: str
    api: Literal["openai-completions", "anthropic-messages"]
    name: str = ""
    context_window: int = 128_000
    max_output_tokens: int = 4096
    vision: bool = False
    reasoning: bool = False

    @property
    def ref(self) -> str:
        """``provider/model``."""
        return f"{self.provider}/{self.model}"


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to the model (JSON-schema parameters)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class CompletionRequest:
    """One model turn."""

    model: ModelRef
    system: str
    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = field(default_factory=list)
    thinking: str | None = None
    max_tokens: int | None = None


@dataclass(frozen=True)
class TextDelta:
    """Assistant text."""

    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """Reasoning text (models that expose it)."""

    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A fragment of a tool call's JSON arguments as it streams."""

    id: str
    name: str
    fragment: str


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call. ``arguments`` is None and ``error`` says why when the model's
    JSON was invalid (the run answers the model with that error instead of calling)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw: str = ""
    error: str | None = None


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Done:
    """End of the turn: ``stop_reason`` in the reference's words (``stop``, ``toolUse``,
    ``length``, ``refusal``)."""

    stop_reason: str
    response_id: str | None = None


StreamEvent = TextDelta | ThinkingDelta | ToolCallDelta | ToolCall | Usage | Done


class ProviderError(BundledGatewayError):
    """A provider call failed."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        provider: str = "",
        model: str = "",
        http_status: int | None = None,
        retry_after_s: float | None = None,
        transport: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.provider = provider
        self.model = model
        self.http_status = http_status
        self.retry_after_s = retry_after_s
        #: How a call that got no HTTP answer failed: ``refused``, ``interrupted`` or
        #: ``network`` (its words, see :mod:`gateway.chat.failure_words`).
        self.transport = transport

    @property
    def fails_over(self) -> bool:
        """Whether another account may succeed where this one failed."""
        return self.kind in ("auth", "rate_limit", "context_length")


class Provider(Protocol):
    """One configured provider account."""

    name: str

    async def list_models(self) -> list[ModelRef]:
        """The models this account offers (configured or discovered)."""
        ...

    def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]:
        """Stream one turn; raises ProviderError."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
