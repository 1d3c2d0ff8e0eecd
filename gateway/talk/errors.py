"""The error shapes of the talk methods, worded as the reference gateway words them."""

from __future__ import annotations

from typing import Any

from gateway.errors import MethodError
from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = [
    "audio_limit",
    "speak_failed",
    "talk_issue",
    "talk_unconfigured",
    "unknown_session",
]


def talk_issue(message: str, code: str = "realtime_unavailable") -> MethodError:
    """``UNAVAILABLE "Error: <message>"`` with ``details.talkIssue {code, message, phase}``,
    the issue's message worded the same (the reference's shape for sessions that cannot be
    created or found)."""
    text = f"Error: {message}"
    details = {"talkIssue": {"code": code, "message": text, "phase": "request"}}
    return MethodError(error_shape(ErrorCode.UNAVAILABLE, text, details))


def unknown_session() -> MethodError:
    """A session id that does not exist, or belongs to another connection."""
    return talk_issue("Unknown Talk session")


def talk_unconfigured(method: str) -> MethodError:
    """No speech provider: the client should fall back to its own (local) voice."""
    return MethodError(
        error_shape(
            ErrorCode.UNAVAILABLE,
            f"{method} unavailable: talk provider not configured",
            {"reason": "talk_unconfigured", "fallbackEligible": True},
        )
    )


def speak_failed(provider: str, problem: str) -> MethodError:
    """The speech provider failed; the client may still fall back to its local voice."""
    return MethodError(
        error_shape(
            ErrorCode.UNAVAILABLE,
            f"talk.speak failed: {provider}: {problem}",
            {"reason": "synthesis_failed", "provider": provider, "fallbackEligible": True},
        )
    )


def audio_limit(received: int, limit: int, chunk: int) -> MethodError:
    """More audio than a session may receive; the chunk is refused, the session stays."""
    details: dict[str, Any] = {
        "reason": "audio_limit",
        "limitBytes": limit,
        "receivedBytes": received,
        "chunkBytes": chunk,
    }
    return MethodError(
        error_shape(
            ErrorCode.INVALID_REQUEST,
            f"talk.session.appendAudio: audio limit reached ({received} of at most {limit} "
            f"bytes received; this chunk of {chunk} bytes was refused); close the session "
            "and start a new one",
            details,
        )
    )
