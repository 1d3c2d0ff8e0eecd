"""Unit tests for RetryPolicy: the Android reconnect schedule plus the gateway's hints."""

from __future__ import annotations

import pytest

from openclaw_desktop.session import ErrorCategory
from openclaw_desktop.transport import RetryPolicy


class RecordingRng:
    """An injected rng that records its bounds and returns a fixed fraction of the range."""

    def __init__(self, fraction: float = 0.5) -> None:
        self.fraction = fraction
        self.calls: list[tuple[float, float]] = []

    def __call__(self, low: float, high: float) -> float:
        self.calls.append((low, high))
        return low + (high - low) * self.fraction


#: 350 ms * 1.7**n, capped at 8 s through attempt 6 and at 60 s after (Android).
ANDROID_SCHEDULE = [
    (0, 350.0),
    (1, 595.0),
    (2, 1011.5),
    (3, 1719.55),
    (4, 2923.235),
    (5, 4969.4995),
    (6, 8000.0),
    (7, 14361.854),
    (8, 24415.151),
    (9, 41505.757),
]


@pytest.mark.parametrize(("attempt", "expected"), ANDROID_SCHEDULE)
def test_android_schedule(attempt: int, expected: float) -> None:
    """The delays follow min(ceiling, 350 * 1.7**attempt)."""
    rng = RecordingRng()
    assert RetryPolicy(rng=rng).delay_ms(attempt) == pytest.approx(expected, abs=0.01)
    assert rng.calls == []


def test_early_ceiling_applies_through_attempt_six() -> None:
    """Attempt 6 would be 8448 ms; the 8 s ceiling holds it, attempt 7 is past it."""
    policy = RetryPolicy(rng=RecordingRng())
    assert 350 * 1.7**6 > 8000
    assert policy.delay_ms(6) == 8000.0
    assert policy.delay_ms(7) > 8000.0


@pytest.mark.parametrize("attempt", [10, 11, 50, 10_000])
def test_top_of_the_schedule_is_random_30_to_60_seconds(attempt: int) -> None:
    """Once the delay reaches 60 s it becomes a random 30-60 s from the injected rng."""
    low_rng, high_rng = RecordingRng(0.0), RecordingRng(1.0)
    assert RetryPolicy(rng=low_rng).delay_ms(attempt) == 30_000.0
    assert RetryPolicy(rng=high_rng).delay_ms(attempt) == 60_000.0
    assert low_rng.calls == [(30_000.0, 60_000.0)]


def test_default_rng_stays_in_the_band() -> None:
    """The default random.uniform keeps long outages between 30 and 60 s."""
    policy = RetryPolicy()
    for _ in range(50):
        assert 30_000.0 <= policy.delay_ms(10) <= 60_000.0


def test_negative_attempt_counts_as_zero() -> None:
    """A negative attempt number is treated as the first attempt."""
    assert RetryPolicy().delay_ms(-3) == 350.0


@pytest.mark.parametrize(
    ("attempt", "hint", "expected"),
    [(0, 5000, 5000.0), (5, 100, 4969.4995), (0, 0, 350.0), (3, 1720, 1720.0)],
)
def test_retry_after_is_a_floor(attempt: int, hint: int, expected: float) -> None:
    """The gateway's retryAfterMs can lengthen a delay but never shorten it."""
    policy = RetryPolicy(rng=RecordingRng())
    assert policy.delay_ms(attempt, ErrorCategory.UNAVAILABLE, hint) == pytest.approx(expected)


def test_retry_after_beats_the_random_band() -> None:
    """A retryAfterMs above the random 30-60 s value wins."""
    policy = RetryPolicy(rng=RecordingRng(0.0))
    assert policy.delay_ms(10, ErrorCategory.UNAVAILABLE, 45_000) == 45_000.0
    assert policy.delay_ms(10, ErrorCategory.UNAVAILABLE, 10_000) == 30_000.0


@pytest.mark.parametrize("attempt", [0, 3, 10, 100])
def test_pairing_polls_at_a_fixed_interval(attempt: int) -> None:
    """While waiting for approval the next attempt comes after the pairing poll interval."""
    rng = RecordingRng()
    policy = RetryPolicy(rng=rng)
    assert policy.delay_ms(attempt, ErrorCategory.PAIRING) == 3000.0
    assert policy.delay_ms(attempt, ErrorCategory.PAIRING, 10) == 3000.0
    assert RetryPolicy(pairing_poll_ms=500.0).delay_ms(attempt, ErrorCategory.PAIRING) == 500.0
    assert rng.calls == []


@pytest.mark.parametrize(("attempt", "expected"), [(0, 1000.0), (1, 1000.0), (3, 1719.55)])
def test_server_restart_waits_at_least_a_second(attempt: int, expected: float) -> None:
    """After a 1012/1013 close the first retries wait at least 1 s."""
    policy = RetryPolicy(rng=RecordingRng())
    assert policy.delay_ms(attempt, ErrorCategory.SERVER_RESTART) == pytest.approx(expected)


@pytest.mark.parametrize(
    "category",
    [ErrorCategory.NETWORK, ErrorCategory.UNAVAILABLE, ErrorCategory.PROTOCOL, None],
)
def test_other_categories_use_the_plain_schedule(category: ErrorCategory | None) -> None:
    """Categories without a special rule follow the schedule unchanged."""
    assert RetryPolicy(rng=RecordingRng()).delay_ms(2, category) == pytest.approx(1011.5)


def test_schedule_is_monotonic_until_the_random_band() -> None:
    """Delays never shrink from one attempt to the next before the random band."""
    policy = RetryPolicy(rng=RecordingRng())
    delays = [policy.delay_ms(n) for n in range(10)]
    assert delays == sorted(delays)
