"""Session transcripts: an append-only JSONL tree of messages per session, and their store.

Each line of a transcript file is a JSON object. The first is a header
``{"type": "session", "version": 1, "sessionKey", "sessionId", "createdAtMs"}``; every other
line is a message as the caller gave it plus ``id`` and ``parentId``. Messages form a tree:
appending under a parent that is not the current leaf starts a branch and keeps the old path.
The leaf is the last appended message, or the one chosen with :meth:`Transcript.branch`
(kept in memory only; it becomes durable with the next append under it).

All methods do blocking file I/O (``open``/``write``/``fsync``/``rename``). Call them from a
worker thread, e.g. ``await asyncio.to_thread(transcript.append, message)``, never directly
on the event loop. Each transcript has its own lock, so threads may share one. One process
owns a folder; two processes writing the same folder are not supported. Durability and
repair rules are in :mod:`gateway.chat.transcript_file`.
"""

from __future__ import annotations

import copy
import enum
import logging
import os
import threading
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from gateway.chat.transcript_file import append_record, encode_record, scan_file
from gateway.errors import BundledGatewayError

__all__ = [
    "HISTORY_LIMIT_MAX",
    "HISTORY_MAX_CHARS_MAX",
    "LEAF",
    "OMITTED_PLACEHOLDER",
    "Transcript",
    "TranscriptClosedError",
]

log = logging.getLogger("gateway.chat")

HISTORY_LIMIT_MAX: Final = 1000
HISTORY_MAX_CHARS_MAX: Final = 500_000
#: Text of the stand-in for a message too large for ``chat.history``.
OMITTED_PLACEHOLDER: Final = "[chat.history omitted: message too large]"
_RESERVED = ("id", "parentId")


class _Parent(enum.Enum):
    LEAF = "leaf"


#: Default ``parent_id`` of :meth:`Transcript.append`: the current leaf.
LEAF: Final = _Parent.LEAF


class TranscriptClosedError(BundledGatewayError, RuntimeError):
    """The transcript was closed (store closed, or the session was reset or deleted)."""


