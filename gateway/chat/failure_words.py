"""A failed model call in plain words, as the reference gateway (OpenClaw 2026.9.6) words it.

A run that fails on the model says so twice: live, in the ``chat`` ``error`` event's
``errorMessage`` (and the ``lifecycle`` ``error``), naming the model; and in the transcript's
``<runId>:terminal-error`` record, whose text is the failure without the model's name, the
way ``chat.history`` shows it after a restart. Both say which class of failure it was and
what to do, never the provider's raw error codes (``server_error``, ``api_error``):

=============== ==================================== =========================================
class           words                                advice
=============== ==================================== =========================================
server_error    provider internal error (HTTP 5xx)   usually temporary, try again shortly
overloaded      provider overloaded (HTTP 529)       usually temporary, try again shortly
timeout         request timed out                    usually temporary, try again shortly
rate_limit      rate limited (HTTP 429)              usually temporary, try again shortly
auth            authentication failed (HTTP 401/403) re-authenticate the provider
billing         provider billing issue (HTTP 402)    check the provider's billing
model_not_found model not found (HTTP 404)           -
format          request format rejected (HTTP 4xx)   -
context         its own sentence (/compact, /new, a larger-context model)
transport       connection refused / interrupted / network error (no HTTP status)
=============== ==================================== =========================================

Seen live on the reference with the fake model: a 500 (server_error), a 429 (rate_limit), a
401 (auth; its live words are a sentence of their own) and a context overflow (a sentence
each, live and stored). Where the reference's live words for a rate limit repeat the
provider's own message, ours use the class's words, which it stores for that run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.chat.providers.base import ProviderError

__all__ = ["TERMINAL_ERROR", "FailureWords", "failure_class", "failure_words", "is_terminal_error"]

#: The suffix of the record's key: ``<runId>:terminal-error`` (``idempotencyKey``).
TERMINAL_ERROR = "terminal-error"

_TEMPORARY = "This is usually temporary — try again shortly."
_REAUTH = "Re-authenticate the provider and try again."

#: Class -> its words in the summary.
REASONS = {
    "server_error": "provider internal error",
    "overloaded": "provider overloaded",
    "timeout": "request timed out",
    "rate_limit": "rate limited",
    "auth": "authentication failed",
    "billing": "provider billing issue",
    "model_not_found": "model not found",
    "format": "request format rejected",
    "context_overflow": "context limit exceeded",
}
_TEMPORARY_CLASSES = frozenset({"server_error", "overloaded", "timeout", "rate_limit"})

CONTEXT_LIVE = (
    "Context overflow: prompt too large for the model. Try /reset (or /new) to start a "
    "fresh session, or use a larger-context model."
)
CONTEXT_STORED = (
    "Context overflow: this conversation is too large for the model. Try /compact, use "
    "/new to start a fresh session, or retry the command with a tighter output limit."
)
#: ProviderError.transport -> the words for a call that got no HTTP answer.
TRANSPORT = {
    "refused": "LLM request failed: connection refused by the provider endpoint.",
    "interrupted": "LLM request failed: network connection was interrupted.",
    "network": "LLM request failed: network connection error.",
}


@dataclass(frozen=True)
class FailureWords:
    """How one failure is said."""

    #: The reference's name of its class (``errorDetail.failoverReason``), "" when unknown.
    reason: str
    #: The ``chat`` ``error`` event's ``errorMessage``: names the model.
    live: str
    #: The text of the ``<runId>:terminal-error`` transcript record.
    stored: str


def failure_class(error: ProviderError) -> str:
    """The reference's class of a provider failure ("" when none fits)."""
    status = error.http_status
    if error.kind == "context_length":
        return "context_overflow"
    if error.kind == "rate_limit" or status == 429:
        return "rate_limit"
    if error.kind == "auth" or status in (401, 403):
        return "auth"
    if error.kind == "timeout" or status == 408:
        return "timeout"
    if status == 402:
        return "billing"
    if status == 404:
        return "model_not_found"
    if status == 529:
        return "overloaded"
    if status is not None and status >= 500:
        return "server_error"
    if error.kind == "bad_request" and status is not None:
        return "format"
    return ""


def _summary(reason: str, status: int | None, target: str, provider: str) -> str:
    details = [w for w in (REASONS.get(reason, ""), f"HTTP {status}" if status else "") if w]
    head = f"{target} request failed" if target else "LLM request failed"
    summary = f"⚠️ {head}" + (f" ({', '.join(details)})" if details else "") + "."
    if reason in _TEMPORARY_CLASSES:
        return f"{summary} {_TEMPORARY}"
    if reason == "auth":
        return f"{summary} {_REAUTH}"
    if reason == "billing":
        whose = f"{provider} billing" if provider else "provider billing"
        return f"{summary} Check {whose} and try again."
    return summary


def failure_words(error: ProviderError, provider: str, model: str) -> FailureWords:
    """The words of ``error`` from a call to ``provider``/``model``."""
    provider = error.provider or provider
    model = error.model or model
    target = f"{provider}/{model}" if provider and model else provider or model
    reason = failure_class(error)
    status = error.http_status
    if reason == "context_overflow":
        return FailureWords(reason, CONTEXT_LIVE, CONTEXT_STORED)
    if not reason and status is None and error.transport in TRANSPORT:
        words = TRANSPORT[error.transport]
        return FailureWords("", words, words)
    if not reason and status is None:
        what = f"model: {target}" if model else f"provider: {target}"
        words = f"⚠️ Agent run failed ({what})." if target else "⚠️ Agent run failed."
        return FailureWords("", words, words)
    stored = _summary(reason, status, "", provider)
    if reason == "auth":
        shown = f"provider returned HTTP {status}" if status else "the provider refused the key"
        live = (
            f"Authentication failed ({shown}). Your provider token may have expired — try "
            "the request again in a moment. If the failure persists, re-authenticate this "
            "provider."
        )
        return FailureWords(reason, live, stored)
    return FailureWords(reason, _summary(reason, status, target, provider), stored)


def is_terminal_error(message: dict[str, Any]) -> bool:
    """Whether a transcript message is a failed run's record (not a reply: the model never
    sees it)."""
    meta = message.get("__openclaw")
    key = message.get("idempotencyKey") or (
        meta.get("idempotencyKey") if isinstance(meta, dict) else None
    )
    return isinstance(key, str) and key.endswith(f":{TERMINAL_ERROR}")
