"""The ``talk.event`` envelope: ``{id, type, sessionId, turnId?, seq, timestamp, mode,
transport, brain, provider?, final?, payload}``, ``seq`` counting from 1 per session."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Callable
from enum import StrEnum
from typing import Any

__all__ = ["TalkEventType", "TalkEvents"]


class TalkEventType(StrEnum):
    """The ``type`` values this gateway emits."""

    SESSION_STARTED = "session.started"
    SESSION_READY = "session.ready"
    SESSION_CLOSED = "session.closed"
    SESSION_ERROR = "session.error"
    TURN_STARTED = "turn.started"
    TURN_ENDED = "turn.ended"
    INPUT_AUDIO_COMMITTED = "input.audio.committed"
    TRANSCRIPT_DELTA = "transcript.delta"
    TRANSCRIPT_DONE = "transcript.done"


def _timestamp() -> str:
    """ISO 8601 UTC with milliseconds, as the reference's string timestamps."""
    now = datetime.datetime.now(datetime.UTC)
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class TalkEvents:
    """Builds the envelopes of one session and hands them to ``send``."""

    def __init__(
        self,
        send: Callable[[dict[str, Any]], None],
        *,
        session_id: str,
        mode: str,
        transport: str,
        brain: str,
        provider: str | None,
    ) -> None:
        self._send = send
        self._seq = 0
        self._base: dict[str, Any] = {
            "sessionId": session_id,
            "mode": mode,
            "transport": transport,
            "brain": brain,
        }
        if provider is not None:
            self._base["provider"] = provider

    @property
    def seq(self) -> int:
        """The ``seq`` of the last event sent (0 before the first)."""
        return self._seq

    def emit(
        self,
        kind: TalkEventType,
        payload: dict[str, Any] | None = None,
        *,
        turn_id: str | None = None,
        final: bool | None = None,
    ) -> dict[str, Any]:
        """Send one event; returns the envelope."""
        self._seq += 1
        envelope: dict[str, Any] = {
            "id": str(uuid.uuid4()),
            "type": kind.value,
            **self._base,
            "seq": self._seq,
            "timestamp": _timestamp(),
            "payload": payload or {},
        }
        if turn_id is not None:
            envelope["turnId"] = turn_id
        if final is not None:
            envelope["final"] = final
        self._send(envelope)
        return envelope
