"""Both provider APIs over real HTTP against the fake model server."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from gateway.chat.providers import (
    AnthropicProvider,
    CompletionRequest,
    Done,
    ModelRef,
    OpenAIProvider,
    Provider,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    Timeouts,
    ToolCall,
    ToolCallDelta,
    ToolSpec,
    Usage,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.ports import free_port

APIS = ["openai-completions", "anthropic-messages"]
READ_TOOL = ToolSpec(
    "read", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
)
SHORT = Timeouts(connect=2.0, read=0.5, write=2.0)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A fake model server on a free loopback port."""
    with FakeLLM() as server:
        yield server


@pytest.fixture(params=APIS)
async def provider(request: pytest.FixtureRequest, fake: FakeLLM) -> AsyncIterator[Provider]:
    """An account of each API against the fake (key sk-test-key)."""
    made: Provider
    if request.param == "openai-completions":
        made = OpenAIProvider(
            "p", base_url=fake.openai_base_url, api_key="sk-test-key", timeouts=SHORT
        )
    else:
        made = AnthropicProvider("p", base_url=fake.base_url, api_key="sk-test-key", timeouts=SHORT)
    yield made
    await made.aclose()


def model_of(provider: Provider) -> ModelRef:
    """The fake model in the provider's API."""
    api = "anthropic-messages" if isinstance(provider, AnthropicProvider) else "openai-completions"
    return ModelRef("p", "fake-model", api)  # type: ignore[arg-type]


def req(provider: Provider, messages: list[dict[str, Any]], **kw: Any) -> CompletionRequest:
    """A request with the read tool."""
    return CompletionRequest(
        model=model_of(provider), system="sys", messages=messages, tools=[READ_TOOL], **kw
    )


async def collect(provider: Provider, request: CompletionRequest) -> list[StreamEvent]:
    """Every event of one stream."""
    return [e async for e in provider.stream(request)]


async def drain(stream: AsyncIterator[StreamEvent], seen: list[StreamEvent]) -> None:
    """Append every event of ``stream`` to ``seen`` (kept when the stream raises)."""
    async for event in stream:
        seen.append(event)


def user(text: str) -> dict[str, Any]:
    """A user message."""
    return {"role": "user", "content": text}


async def test_text_streams_in_several_deltas_with_usage(provider: Provider, fake: FakeLLM) -> None:
    """A plain prompt streams several text deltas, then usage, then Done(stop)."""
    events = await collect(provider, req(provider, [user("hello world")]))
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(texts) > 2
    assert "".join(texts) == "FAKE-LLM reply #1: hello world"
    assert isinstance(events[-2], Usage)
    assert events[-2].output_tokens == len(texts)
    assert isinstance(events[-1], Done)
    assert events[-1].stop_reason == "stop"
    assert events[-1].response_id
    sent = fake.requests[-1]
    assert sent.api_key == "sk-test-key"
    assert sent.body["stream"] is True
    if isinstance(provider, AnthropicProvider):
        assert sent.path == "/v1/messages"
        assert sent.headers["anthropic-version"] == "2023-06-01"
        assert sent.body["system"] == "sys"
        assert sent.body["tools"][0]["input_schema"]["type"] == "object"
    else:
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == "Bearer sk-test-key"
        assert sent.body["stream_options"] == {"include_usage": True}
        assert sent.body["messages"][0] == {"role": "system", "content": "sys"}
        assert sent.body["tools"][0]["function"]["name"] == "read"


async def test_thinking_deltas(provider: Provider) -> None:
    """Reasoning arrives as thinking deltas before the text."""
    events = await collect(provider, req(provider, [user("THINK please")]))
    thinking = [e.text for e in events if isinstance(e, ThinkingDelta)]
    assert "".join(thinking) == "Let me think about this."
    assert isinstance(events[0], ThinkingDelta)


async def test_tool_call_round(provider: Provider, fake: FakeLLM) -> None:
    """A tool call streams its arguments, completes, and after the result (plus a synthetic
    user message, like the real gateway sends) the model answers quoting the result."""
    prompt = user('CALLTOOL:read:{"path": "/etc/hostname"}')
    first = await collect(provider, req(provider, [prompt]))
    fragments = [e for e in first if isinstance(e, ToolCallDelta)]
    assert len(fragments) > 1
    calls = [e for e in first if isinstance(e, ToolCall)]
    assert len(calls) == 1
    call = calls[0]
    assert call.name == "read"
    assert call.arguments == {"path": "/etc/hostname"}
    assert call.error is None
    assert all(f.id == call.id for f in fragments)
    assert first[-1] == Done("toolUse", response_id=first[-1].response_id)  # type: ignore[union-attr]
    history = [
        prompt,
        {
            "role": "assistant",
            "content": [
                {"type": "toolCall", "id": call.id, "name": call.name, "arguments": call.arguments}
            ],
        },
        {
            "role": "toolResult",
            "toolCallId": call.id,
            "toolName": "read",
            "content": [{"type": "text", "text": "my-host-name"}],
            "isError": False,
        },
        user("Continue from the tool result."),
    ]
    second = await collect(provider, req(provider, history))
    text = "".join(e.text for e in second if isinstance(e, TextDelta))
    assert text == "FAKE-LLM tool result: my-host-name"
    assert isinstance(second[-1], Done)
    assert second[-1].stop_reason == "stop"
    body = fake.requests[-1].body
    if isinstance(provider, AnthropicProvider):
        assert body["messages"][1]["content"][0]["type"] == "tool_use"
        assert body["messages"][2]["content"][0] == {
            "type": "tool_result",
            "tool_use_id": call.id,
            "content": [{"type": "text", "text": "my-host-name"}],
        }
    else:
        assert body["messages"][2]["tool_calls"][0]["id"] == call.id
        assert body["messages"][3] == {
            "role": "tool",
            "tool_call_id": call.id,
            "content": "my-host-name",
        }