def _check_int(value: object, name: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer from 1 to {high}, got {value!r}")
    if not 1 <= value <= high:
        raise ValueError(f"{name} must be from 1 to {high}, got {value}")
    return value


def _nonempty_str(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _placeholder(message: Mapping[str, Any]) -> dict[str, Any]:
    stub: dict[str, Any] = {"id": message["id"], "parentId": message["parentId"]}
    stub["role"] = message["role"]
    if "timestamp" in message:
        stub["timestamp"] = message["timestamp"]
    stub["content"] = [{"type": "text", "text": OMITTED_PLACEHOLDER}]
    stub["omitted"] = True
    return stub


class Transcript:
    """One session's transcript file, loaded into memory. Obtain it from a store."""

    def __init__(self, key: str, path: Path, fd: int) -> None:
        """Load ``path`` (already created, torn tail repaired) and keep ``fd`` for appends."""
        self._key = key
        self._path = path
        self._fd: int | None = fd
        self._lock = threading.Lock()
        #: Called as ``listener(transcript, stored_copy)`` after each append, in the
        #: appending thread, outside the lock (the store shares its list with every
        #: transcript: see :attr:`TranscriptStore.listeners`).
        self.listeners: list[Callable[[Transcript, dict[str, Any]], None]] = []
        scanned = scan_file(path, repair=True)
        header = scanned.header or {}
        if scanned.header is None:
            log.warning("transcript %s has no valid header line", path.name)
        elif header.get("sessionKey") != key:
            log.warning("transcript %s header names another session key", path.name)
        session_id = header.get("sessionId")
        self._session_id = session_id if isinstance(session_id, str) else None
        self._committed = scanned.committed
        self._messages: dict[str, dict[str, Any]] = {}
        self._chars: dict[str, int] = {}
        self._leaf: str | None = None
        for record, chars in scanned.records:
            self._messages[record["id"]] = record
            self._chars[record["id"]] = chars
            self._leaf = record["id"]
            parent = record["parentId"]
            if parent is not None and parent not in self._messages:
                log.warning("transcript %s: a message's parent is missing", path.name)

    @property
    def key(self) -> str:
        """The canonical session key."""
        return self._key

    @property
    def session_id(self) -> str | None:
        """The id written in the header when the file was created (None if it is unreadable)."""
        return self._session_id

    @property
    def path(self) -> Path:
        """The transcript file."""
        return self._path

    @property
    def leaf_id(self) -> str | None:
        """The id of the current leaf message (None while the transcript is empty)."""
        with self._lock:
            return self._leaf

    def __len__(self) -> int:
        """Number of messages loaded (every branch)."""
        with self._lock:
            return len(self._messages)

    def append(
        self,
        message: Mapping[str, Any],
        *,
        parent_id: str | Literal[_Parent.LEAF] | None = LEAF,
        message_id: str | None = None,
    ) -> dict[str, Any]:
        """Append ``message`` durably (written and fsynced) and make it the leaf.

        Args:
            message: A JSON object with a non-empty string ``role``; it must not hold ``id``
                or ``parentId``, which the store sets.
            parent_id: The parent message; default the current leaf. Another message starts
                a branch; None starts a new root.
            message_id: The new message's id; default a random one.

        Returns:
            A copy of the stored message, with ``id`` and ``parentId``.

        Raises:
            ValueError: Bad message (not a mapping, no role, reserved keys, not
                JSON-serializable, too large), unknown parent, or duplicate id. Nothing is
                written.
            TranscriptClosedError: If the transcript was closed.
            OSError: If the disk write fails; the message is then not stored.
        """
        if not isinstance(message, Mapping):
            raise ValueError(f"message must be a JSON object, not {type(message).__name__}")
        if any(name in message for name in _RESERVED):
            raise ValueError("message must not contain 'id' or 'parentId'; the store sets them")
        if not _nonempty_str(message.get("role")):
            raise ValueError("message needs a non-empty string 'role'")
        if message_id is not None and not _nonempty_str(message_id):
            raise ValueError("message_id must be a non-empty string")
        with self._lock:
            fd = self._require_open()
            parent = self._leaf if parent_id is LEAF else parent_id
            if parent is not None and parent not in self._messages:
                raise ValueError(f"unknown parentId {parent!r}")
            ident = message_id or str(uuid.uuid4())
            if ident in self._messages:
                raise ValueError(f"message id {ident!r} already exists")
            record = {**message, "id": ident, "parentId": parent}
            data, chars = encode_record(record)
            self._committed = append_record(fd, data, self._committed)
            stored: dict[str, Any] = copy.deepcopy(record)
            self._messages[ident] = stored
            self._chars[ident] = chars
            self._leaf = ident
            result = copy.deepcopy(stored)
        for listener in list(self.listeners):
            try:
                listener(self, copy.deepcopy(result))
            except Exception:  # a listener's fault never undoes a durable append
                log.exception("transcript %s: append listener failed", self._path.name)
        return result

    def branch(self, message_id: str) -> None:
        """Make ``message_id`` the leaf: the next append continues from it (a new branch).

        Raises:
            ValueError: If there is no such message.
        """
        with self._lock:
            if message_id not in self._messages:
                raise ValueError(f"unknown message id {message_id!r}")
            self._leaf = message_id

    def get(self, message_id: str) -> dict[str, Any] | None:
        """Return a whole message (any branch, any size) by id, or None if unknown."""
        with self._lock:
            found = self._messages.get(message_id)
            return None if found is None else copy.deepcopy(found)

    def _path_ids(self) -> list[str]:
        ids: list[str] = []
        seen: set[str] = set()
        current = self._leaf
        while current is not None and current in self._messages and current not in seen:
            seen.add(current)
            ids.append(current)
            current = self._messages[current]["parentId"]
        ids.reverse()
        return ids

    def visible_path(self) -> list[dict[str, Any]]:
        """Return copies of the messages from the root to the leaf, following ``parentId``."""
        with self._lock:
            return [copy.deepcopy(self._messages[i]) for i in self._path_ids()]

    def visible_count(self, roles: frozenset[str] | None = None) -> int:
        """How many messages the visible path has (only ``roles``, when given)."""
        with self._lock:
            ids = self._path_ids()
            if roles is None:
                return len(ids)
            return sum(1 for i in ids if self._messages[i].get("role") in roles)

    def history(
        self,
        limit: int = 200,
        max_chars: int = HISTORY_MAX_CHARS_MAX,
        roles: frozenset[str] | None = None,
    ) -> list[dict[str, Any]]:
        """Return the last ``limit`` messages of the visible path, oldest first.

        A message whose serialized line (with ``id``/``parentId``) is longer than
        ``max_chars`` characters is replaced by a stub with the same ``id``, ``parentId``,
        ``role`` and ``timestamp``, ``omitted: true`` and :data:`OMITTED_PLACEHOLDER` as its
        text; :meth:`get` still returns it whole.

        Raises:
            ValueError: If ``limit`` is not an int in 1..1000 or ``max_chars`` not in
                1..500000.
        """
        _check_int(limit, "limit", HISTORY_LIMIT_MAX)
        _check_int(max_chars, "max_chars", HISTORY_MAX_CHARS_MAX)
        with self._lock:
            ids = self._path_ids()
            if roles is not None:
                ids = [i for i in ids if self._messages[i].get("role") in roles]
            ids = ids[-limit:]
            out: list[dict[str, Any]] = []
            for ident in ids:
                message = self._messages[ident]
                too_big = self._chars[ident] > max_chars
                out.append(_placeholder(message) if too_big else copy.deepcopy(message))
            return out

    def close(self) -> None:
        """Close the file; later appends raise :class:`TranscriptClosedError`. Idempotent."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _require_open(self) -> int:
        if self._fd is None:
            raise TranscriptClosedError(f"transcript of {self._key} is closed")
        return self._fd
