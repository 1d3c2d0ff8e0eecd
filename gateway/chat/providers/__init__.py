"""Model providers of the bundled gateway's agent runs: OpenAI-compatible chat completions,
Anthropic Messages, an account pool with failover, and where providers come from."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openclaw_desktop.lazy import lazy_getattr

if TYPE_CHECKING:
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

#: Each public name and the submodule it comes from; loaded on first use, so the gateway
#: starts without an HTTP client or the code of providers it has no account for.
_LAZY = {
    "AccountStatus": "pool",
    "AnthropicProvider": "anthropic",
    "ApiKey": "sse",
    "CompletionRequest": "base",
    "Done": "base",
    "ErrorKind": "base",
    "KEYRING_SERVICE": "config",
    "ModelRef": "base",
    "OpenAIProvider": "openai",
    "PROVIDERS_FILE": "config",
    "Provider": "base",
    "ProviderConfigError": "config",
    "ProviderError": "base",
    "ProviderPool": "pool",
    "ProviderSetup": "config",
    "StreamEvent": "base",
    "TextDelta": "base",
    "ThinkingDelta": "base",
    "Timeouts": "sse",
    "ToolCall": "base",
    "ToolCallDelta": "base",
    "ToolSpec": "base",
    "Usage": "base",
    "load_providers": "config",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


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