async def test_invalid_tool_json_is_reported_not_raised(provider: Provider) -> None:
    """Invalid JSON arguments end as a ToolCall with an error, and the turn still ends."""
    events = await collect(provider, req(provider, [user("BADJSON:read")]))
    call = next(e for e in events if isinstance(e, ToolCall))
    assert call.arguments is None
    assert (call.error or "").startswith("invalid JSON arguments")
    assert isinstance(events[-1], Done)


@pytest.mark.parametrize(
    ("prompt", "kind", "status"),
    [
        ("FAIL:401", "auth", 401),
        ("FAIL:429", "rate_limit", 429),
        ("FAIL:500", "unavailable", 500),
        ("FAIL:context", "context_length", 400),
    ],
)
async def test_http_errors_map_to_kinds(
    provider: Provider, prompt: str, kind: str, status: int
) -> None:
    """HTTP errors raise ProviderError of the right kind, without the key in the message."""
    with pytest.raises(ProviderError) as info:
        await collect(provider, req(provider, [user(prompt)]))
    assert info.value.kind == kind
    assert info.value.http_status == status
    assert "sk-test-key" not in str(info.value)
    if kind == "rate_limit":
        assert info.value.retry_after_s == 1.0
    if kind == "auth":
        assert "Incorrect API key provided: ***" in info.value.message


async def test_hang_times_out_within_the_bound(provider: Provider) -> None:
    """Headers then silence: a timeout after the idle bound (0.5 s), output kept so far."""
    started = time.monotonic()
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        await drain(provider.stream(req(provider, [user("HANG")])), seen)
    elapsed = time.monotonic() - started
    assert info.value.kind == "timeout"
    assert 0.4 < elapsed < 3.0
    assert any(isinstance(e, TextDelta) for e in seen)


@pytest.mark.parametrize("prompt", ["CUT", "CUTCLEAN"])
async def test_cut_stream_is_unavailable(provider: Provider, prompt: str) -> None:
    """A stream that ends without its end marker (dropped or clean) is 'ended early'."""
    with pytest.raises(ProviderError) as info:
        await collect(provider, req(provider, [user(prompt)]))
    assert info.value.kind == "unavailable"
    assert "the stream ended early" in info.value.message


@pytest.mark.parametrize("api", APIS)
async def test_connection_refused_is_unavailable_quickly(api: str) -> None:
    """Nothing listening: unavailable at once, well inside the connect bound."""
    port = free_port()
    provider: Provider
    if api == "openai-completions":
        provider = OpenAIProvider("p", base_url=f"http://127.0.0.1:{port}/v1", timeouts=SHORT)
    else:
        provider = AnthropicProvider("p", base_url=f"http://127.0.0.1:{port}", timeouts=SHORT)
    started = time.monotonic()
    try:
        with pytest.raises(ProviderError) as info:
            await collect(provider, req(provider, [user("hi")]))
    finally:
        await provider.aclose()
    assert info.value.kind == "unavailable"
    assert f"127.0.0.1:{port}" in info.value.message
    assert time.monotonic() - started < 1.5


async def test_openai_model_discovery(fake: FakeLLM) -> None:
    """With discover, list_models adds the server's models after the configured ones."""
    configured = ModelRef("local", "mine", "openai-completions", context_window=4096)
    provider = OpenAIProvider(
        "local", base_url=fake.openai_base_url, models=[configured], discover=True
    )
    try:
        models = await provider.list_models()
    finally:
        await provider.aclose()
    assert [m.ref for m in models] == ["local/mine", "local/fake-model", "local/fake-model-2"]
    assert models[0].context_window == 4096
    assert "authorization" not in fake.requests[-1].headers


async def test_discovery_failure_keeps_configured_models() -> None:
    """A dead server: list_models returns the configured models only."""
    configured = ModelRef("local", "mine", "openai-completions")
    provider = OpenAIProvider(
        "local", base_url=f"http://127.0.0.1:{free_port()}/v1", models=[configured], discover=True
    )
    try:
        assert await provider.list_models() == [configured]
    finally:
        await provider.aclose()


async def test_abort_mid_stream_closes_the_connection(provider: Provider, fake: FakeLLM) -> None:
    """A consumer that stops reading a slow stream closes it promptly."""
    stream = provider.stream(req(provider, [user("SLOW:200")]))
    started = time.monotonic()
    async for event in stream:
        if isinstance(event, TextDelta):
            break
    await stream.aclose()  # type: ignore[attr-defined]
    assert time.monotonic() - started < 2.0
    assert len(fake.requests) == 1


async def test_text_before_a_tool_call(provider: Provider) -> None:
    """PREAMBLE with CALLTOOL: the model says a sentence, then calls the tool, in one turn
    (the shape of a reply with text before a tool and a final answer after it)."""
    from openclaw_desktop.sdk.testing.fake_model_script import PREAMBLE_TEXT

    events = await collect(provider, req(provider, [user('PREAMBLE CALLTOOL:read:{"path": "a"}')]))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == PREAMBLE_TEXT
    [call] = [e for e in events if isinstance(e, ToolCall)]
    assert (call.name, call.arguments, call.error) == ("read", {"path": "a"}, None)
    first_call = next(i for i, e in enumerate(events) if isinstance(e, ToolCallDelta | ToolCall))
    assert all(not isinstance(e, TextDelta) for e in events[first_call:])
    assert isinstance(events[-1], Done) and events[-1].stop_reason == "toolUse"
