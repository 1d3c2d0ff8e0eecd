"""Chat storage of the bundled gateway: per-session JSONL transcripts (a message tree).

Blocking file I/O: callers on the event loop go through ``asyncio.to_thread``.
"""

from __future__ import annotations

from gateway.chat.transcript import (
    HISTORY_LIMIT_MAX,
    HISTORY_MAX_CHARS_MAX,
    LEAF,
    OMITTED_PLACEHOLDER,
    Transcript,
    TranscriptClosedError,
)
from gateway.chat.transcript_file import MAX_RECORD_BYTES
from gateway.chat.transcript_keys import SESSION_KEY_MAX_LENGTH, canonical_session_key
from gateway.chat.transcript_store import SessionInfo, TranscriptStore

__all__ = [
    "HISTORY_LIMIT_MAX",
    "HISTORY_MAX_CHARS_MAX",
    "LEAF",
    "MAX_RECORD_BYTES",
    "OMITTED_PLACEHOLDER",
    "SESSION_KEY_MAX_LENGTH",
    "SessionInfo",
    "Transcript",
    "TranscriptClosedError",
    "TranscriptStore",
    "canonical_session_key",
]
