"""The SSE line parser, error mapping, redaction and the lazy API key."""

from __future__ import annotations

import pytest

from gateway.chat.providers.base import ProviderError
from gateway.chat.providers.sse import (
    ApiKey,
    SSEEvent,
    SSEParser,
    error_from_response,
    is_loopback_url,
    kind_for_status,
    parse_retry_after,
    public_url,
    redact,
)


def feed_all(lines: list[str]) -> list[SSEEvent]:
    """Every event the parser dispatches for ``lines`` (plus the end of the stream)."""
    parser = SSEParser()
    events = [e for e in (parser.feed(line) for line in lines) if e is not None]
    last = parser.finish()
    return events + ([last] if last is not None else [])


def test_data_lines_join_and_blank_line_dispatches() -> None:
    """Several data lines make one event joined by newlines; the default type is message."""
    events = feed_all(["data: a", "data:b", "data:  c", "", "data: next", ""])
    assert events == [SSEEvent("message", "a\nb\n c"), SSEEvent("message", "next")]


def test_event_field_comments_and_unknown_fields() -> None:
    """``event`` names the event; comments, retry and unknown fields are ignored."""
    events = feed_all(
        [
            ": keepalive",
            "event: content_block_delta",
            "retry: 10",
            "foo: x",
            'data: {"a":1}',
            "id: 7",
            "",
        ]
    )
    assert events == [SSEEvent("content_block_delta", '{"a":1}', "7")]


def test_blank_lines_alone_dispatch_nothing() -> None:
    """Blank lines and comment-only blocks produce no event."""
    assert feed_all(["", "", ": ping", "", ""]) == []


def test_pending_event_is_dispatched_at_end_of_stream() -> None:
    """A last event without its blank line is not lost."""
    assert feed_all(["data: [DONE]"]) == [SSEEvent("message", "[DONE]")]


def test_field_without_colon_and_empty_data() -> None:
    """``data`` without a colon is an empty data line (still an event)."""
    assert feed_all(["data", ""]) == [SSEEvent("message", "")]


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (401, "", "auth"),
        (403, "forbidden", "auth"),
        (429, "slow down", "rate_limit"),
        (400, "This model's maximum context length is 8192 tokens", "context_length"),
        (400, "prompt is too long: 250000 tokens > 200000 maximum", "context_length"),
        (413, "request_too_large", "context_length"),
        (400, "the request exceeds the available context size", "context_length"),
        (400, "content_filter triggered", "refusal"),
        (400, "unknown parameter foo", "bad_request"),
        (404, "model not found", "bad_request"),
        (408, "", "timeout"),
        (500, "", "unavailable"),
        (503, "", "unavailable"),
        (529, "overloaded", "unavailable"),
    ],
)
def test_kind_for_status(status: int, body: str, kind: str) -> None:
    """HTTP statuses (and ambiguous bodies) map to the documented kinds."""
    assert kind_for_status(status, body) == kind


def test_retry_after_seconds_date_and_garbage() -> None:
    """Retry-After as seconds or an HTTP date; garbage and absence give None."""
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("1.5") == 1.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now=1445412500.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412500.0) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after("nan") is None
    assert parse_retry_after(None) is None


def test_error_from_response_reads_provider_message_and_redacts_key() -> None:
    """The provider's message is kept; the key never appears; Retry-After is read on 429."""
    body = b'{"error": {"message": "Incorrect API key provided: sk-secret-123", "code": "x"}}'
    error = error_from_response(
        401, {}, body, provider="openai", model="m", secrets=["sk-secret-123"]
    )
    assert error.kind == "auth"
    assert error.http_status == 401
    assert "sk-secret-123" not in error.message
    assert "Incorrect API key provided: ***" in error.message
    limited = error_from_response(
        429, {"retry-after": "3"}, b"not json", provider="p", model="m", secrets=[]
    )
    assert limited.kind == "rate_limit"
    assert limited.retry_after_s == 3.0
    assert "not json" in limited.message
    assert limited.fails_over


def test_error_text_of_anthropic_and_ollama_shapes() -> None:
    """Anthropic's nested error and Ollama's string error are both understood."""
    anthropic = (
        b'{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}'
    )
    assert error_from_response(400, {}, anthropic, provider="a", model="m", secrets=[]).kind == (
        "context_length"
    )
    ollama = b'{"error":"model \\"x\\" not found, try pulling it first"}'
    error = error_from_response(404, {}, ollama, provider="o", model="x", secrets=[])
    assert error.kind == "bad_request"
    assert "try pulling it first" in error.message


def test_redact_and_public_url() -> None:
    """Secrets are masked (short ones are not touched); URLs lose credentials and query."""
    assert redact("key abcd and abcdef", ["abcdef", None, "ab"]) == "key abcd and ***"
    assert public_url("https://user:pw@host:8443/v1?key=x#f") == "https://host:8443/v1"
    assert public_url("http://[::1]:11434/v1") == "http://[::1]:11434/v1"


async def test_api_key_loader_runs_once_and_failures_are_auth_errors() -> None:
    """A loader runs once (its value is cached); failures become auth errors naming the label."""
    calls: list[int] = []

    def load() -> str:
        calls.append(1)
        return "sk-from-loader"

    key = ApiKey(loader=load, label="keyring:work")
    before = key.known
    assert before is None
    assert await key.get() == "sk-from-loader"
    assert await key.get() == "sk-from-loader"
    assert calls == [1]
    assert key.known == "sk-from-loader"

    def broken() -> str:
        raise RuntimeError("locked")

    with pytest.raises(ProviderError) as info:
        await ApiKey(loader=broken, label="keyring:work").get(provider="work")
    assert info.value.kind == "auth"
    assert "keyring:work" in info.value.message
    assert "locked" in info.value.message
    with pytest.raises(ProviderError, match="no such key"):
        await ApiKey(loader=lambda: None, label="keyring:gone").get()
    assert await ApiKey(None).get() is None


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434", True),
        ("http://[::1]:1/v1", True),
        ("http://127.1.2.3", True),
        ("https://api.openai.com/v1", False),
        ("http://192.168.1.5:8080", False),
        ("nonsense", False),
    ],
)
def test_is_loopback_url(url: str, loopback: bool) -> None:
    """Loopback detection decides whether a missing key is fine and proxies apply."""
    assert is_loopback_url(url) is loopback
