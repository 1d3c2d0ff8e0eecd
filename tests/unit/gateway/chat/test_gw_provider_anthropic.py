"""Anthropic message conversion, request body and stream assembly (no sockets)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.chat.providers.anthropic import (
    AnthropicStreamState,
    anthropic_body,
    error_kind,
    to_anthropic_messages,
)
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
    ToolSpec,
    Usage,
)

MODEL = ModelRef(
    "anthropic", "claude-test", "anthropic-messages", vision=True, max_output_tokens=1000
)
IMAGE = {"type": "image", "data": "QUJD", "mimeType": "image/png"}


def feed(
    events: list[tuple[str, dict[str, Any]]],
) -> tuple[list[StreamEvent], AnthropicStreamState]:
    """Feed (event type, data) pairs; returns our events and the state."""
    state = AnthropicStreamState(provider="anthropic", model="claude-test")
    out = [e for kind, data in events for e in state.feed(kind, {"type": kind, **data})]
    return out, state


def test_tool_round_becomes_tool_use_and_merged_tool_results() -> None:
    """Tool calls become tool_use blocks; results of one turn share one user message, and a
    synthetic user message after them merges into it (roles alternate)."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "look"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "unsigned"},
                {"type": "text", "text": "Looking."},
                {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"p": 1}},
                {"type": "toolCall", "id": "t2", "name": "snap", "arguments": {}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "content": [{"type": "text", "text": "r1"}],
            "isError": True,
        },
        {"role": "toolResult", "toolCallId": "t2", "content": [IMAGE]},
        {"role": "user", "content": "continue"},
    ]
    out = to_anthropic_messages(messages, vision=True)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert out[0]["content"] == [{"type": "text", "text": "look"}]
    assert out[1]["content"] == [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"p": 1}},
        {"type": "tool_use", "id": "t2", "name": "snap", "input": {}},
    ]
    first, second, text = out[2]["content"]
    assert first == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": "r1"}],
        "is_error": True,
    }
    assert second["tool_use_id"] == "t2"
    assert "is_error" not in second
    assert second["content"] == [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"}}
    ]
    assert text == {"type": "text", "text": "continue"}


