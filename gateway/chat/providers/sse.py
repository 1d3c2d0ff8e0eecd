"""Server-sent events over HTTP, shared by the providers: the line parser, timeouts, and the
mapping of HTTP and transport failures to :class:`ProviderError` kinds.

The parser is pure (lines in, events out); :func:`stream_sse` is the I/O around it. API keys
never reach a log line or an error message: every message built here goes through
:func:`redact` with the account's secrets.
"""

from __future__ import annotations

import asyncio
import email.utils
import ipaddress
import json
import re
import time
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from gateway.chat.providers.base import ErrorKind, ProviderError

if TYPE_CHECKING:  # httpx loads when a provider is first called, not at gateway start
    import httpx

__all__ = [
    "ERROR_BODY_MAX",
    "ApiKey",
    "SSEEvent",
    "SSEParser",
    "Timeouts",
    "error_from_response",
    "http_client",
    "is_loopback_url",
    "kind_for_status",
    "parse_retry_after",
    "public_url",
    "redact",
    "stream_sse",
]

#: How much of an error response body is read and kept (bytes).
ERROR_BODY_MAX = 16 * 1024
#: How much of a provider's error text goes into our error message (characters).
_MESSAGE_MAX = 300
_CONTEXT_RE = re.compile(
    r"context|too long|maximum context|too many tokens|prompt is too long|request_too_large",
    re.IGNORECASE,
)
_REFUSAL_RE = re.compile(r"content_filter|content management policy|refusal", re.IGNORECASE)


@dataclass(frozen=True)
class Timeouts:
    """Bounds of one provider call: ``connect`` to open the connection, ``read`` between two
    received chunks (an idle stream fails after it), ``write`` to send the request."""

    connect: float = 10.0
    read: float = 60.0
    write: float = 30.0

    def httpx(self) -> httpx.Timeout:
        """As an httpx timeout (the pool wait is bounded by ``connect``)."""
        import httpx

        return httpx.Timeout(
            connect=self.connect, read=self.read, write=self.write, pool=self.connect
        )


class ApiKey:
    """An account's API key: a literal, none (local servers), or a loader (the keyring) that
    runs once, in a worker thread, when the key is first needed.

    A failing loader becomes an ``auth`` ProviderError naming ``label``, never the key.
    """

    #: Bound on one loader call (a keyring behind a stuck D-Bus must not hang a run).
    LOAD_TIMEOUT_S = 10.0

    def __init__(
        self,
        value: str | None = None,
        *,
        loader: Callable[[], str | None] | None = None,
        label: str = "",
    ) -> None:
        self._value = value or None
        self._loader = loader
        self.label = label

    @property
    def known(self) -> str | None:
        """The key if it is already known (for redaction), else None."""
        return self._value

    async def get(self, *, provider: str = "") -> str | None:
        """The key, loading it on first use; raises ProviderError(auth) when it cannot."""
        if self._value is not None or self._loader is None:
            return self._value
        what = f"{provider}: cannot read the API key {self.label}".rstrip()
        try:
            async with asyncio.timeout(self.LOAD_TIMEOUT_S):
                value = await asyncio.to_thread(self._loader)
        except TimeoutError:
            raise ProviderError(
                "auth", f"{what}: timed out after {self.LOAD_TIMEOUT_S:g} s", provider=provider
            ) from None
        except Exception as exc:
            raise ProviderError(
                "auth", f"{what}: {type(exc).__name__}: {exc}", provider=provider
            ) from None
        if not value:
            raise ProviderError("auth", f"{what}: no such key", provider=provider)
        self._value = value
        return value


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched server-sent event."""

    event: str
    data: str
    id: str | None = None


class SSEParser:
    """The WHATWG event-stream grammar, fed one line at a time (without its line ending).

    ``data`` lines accumulate (joined by newlines) until a blank line dispatches the event;
    comment lines (``:``) and unknown fields are ignored; ``retry`` is ignored too.
    """

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self._seen_field = False

    def feed(self, line: str) -> SSEEvent | None:
        """Consume one line; returns the event a blank line completes, else None."""
        if line == "":
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._seen_field = True
        elif name == "event":
            self._event = value
            self._seen_field = True
        elif name == "id" and "\0" not in value:
            self._id = value
        return None

    def finish(self) -> SSEEvent | None:
        """The end of the stream: an event still pending (no final blank line) is dispatched
        rather than dropped, which is lenient with servers that omit the last blank line."""
        return self._dispatch()

    def _dispatch(self) -> SSEEvent | None:
        if not self._seen_field or (not self._data and not self._event):
            self._reset()
            return None
        event = SSEEvent(event=self._event or "message", data="\n".join(self._data), id=self._id)
        self._reset()
        return event

    def _reset(self) -> None:
        self._event = ""
        self._data = []
        self._seen_field = False


def redact(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every secret (of at least 4 characters) replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return text


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (safe to log)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` points at this machine."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_client(base_url: str) -> httpx.AsyncClient:
    """A connection pool for one account: proxy settings from the environment apply to
    remote endpoints, never to a server on this machine."""
    import httpx

    return httpx.AsyncClient(trust_env=not is_loopback_url(base_url))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta seconds or an HTTP date), else None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, min(seconds, 24 * 3600.0))


def kind_for_status(status: int, body_text: str) -> ErrorKind:
    """The error kind of an HTTP error status, looking at the body where the status is
    ambiguous (400/413 about the context window or a content filter)."""
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status in (400, 413) and _CONTEXT_RE.search(body_text):
        return "context_length"
    if status == 400 and _REFUSAL_RE.search(body_text):
        return "refusal"
    if status == 408:
        return "timeout"
    if 400 <= status < 500:
        return "bad_request"
    if status >= 500:
        return "unavailable"
    return "unknown"


def _error_text(body: bytes) -> str:
    """The provider's own error message out of a JSON error body (OpenAI, Anthropic and
    Ollama shapes), else the body's first characters."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        return " ".join(text.split())[:_MESSAGE_MAX]
    found: Any = parsed
    if isinstance(parsed, dict):
        found = parsed.get("error", parsed.get("message", parsed))
        if isinstance(found, dict):
            parts = [found.get("message"), found.get("code"), found.get("type")]
            found = " ".join(str(p) for p in parts if p)
    return " ".join(str(found).split())[:_MESSAGE_MAX]


