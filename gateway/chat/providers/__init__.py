"""Model providers of the bundled gateway's agent runs: OpenAI-compatible chat completions,
Anthropic Messages, an account pool with failover, and where providers come from."""

from __future__ import annotations

from gateway.chat.providers.anthropic import AnthropicProvider
from gateway.chat.providers.base import (
    CompletionRequest,
    Done,
    ErrorKind,
    ModelRef,
    Provider,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from gateway.chat.providers.config import (
    KEYRING_SERVICE,
    PROVIDERS_FILE,
    ProviderConfigError,
    ProviderSetup,
    load_providers,
)
from gateway.chat.providers.openai import OpenAIProvider
from gateway.chat.providers.pool import AccountStatus, ProviderPool
from gateway.chat.providers.sse import ApiKey, Timeouts

__all__ = [
    "KEYRING_SERVICE",
    "PROVIDERS_FILE",
    "AccountStatus",
    "AnthropicProvider",
    "ApiKey",
    "CompletionRequest",
    "Done",
    "ErrorKind",
    "ModelRef",
    "OpenAIProvider",
    "Provider",
    "ProviderConfigError",
    "ProviderError",
    "ProviderPool",
    "ProviderSetup",
    "StreamEvent",
    "TextDelta",
    "ThinkingDelta",
    "Timeouts",
    "ToolCall",
    "ToolCallDelta",
    "ToolSpec",
    "Usage",
    "load_providers",
]
