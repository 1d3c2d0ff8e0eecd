"""Account failover over real HTTP: bad keys, rate limits, every account down."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from gateway.chat.providers import (
    AnthropicProvider,
    CompletionRequest,
    ModelRef,
    OpenAIProvider,
    ProviderError,
    ProviderPool,
    StreamEvent,
    TextDelta,
    Timeouts,
)
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.ports import free_port

MODEL = ModelRef("openai", "fake-model", "openai-completions")
SHORT = Timeouts(connect=2.0, read=2.0, write=2.0)


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    """A fake where sk-bad gets 401 and sk-limited gets 429 (Retry-After: 30)."""
    with FakeLLM(key_status={"sk-bad": 401, "sk-limited": 429}, retry_after="30") as server:
        yield server


def accounts(fake: FakeLLM, *keys: str) -> list[OpenAIProvider]:
    """One OpenAI account per key against the fake."""
    return [
        OpenAIProvider(
            "openai",
            base_url=fake.openai_base_url,
            api_key=k,
            timeouts=SHORT,
            label=f"openai#{i + 1}",
        )
        for i, k in enumerate(keys)
    ]


async def ask(pool: ProviderPool, text: str = "hi", model: ModelRef = MODEL) -> list[StreamEvent]:
    """Every event of one pooled turn."""
    request = CompletionRequest(
        model=model, system="", messages=[{"role": "user", "content": text}]
    )
    return [e async for e in pool.stream(request)]


def text_of(events: list[StreamEvent]) -> str:
    """The streamed text."""
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_401_fails_over_to_the_second_key(fake: FakeLLM) -> None:
    """The bad key is tried once; the good key answers; later turns skip the bad key."""
    pool = ProviderPool({"openai": accounts(fake, "sk-bad", "sk-good")})
    try:
        assert text_of(await ask(pool)).startswith("FAKE-LLM reply")
        assert pool.failovers == 1
        assert text_of(await ask(pool)).startswith("FAKE-LLM reply")
    finally:
        await pool.aclose()
    assert [r.api_key for r in fake.requests] == ["sk-bad", "sk-good", "sk-good"]
    bad = pool.status()[0]
    assert bad.state == "auth_failed"
    assert "sk-bad" not in (bad.last_error or "")


async def test_429_cools_down_the_account_for_retry_after(fake: FakeLLM) -> None:
    """A 429 with Retry-After 30 keeps the account out of the next turns."""
    pool = ProviderPool({"openai": accounts(fake, "sk-limited", "sk-good")})
    try:
        await ask(pool)
        await ask(pool)
    finally:
        await pool.aclose()
    assert [r.api_key for r in fake.requests] == ["sk-limited", "sk-good", "sk-good"]
    status = pool.status()[0]
    assert status.state == "cooldown"
    assert status.retry_in_s is not None
    assert 25 < status.retry_in_s <= 30


async def test_all_accounts_down_raises_the_last_error(fake: FakeLLM) -> None:
    """Bad key then rate-limited key: the rate limit (last) is raised."""
    pool = ProviderPool({"openai": accounts(fake, "sk-bad", "sk-limited")})
    try:
        with pytest.raises(ProviderError) as info:
            await ask(pool)
    finally:
        await pool.aclose()
    assert info.value.kind == "rate_limit"
    assert info.value.retry_after_s == 30.0
    assert pool.failovers == 1


async def test_server_error_does_not_fail_over(fake: FakeLLM) -> None:
    """A 500 is the provider's problem, not the key's: no failover, no cool-down."""
    pool = ProviderPool({"openai": accounts(fake, "sk-a", "sk-b")})
    try:
        with pytest.raises(ProviderError) as info:
            await ask(pool, "FAIL:500")
    finally:
        await pool.aclose()
    assert info.value.kind == "unavailable"
    assert [r.api_key for r in fake.requests] == ["sk-a"]
    assert pool.status()[0].state == "ok"


async def test_provider_down_is_unavailable_quickly() -> None:
    """Nothing listening behind any account: unavailable, fast."""
    dead = [OpenAIProvider("openai", base_url=f"http://127.0.0.1:{free_port()}/v1", timeouts=SHORT)]
    pool = ProviderPool({"openai": dead})
    started = time.monotonic()
    try:
        with pytest.raises(ProviderError) as info:
            await ask(pool)
    finally:
        await pool.aclose()
    assert info.value.kind == "unavailable"
    assert time.monotonic() - started < 1.5


async def test_anthropic_accounts_fail_over_too(fake: FakeLLM) -> None:
    """The same failover with Anthropic accounts (x-api-key)."""
    pool = ProviderPool(
        {
            "claude": [
                AnthropicProvider(
                    "claude", base_url=fake.base_url, api_key="sk-bad", timeouts=SHORT
                ),
                AnthropicProvider(
                    "claude", base_url=fake.base_url, api_key="sk-good", timeouts=SHORT
                ),
            ]
        }
    )
    try:
        events = await ask(pool, model=ModelRef("claude", "fake-model", "anthropic-messages"))
    finally:
        await pool.aclose()
    assert text_of(events).startswith("FAKE-LLM reply")
    assert [r.api_key for r in fake.requests] == ["sk-bad", "sk-good"]