def error_from_response(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    *,
    provider: str,
    model: str,
    secrets: Iterable[str | None],
) -> ProviderError:
    """The ProviderError for an HTTP error response (the key is redacted from the text)."""
    detail = redact(_error_text(body), secrets)
    kind = kind_for_status(status, detail)
    retry = parse_retry_after(headers.get("retry-after")) if kind == "rate_limit" else None
    message = f"{provider}: HTTP {status}" + (f": {detail}" if detail else "")
    return ProviderError(
        kind, message, provider=provider, model=model, http_status=status, retry_after_s=retry
    )


async def stream_sse(
    client: httpx.AsyncClient,
    url: str,
    *,
    headers: Mapping[str, str],
    body: Mapping[str, Any],
    timeouts: Timeouts,
    provider: str,
    model: str,
    secrets: Iterable[str | None],
) -> AsyncGenerator[SSEEvent, None]:
    """POST ``body`` as JSON and yield the server-sent events of the answer.

    Raises ProviderError for HTTP errors, connection failures (``unavailable``), timeouts
    (``timeout``, at most ``timeouts.read`` of silence) and a connection lost mid-stream
    (``unavailable``). The caller decides whether the stream ended properly.
    """
    import httpx

    secret_list = list(secrets)
    where = public_url(url)

    def fail(kind: ErrorKind, what: str, transport: str | None = None) -> ProviderError:
        return ProviderError(
            kind,
            redact(f"{provider}: {what}", secret_list),
            provider=provider,
            model=model,
            transport=transport,
        )

    started = False
    try:
        async with client.stream(
            "POST", url, headers=dict(headers), json=dict(body), timeout=timeouts.httpx()
        ) as response:
            if response.status_code >= 400:
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size >= ERROR_BODY_MAX:
                        break
                raise error_from_response(
                    response.status_code,
                    response.headers,
                    b"".join(chunks)[:ERROR_BODY_MAX],
                    provider=provider,
                    model=model,
                    secrets=secret_list,
                )
            parser = SSEParser()
            async for line in response.aiter_lines():
                started = True
                event = parser.feed(line)
                if event is not None:
                    yield event
            last = parser.finish()
            if last is not None:
                yield last
    except httpx.ConnectTimeout:
        raise fail(
            "timeout", f"connecting to {where} timed out after {timeouts.connect:g} s"
        ) from None
    except httpx.TimeoutException:
        raise fail("timeout", f"no data from {where} for {timeouts.read:g} s") from None
    except httpx.ConnectError as exc:
        raise fail("unavailable", f"cannot connect to {where}: {exc}", "refused") from exc
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        what = "the stream ended early" if started else f"connection to {where} failed"
        raise fail(
            "unavailable", f"{what}: {str(exc) or type(exc).__name__}", "interrupted"
        ) from exc
    except httpx.HTTPError as exc:
        raise fail(
            "unavailable", f"request to {where} failed: {type(exc).__name__}: {exc}", "network"
        ) from exc