def test_signed_thinking_is_kept_and_empty_messages_dropped() -> None:
    """A thinking block with its signature goes back; empty text and empty messages do not."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "thinkingSignature": "sig"}],
        },
        {"role": "assistant", "content": ""},
    ]
    out = to_anthropic_messages(messages, vision=False)
    assert out == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "signature": "sig"}],
        },
    ]


def test_images_without_vision_become_a_note() -> None:
    """Without vision no image bytes are sent."""
    out = to_anthropic_messages([{"role": "user", "content": [IMAGE]}], vision=False)
    assert out[0]["content"][0]["type"] == "text"
    assert "image omitted" in out[0]["content"][0]["text"]


def test_body_system_tools_and_thinking_budget() -> None:
    """System is separate; tools use input_schema; thinking sets a budget below max_tokens."""
    request = CompletionRequest(
        model=ModelRef(
            "anthropic", "c", "anthropic-messages", reasoning=True, max_output_tokens=1000
        ),
        system="be nice",
        messages=[{"role": "user", "content": "hi"}],
        tools=[ToolSpec("read", "Read", {"type": "object"})],
        thinking="low",
    )
    body = anthropic_body(request)
    assert body["system"] == "be nice"
    assert body["stream"] is True
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert body["tools"] == [
        {"name": "read", "description": "Read", "input_schema": {"type": "object"}}
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
    plain = anthropic_body(CompletionRequest(model=MODEL, system="", messages=[], max_tokens=50))
    assert plain["max_tokens"] == 50
    assert "system" not in plain
    assert "thinking" not in plain
    assert "tools" not in plain


def test_full_stream_with_thinking_text_and_tool() -> None:
    """A complete stream: thinking, text, a tool call, usage with cache counts, Done."""
    events, state = feed(
        [
            (
                "message_start",
                {
                    "message": {
                        "id": "msg_1",
                        "usage": {
                            "input_tokens": 12,
                            "output_tokens": 1,
                            "cache_read_input_tokens": 5,
                            "cache_creation_input_tokens": 2,
                        },
                    }
                },
            ),
            ("ping", {}),
            (
                "content_block_start",
                {"index": 0, "content_block": {"type": "thinking", "thinking": ""}},
            ),
            (
                "content_block_delta",
                {"index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}},
            ),
            (
                "content_block_delta",
                {"index": 0, "delta": {"type": "signature_delta", "signature": "s"}},
            ),
            ("content_block_stop", {"index": 0}),
            ("content_block_start", {"index": 1, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
            ("content_block_stop", {"index": 1}),
            (
                "content_block_start",
                {
                    "index": 2,
                    "content_block": {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "read",
                        "input": {},
                    },
                },
            ),
            (
                "content_block_delta",
                {"index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"p":'}},
            ),
            (
                "content_block_delta",
                {"index": 2, "delta": {"type": "input_json_delta", "partial_json": " 1}"}},
            ),
            ("content_block_stop", {"index": 2}),
            (
                "message_delta",
                {"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}},
            ),
            ("message_stop", {}),
        ]
    )
    assert events == [
        ThinkingDelta("hm"),
        TextDelta("Hi"),
        ToolCallDelta("toolu_1", "read", '{"p":'),
        ToolCallDelta("toolu_1", "read", " 1}"),
        ToolCall("toolu_1", "read", {"p": 1}, raw='{"p": 1}'),
        Usage(input_tokens=12, output_tokens=30, cache_read_tokens=5, cache_write_tokens=2),
        Done("toolUse", response_id="msg_1"),
    ]
    assert state.finished


def test_tool_without_input_and_with_broken_input() -> None:
    """No input deltas means {}; broken JSON becomes an error on the ToolCall."""
    events, _ = feed(
        [
            (
                "content_block_start",
                {"index": 0, "content_block": {"type": "tool_use", "id": "a", "name": "n"}},
            ),
            ("content_block_stop", {"index": 0}),
            (
                "content_block_start",
                {"index": 1, "content_block": {"type": "tool_use", "id": "b", "name": "n"}},
            ),
            (
                "content_block_delta",
                {"index": 1, "delta": {"type": "input_json_delta", "partial_json": "{oops"}},
            ),
            ("content_block_stop", {"index": 1}),
        ]
    )
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert calls[0].arguments == {}
    assert calls[1].arguments is None
    assert (calls[1].error or "").startswith("invalid JSON arguments")


@pytest.mark.parametrize(
    ("stop", "reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("tool_use", "toolUse"),
        ("max_tokens", "length"),
        ("refusal", "refusal"),
        ("novel", "stop"),
    ],
)
def test_stop_reasons(stop: str, reason: str) -> None:
    """stop_reason maps to our stop reasons."""
    events, _ = feed([("message_delta", {"delta": {"stop_reason": stop}}), ("message_stop", {})])
    assert events[-1] == Done(reason)


@pytest.mark.parametrize(
    ("error_type", "message", "kind"),
    [
        ("overloaded_error", "Overloaded", "unavailable"),
        ("rate_limit_error", "slow", "rate_limit"),
        ("authentication_error", "bad key", "auth"),
        ("invalid_request_error", "prompt is too long", "context_length"),
        ("invalid_request_error", "bad field", "bad_request"),
        ("mystery", "x", "unknown"),
    ],
)
def test_error_event_raises_provider_error(error_type: str, message: str, kind: str) -> None:
    """An error event in the stream raises ProviderError of the matching kind."""
    assert error_kind(error_type, message) == kind
    with pytest.raises(ProviderError) as info:
        feed([("error", {"error": {"type": error_type, "message": message}})])
    assert info.value.kind == kind
    assert message in info.value.message
