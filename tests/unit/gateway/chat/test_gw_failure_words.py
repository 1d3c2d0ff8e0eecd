"""Provider failures in the reference gateway's words: the class, the live ``errorMessage``
(naming the model) and the transcript's terminal-error text (without it). The rows marked
"live" are what OpenClaw 2026.9.6 said for the fake model's ``FAIL:…`` answers."""

from __future__ import annotations

import pytest

from gateway.chat.failure_words import failure_class, failure_words, is_terminal_error
from gateway.chat.providers.base import ErrorKind, ProviderError

TEMPORARY = "This is usually temporary — try again shortly."


def error(
    kind: ErrorKind, status: int | None = None, transport: str | None = None
) -> ProviderError:
    return ProviderError(
        kind, "fake: HTTP raw server_error api_error", http_status=status, transport=transport
    )


@pytest.mark.parametrize(
    ("failure", "reason", "live", "stored"),
    [
        pytest.param(
            error("unavailable", 500),
            "server_error",
            f"⚠️ fake/fake-model request failed (provider internal error, HTTP 500). {TEMPORARY}",
            f"⚠️ LLM request failed (provider internal error, HTTP 500). {TEMPORARY}",
            id="500 (live)",
        ),
        pytest.param(
            error("rate_limit", 429),
            "rate_limit",
            f"⚠️ fake/fake-model request failed (rate limited, HTTP 429). {TEMPORARY}",
            f"⚠️ LLM request failed (rate limited, HTTP 429). {TEMPORARY}",
            id="429 (stored live)",
        ),
        pytest.param(
            error("auth", 401),
            "auth",
            "Authentication failed (provider returned HTTP 401). Your provider token may have "
            "expired — try the request again in a moment. If the failure persists, "
            "re-authenticate this provider.",
            "⚠️ LLM request failed (authentication failed, HTTP 401). Re-authenticate the "
            "provider and try again.",
            id="401 (live)",
        ),
        pytest.param(
            error("context_length", 400),
            "context_overflow",
            "Context overflow: prompt too large for the model. Try /reset (or /new) to start "
            "a fresh session, or use a larger-context model.",
            "Context overflow: this conversation is too large for the model. Try /compact, use "
            "/new to start a fresh session, or retry the command with a tighter output limit.",
            id="context (live)",
        ),
        pytest.param(
            error("timeout"),
            "timeout",
            f"⚠️ fake/fake-model request failed (request timed out). {TEMPORARY}",
            f"⚠️ LLM request failed (request timed out). {TEMPORARY}",
            id="timeout",
        ),
        pytest.param(
            error("unavailable", 529),
            "overloaded",
            f"⚠️ fake/fake-model request failed (provider overloaded, HTTP 529). {TEMPORARY}",
            f"⚠️ LLM request failed (provider overloaded, HTTP 529). {TEMPORARY}",
            id="529",
        ),
        pytest.param(
            error("bad_request", 402),
            "billing",
            "⚠️ fake/fake-model request failed (provider billing issue, HTTP 402). Check fake "
            "billing and try again.",
            "⚠️ LLM request failed (provider billing issue, HTTP 402). Check fake billing and "
            "try again.",
            id="402",
        ),
        pytest.param(
            error("bad_request", 404),
            "model_not_found",
            "⚠️ fake/fake-model request failed (model not found, HTTP 404).",
            "⚠️ LLM request failed (model not found, HTTP 404).",
            id="404",
        ),
        pytest.param(
            error("bad_request", 400),
            "format",
            "⚠️ fake/fake-model request failed (request format rejected, HTTP 400).",
            "⚠️ LLM request failed (request format rejected, HTTP 400).",
            id="400",
        ),
        pytest.param(
            error("unavailable", transport="refused"),
            "",
            "LLM request failed: connection refused by the provider endpoint.",
            "LLM request failed: connection refused by the provider endpoint.",
            id="refused",
        ),
        pytest.param(
            error("unavailable", transport="interrupted"),
            "",
            "LLM request failed: network connection was interrupted.",
            "LLM request failed: network connection was interrupted.",
            id="cut",
        ),
        pytest.param(
            error("unknown"),
            "",
            "⚠️ Agent run failed (model: fake/fake-model).",
            "⚠️ Agent run failed (model: fake/fake-model).",
            id="nothing known",
        ),
    ],
)
def test_the_words_of_each_class(
    failure: ProviderError, reason: str, live: str, stored: str
) -> None:
    """Each class has the reference's words, live and stored."""
    words = failure_words(failure, "fake", "fake-model")
    assert (failure_class(failure), words.reason) == (reason, reason)
    assert (words.live, words.stored) == (live, stored)


@pytest.mark.parametrize("status", [400, 401, 402, 404, 429, 500, 503, 529])
@pytest.mark.parametrize("kind", ["unavailable", "bad_request", "unknown", "auth"])
def test_no_raw_provider_text(kind: ErrorKind, status: int) -> None:
    """The provider's own message and codes never reach the words."""
    words = failure_words(error(kind, status), "fake", "fake-model")
    for text in (words.live, words.stored):
        assert "server_error" not in text and "api_error" not in text and "raw" not in text
        assert f"HTTP {status}" in text


def test_the_provider_named_by_the_error_wins() -> None:
    """The pool names the provider it tried; the words name it too."""
    failure = ProviderError("unavailable", "x", provider="other", model="m2", http_status=502)
    assert failure_words(failure, "fake", "fake-model").live.startswith(
        "⚠️ other/m2 request failed (provider internal error, HTTP 502)."
    )


def test_terminal_error_records_are_recognised_by_their_key() -> None:
    """By the key's suffix, at the top or in ``__openclaw`` (the reference writes both)."""
    assert is_terminal_error({"idempotencyKey": "r1:terminal-error"})
    assert is_terminal_error({"__openclaw": {"idempotencyKey": "r1:terminal-error"}})
    assert not is_terminal_error({"idempotencyKey": "r1:user"})
    assert not is_terminal_error({"role": "assistant", "stopReason": "error"})
