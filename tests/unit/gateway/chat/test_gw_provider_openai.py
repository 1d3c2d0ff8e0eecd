"""OpenAI-compatible message conversion, request body and chunk assembly (no sockets)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.chat.providers.base import (
    CompletionRequest,
    Done,
    ModelRef,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from gateway.chat.providers.openai import (
    OpenAIStreamState,
    assemble_tool_call,
    openai_body,
    to_openai_messages,
)

MODEL = ModelRef("openai", "gpt-test", "openai-completions")
IMAGE = {"type": "image", "data": "QUJD", "mimeType": "image/jpeg"}


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    """A chat.completion.chunk with one choice."""
    return {"id": "c1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def run(chunks: list[dict[str, Any]]) -> list[StreamEvent]:
    """Every event of ``chunks`` then the closing events."""
    state = OpenAIStreamState()
    events = [e for c in chunks for e in state.feed(c)]
    return events + state.finish()


def test_conversation_with_tool_round() -> None:
    """System first; tool calls become tool_calls; tool results role tool with the call id."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "read it"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "/a"}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [{"type": "text", "text": "contents"}],
            "isError": False,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    out = to_openai_messages("be brief", messages, vision=False)
    assert out[0] == {"role": "system", "content": "be brief"}
    assert out[1] == {"role": "user", "content": "read it"}
    assert out[2]["role"] == "assistant"
    assert out[2]["content"] == "Reading."
    call = out[2]["tool_calls"][0]
    assert call["id"] == "call_1"
    assert call["type"] == "function"
    assert call["function"]["name"] == "read"
    assert json.loads(call["function"]["arguments"]) == {"path": "/a"}
    assert out[3] == {"role": "tool", "tool_call_id": "call_1", "content": "contents"}
    assert out[4] == {"role": "assistant", "content": "Done."}


def test_assistant_with_only_tool_calls_has_null_content() -> None:
    """An assistant turn of tool calls only has content null; an empty one has ''."""
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c", "name": "n", "arguments": {}}],
        },
        {"role": "assistant", "content": []},
    ]
    out = to_openai_messages("", messages, vision=False)
    assert out[0]["content"] is None
    assert json.loads(out[0]["tool_calls"][0]["function"]["arguments"]) == {}
    assert out[1] == {"role": "assistant", "content": ""}


def test_images_only_with_vision() -> None:
    """Images become data URLs with vision; without, a note replaces them."""
    user = {"role": "user", "content": [{"type": "text", "text": "what is this"}, IMAGE]}
    with_vision = to_openai_messages("", [user], vision=True)[0]["content"]
    assert with_vision[0] == {"type": "text", "text": "what is this"}
    assert with_vision[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/jpeg;base64,QUJD"},
    }
    without = to_openai_messages("", [user], vision=False)[0]["content"]
    assert isinstance(without, str)
    assert without.startswith("what is this\n[image omitted")
    assert "QUJD" not in without


def test_tool_result_images_follow_the_tool_messages() -> None:
    """Tool messages carry text; their images come right after the run of tool messages."""
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": "a", "name": "snap", "arguments": {}},
                {"type": "toolCall", "id": "b", "name": "snap", "arguments": {}},
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": "a",
            "content": [{"type": "text", "text": "one"}, IMAGE],
        },
        {"role": "toolResult", "toolCallId": "b", "content": [IMAGE]},
        {"role": "user", "content": "next"},
    ]
    out = to_openai_messages("", messages, vision=True)
    assert [m["role"] for m in out] == ["assistant", "tool", "tool", "user", "user"]
    assert out[1]["content"] == "one"
    assert [p["type"] for p in out[3]["content"]] == ["image_url", "image_url"]
    assert out[4]["content"] == "next"
    blind = to_openai_messages("", messages, vision=False)
    assert [m["role"] for m in blind] == ["assistant", "tool", "tool", "user"]
    assert "image omitted" in blind[2]["content"]


def test_body_has_stream_usage_tools_and_effort() -> None:
    """The body streams with usage, offers function tools, and passes reasoning effort."""
    request = CompletionRequest(
        model=ModelRef("o", "r1", "openai-completions", reasoning=True),
        system="s",
        messages=[{"role": "user", "content": "hi"}],
        tools=[ToolSpec("read", "Read a file", {"type": "object", "properties": {}})],
        thinking="high",
        max_tokens=100,
    )
    body = openai_body(request)
    assert body["model"] == "r1"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 100
    assert body["reasoning_effort"] == "high"
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object", "properties": {}},
            },
        }
    ]
    plain = openai_body(CompletionRequest(model=MODEL, system="", messages=[], thinking="high"))
    assert "tools" not in plain
    assert "reasoning_effort" not in plain
    assert "max_tokens" not in plain


