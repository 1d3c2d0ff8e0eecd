"""The account pool: failover before output only, cool-downs, counters (in-process accounts)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest

from gateway.chat.providers.base import (
    CompletionRequest,
    Done,
    ErrorKind,
    ModelRef,
    ProviderError,
    StreamEvent,
    TextDelta,
)
from gateway.chat.providers.pool import ProviderPool

MODEL = ModelRef("openai", "m", "openai-completions")


class ScriptedAccount:
    """A provider account that answers with text or fails with a kind (before or after
    yielding some output). It implements the Provider protocol for real."""

    def __init__(
        self,
        label: str,
        *,
        fail: ErrorKind | None = None,
        after_output: bool = False,
        retry_after_s: float | None = None,
    ) -> None:
        self.name = "openai"
        self.label = label
        self.fail = fail
        self.after_output = after_output
        self.retry_after_s = retry_after_s
        self.calls = 0
        self.closed = 0
        self.streams_closed = 0

    async def list_models(self) -> list[ModelRef]:
        """One model, shared by every account."""
        return [MODEL]

    async def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]:
        """Text from this account, or the scripted failure."""
        self.calls += 1
        try:
            if self.fail and self.after_output:
                yield TextDelta("partial")
            if self.fail:
                raise ProviderError(
                    self.fail, f"{self.label} failed", retry_after_s=self.retry_after_s
                )
            yield TextDelta(f"from {self.label}")
            yield Done("stop")
        finally:
            self.streams_closed += 1

    async def aclose(self) -> None:
        """Counts closes."""
        self.closed += 1


class Clock:
    """A settable monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def drain(stream: AsyncIterator[StreamEvent], seen: list[StreamEvent]) -> None:
    """Append every event of ``stream`` to ``seen`` (kept when the stream raises)."""
    async for event in stream:
        seen.append(event)


def request(model: ModelRef = MODEL) -> CompletionRequest:
    """A one-message request."""
    return CompletionRequest(model=model, system="", messages=[{"role": "user", "content": "hi"}])


async def collect(pool: ProviderPool, req: CompletionRequest | None = None) -> list[StreamEvent]:
    """Every event of one pooled stream."""
    return [e async for e in pool.stream(req or request())]


async def test_auth_failure_fails_over_and_the_account_stays_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """401 on the first account: the second answers, a log line says so, the counter moves,
    and the first is not tried again (until restart)."""
    bad, good = ScriptedAccount("key1", fail="auth"), ScriptedAccount("key2")
    pool = ProviderPool({"openai": [bad, good]})
    with caplog.at_level(logging.WARNING, logger="gateway.providers"):
        assert await collect(pool) == [TextDelta("from key2"), Done("stop")]
    assert pool.failovers == 1
    assert "failing over to account key2" in caplog.text
    assert await collect(pool) == [TextDelta("from key2"), Done("stop")]
    assert bad.calls == 1
    assert bad.streams_closed == 1
    assert pool.failovers == 1
    states = {s.account: s.state for s in pool.status()}
    assert states == {"key1": "auth_failed", "key2": "ok"}


async def test_rate_limit_cools_down_for_retry_after_then_returns() -> None:
    """A rate-limited account is skipped for Retry-After seconds, then tried first again."""
    clock = Clock()
    limited, spare = ScriptedAccount("a", fail="rate_limit", retry_after_s=5), ScriptedAccount("b")
    pool = ProviderPool({"openai": [limited, spare]}, clock=clock)
    await collect(pool)
    assert (limited.calls, spare.calls) == (1, 1)
    status = pool.status()[0]
    assert status.state == "cooldown"
    assert status.retry_in_s == 5.0
    assert status.last_error == "a failed"
    clock.now += 4.9
    await collect(pool)
    assert (limited.calls, spare.calls) == (1, 2)
    clock.now += 0.2
    limited.fail = None
    assert await collect(pool) == [TextDelta("from a"), Done("stop")]
    assert pool.status()[0].state == "ok"


async def test_rate_limit_without_retry_after_uses_default_cooldown() -> None:
    """Without Retry-After the cool-down is the default (60 s)."""
    clock = Clock()
    limited = ScriptedAccount("a", fail="rate_limit")
    pool = ProviderPool({"openai": [limited, ScriptedAccount("b")]}, clock=clock)
    await collect(pool)
    clock.now += 59
    await collect(pool)
    assert limited.calls == 1
    clock.now += 2
    await collect(pool)
    assert limited.calls == 2


async def test_no_failover_after_output_started() -> None:
    """An error after the first event is re-raised: answers are never spliced."""
    first, second = ScriptedAccount("a", fail="rate_limit", after_output=True), ScriptedAccount("b")
    pool = ProviderPool({"openai": [first, second]})
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError, match="a failed"):
        await drain(pool.stream(request()), seen)
    assert seen == [TextDelta("partial")]
    assert second.calls == 0
    assert pool.failovers == 0


@pytest.mark.parametrize("kind", ["unavailable", "timeout", "bad_request", "refusal"])
async def test_errors_that_do_not_fail_over(kind: ErrorKind) -> None:
    """Errors another key would not fix are raised at once."""
    first, second = ScriptedAccount("a", fail=kind), ScriptedAccount("b")
    pool = ProviderPool({"openai": [first, second]})
    with pytest.raises(ProviderError) as info:
        await collect(pool)
    assert info.value.kind == kind
    assert second.calls == 0


async def test_all_accounts_fail_raises_the_last_error() -> None:
    """When every account fails the last error is raised; later calls say all cool down."""
    pool = ProviderPool(
        {
            "openai": [
                ScriptedAccount("a", fail="auth"),
                ScriptedAccount("b", fail="rate_limit", retry_after_s=30),
            ]
        }
    )
    with pytest.raises(ProviderError) as info:
        await collect(pool)
    assert info.value.kind == "rate_limit"
    assert info.value.message == "b failed"
    assert pool.failovers == 1
    with pytest.raises(ProviderError) as again:
        await collect(pool)
    assert again.value.kind == "rate_limit"
    assert "every account is cooling down" in again.value.message


async def test_context_length_fails_over_without_cooldown() -> None:
    """context_length moves on but does not cool the account down."""
    first, second = ScriptedAccount("a", fail="context_length"), ScriptedAccount("b")
    pool = ProviderPool({"openai": [first, second]})
    await collect(pool)
    await collect(pool)
    assert (first.calls, second.calls) == (2, 2)


async def test_unknown_provider_is_bad_request() -> None:
    """A model of a provider the pool does not have is a bad request."""
    pool = ProviderPool({"openai": [ScriptedAccount("a")]})
    with pytest.raises(ProviderError) as info:
        await collect(pool, request(ModelRef("nope", "m", "openai-completions")))
    assert info.value.kind == "bad_request"
    assert pool.provider_names == ["openai"]


async def test_list_models_deduplicates_and_aclose_closes_all() -> None:
    """Models come once per ref; aclose closes every account."""
    accounts = [ScriptedAccount("a"), ScriptedAccount("b")]
    pool = ProviderPool({"openai": accounts})
    assert await pool.list_models() == [MODEL]
    await pool.aclose()
    assert [a.closed for a in accounts] == [1, 1]


async def test_consumer_stopping_early_closes_the_account_stream() -> None:
    """A run that stops reading (abort) closes the provider's stream."""
    account = ScriptedAccount("a")
    pool = ProviderPool({"openai": [account]})
    stream = pool.stream(request())
    assert await anext(stream) == TextDelta("from a")
    await stream.aclose()  # type: ignore[attr-defined]
    assert account.streams_closed == 1