def test_text_reasoning_usage_and_done() -> None:
    """Content is text, reasoning_content/reasoning is thinking, usage and Done come last."""
    events = run(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning_content": "think"}),
            chunk({"reasoning": "more"}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
            {
                "id": "c1",
                "choices": [],
                "usage": {
                    "prompt_tokens": 10,
                    "completion_tokens": 3,
                    "prompt_tokens_details": {"cached_tokens": 4},
                },
            },
        ]
    )
    assert events == [
        ThinkingDelta("think"),
        ThinkingDelta("more"),
        TextDelta("Hel"),
        TextDelta("lo"),
        Usage(input_tokens=6, output_tokens=3, cache_read_tokens=4),
        Done("stop", response_id="c1"),
    ]


def test_two_interleaved_tool_calls_are_assembled_by_index() -> None:
    """Fragments are keyed by index; id and name come first; one ToolCall per call at the end."""
    events = run(
        [
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "read", "arguments": ""},
                        }
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "function": {"name": "list", "arguments": "{}"},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"pa'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "/x"}'}}]}),
            chunk({}, "tool_calls"),
        ]
    )
    assert events[:3] == [
        ToolCallDelta("call_b", "list", "{}"),
        ToolCallDelta("call_a", "read", '{"pa'),
        ToolCallDelta("call_a", "read", 'th": "/x"}'),
    ]
    assert events[3] == ToolCall("call_a", "read", {"path": "/x"}, raw='{"path": "/x"}')
    assert events[4] == ToolCall("call_b", "list", {}, raw="{}")
    assert events[5] == Done("toolUse", response_id="c1")


def test_invalid_json_arguments_become_an_error_not_an_exception() -> None:
    """Broken JSON gives arguments None and an error; a non-object too; empty is {}."""
    broken = assemble_tool_call("c", "read", '{"path": ')
    assert broken.arguments is None
    assert broken.error is not None
    assert broken.error.startswith("invalid JSON arguments: ")
    assert broken.raw == '{"path": '
    listed = assemble_tool_call("c", "read", "[1, 2]")
    assert listed.arguments is None
    assert "expected an object" in (listed.error or "")
    assert assemble_tool_call("c", "read", "  ").arguments == {}


def test_servers_without_ids_indexes_or_tool_finish_reason() -> None:
    """Missing ids are generated, missing indexes use the position, object arguments are
    accepted, and "stop" after tool calls still means toolUse."""
    events = run(
        [
            chunk(
                {
                    "tool_calls": [
                        {"function": {"name": "a", "arguments": {"x": 1}}},
                        {"id": "", "function": {"name": "b", "arguments": "{}"}},
                    ]
                }
            ),
            chunk({}, "stop"),
        ]
    )
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_1", "a", {"x": 1}),
        ("call_2", "b", {}),
    ]
    assert events[-1] == Done("toolUse", response_id="c1")


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        ("stop", "stop"),
        ("length", "length"),
        ("content_filter", "refusal"),
        ("weird", "stop"),
        (None, "stop"),
    ],
)
def test_finish_reasons(finish: str | None, reason: str) -> None:
    """finish_reason maps to our stop reasons (unknown or absent: stop)."""
    assert run([chunk({"content": "x"}, finish)])[-1] == Done(reason, response_id="c1")


def test_refusal_delta_is_text_and_ends_as_refusal() -> None:
    """A refusal delta is shown as text and the turn ends as a refusal."""
    events = run([chunk({"refusal": "I can't help with that."}), chunk({}, "stop")])
    assert events == [TextDelta("I can't help with that."), Done("refusal", response_id="c1")]


def test_malformed_chunks_are_ignored() -> None:
    """Chunks without choices, with odd types, or empty deltas yield nothing."""
    state = OpenAIStreamState()
    for odd in (
        {},
        {"choices": None},
        {"choices": [None]},
        {"choices": [{"delta": "x"}]},
        {"choices": [{"delta": {"content": 5, "tool_calls": "x"}}]},
    ):
        assert state.feed(odd) == []
    assert state.finish() == [Done("stop")]
