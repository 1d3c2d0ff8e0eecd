"""The folder of all session transcripts: open by key, list, reset and delete (archive).

Blocking file I/O throughout: call from a worker thread (``asyncio.to_thread``). One process
owns a folder. Keys are canonicalized (:func:`~gateway.chat.transcript_keys.canonical_session_key`)
and mapped to hashed file names, so a key can never name a path outside the folder. Nothing is
ever unlinked: reset and delete rename the live file to ``<file>.reset.<ms>`` or
``<file>.deleted.<ms>``, which listings skip.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from gateway.chat.transcript import Transcript, TranscriptClosedError
from gateway.chat.transcript_file import create_file, fsync_dir, read_header
from gateway.chat.transcript_keys import (
    TRANSCRIPT_SUFFIX,
    canonical_session_key,
    transcript_filename,
)

__all__ = ["SessionInfo", "TranscriptStore"]

log = logging.getLogger("gateway.chat")

_HEADER_VERSION: Final = 1


def _wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class SessionInfo:
    """One live transcript as :meth:`TranscriptStore.list_sessions` sees it."""

    key: str
    session_id: str | None
    created_at_ms: int | None
    updated_at_ms: int
    size_bytes: int
    path: Path


class TranscriptStore:
    """Transcripts of all sessions in one folder (created 0700 if missing).

    Blocking I/O throughout: call from a worker thread (``asyncio.to_thread``).
    """

    def __init__(
        self, folder: Path, *, default_agent: str = "main", clock: Callable[[], int] | None = None
    ) -> None:
        """Use ``folder``; ``clock`` returns wall-clock milliseconds (for tests)."""
        self._folder = Path(folder)
        self._default_agent = default_agent
        self._clock = clock or _wall_ms
        self._lock = threading.Lock()
        self._open: dict[str, Transcript] = {}
        self._closed = False
        #: Append listeners given to every transcript this store opens (see
        #: :attr:`Transcript.listeners`): one list, so a listener added later reaches them all.
        self.listeners: list[Callable[[Transcript, dict[str, Any]], None]] = []
        self._folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    @property
    def folder(self) -> Path:
        """The transcript folder."""
        return self._folder

    def canonical(self, key: str) -> str:
        """Canonicalize ``key`` with this store's default agent (ValueError if malformed)."""
        return canonical_session_key(key, self._default_agent)

    def path_for(self, key: str) -> Path:
        """The live transcript file of ``key`` (always directly inside the folder)."""
        return self._folder / transcript_filename(self.canonical(key))

    def open(self, key: str) -> Transcript:
        """Return the transcript of ``key``, creating an empty one if there is none.

        The same object is returned for the same canonical key until it is reset, deleted
        or the store is closed.

        Raises:
            ValueError: If the key is malformed.
            TranscriptClosedError: If the store is closed.
        """
        canonical = self.canonical(key)
        with self._lock:
            if self._closed:
                raise TranscriptClosedError("transcript store is closed")
            found = self._open.get(canonical)
            if found is None:
                found = self._load(canonical)
                self._open[canonical] = found
            return found

    def _load(self, canonical: str) -> Transcript:
        path = self._folder / transcript_filename(canonical)
        header = {
            "type": "session",
            "version": _HEADER_VERSION,
            "sessionKey": canonical,
            "sessionId": str(uuid.uuid4()),
            "createdAtMs": self._clock(),
        }
        create_file(path, header)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0))
        try:
            transcript = Transcript(canonical, path, fd)
            transcript.listeners = self.listeners
            return transcript
        except BaseException:
            os.close(fd)
            raise

    def list_sessions(self) -> list[SessionInfo]:
        """Return the live transcripts in the folder, sorted by key (archives are left out)."""
        out: list[SessionInfo] = []
        for path in self._folder.glob(f"*{TRANSCRIPT_SUFFIX}"):
            try:
                header = read_header(path)
                info = path.stat()
            except OSError:
                continue  # removed or unreadable meanwhile
            key = header.get("sessionKey") if header else None
            if not isinstance(key, str) or path.name != transcript_filename(key):
                log.warning("skipping transcript %s: header missing or mismatched", path.name)
                continue
            session_id = header.get("sessionId") if header else None
            created = header.get("createdAtMs") if header else None
            out.append(
                SessionInfo(
                    key=key,
                    session_id=session_id if isinstance(session_id, str) else None,
                    created_at_ms=created if isinstance(created, int) else None,
                    updated_at_ms=info.st_mtime_ns // 1_000_000,
                    size_bytes=info.st_size,
                    path=path,
                )
            )
        return sorted(out, key=lambda item: item.key)

    def _archive(self, canonical: str, reason: str) -> Path | None:
        """Close the open transcript and rename its file aside; caller holds the store lock."""
        current = self._open.pop(canonical, None)
        path = self._folder / transcript_filename(canonical)
        if current is not None:
            current.close()  # waits for an append in flight; later ones raise
        if not path.exists():
            return None
        stamp = self._clock()
        for attempt in range(1000):
            suffix = f".{reason}.{stamp}" + (f"-{attempt}" if attempt else "")
            target = path.with_name(path.name + suffix)
            if not target.exists():
                break
        else:
            raise FileExistsError(f"no free archive name for {path.name}")
        os.rename(path, target)
        fsync_dir(self._folder)
        return target

    def reset(self, key: str) -> Transcript:
        """Archive the transcript of ``key`` (``<file>.reset.<ms>``) and start an empty one.

        Handles obtained earlier are closed. Returns the new transcript.
        """
        canonical = self.canonical(key)
        with self._lock:
            if self._closed:
                raise TranscriptClosedError("transcript store is closed")
            self._archive(canonical, "reset")
            fresh = self._load(canonical)
            self._open[canonical] = fresh
            return fresh

    def delete(self, key: str) -> Path | None:
        """Archive the transcript of ``key`` (``<file>.deleted.<ms>``); nothing is unlinked.

        Returns the archive path, or None if the session had no transcript.
        """
        canonical = self.canonical(key)
        with self._lock:
            if self._closed:
                raise TranscriptClosedError("transcript store is closed")
            return self._archive(canonical, "deleted")

    def close(self) -> None:
        """Close every open transcript; the store cannot be used afterwards. Idempotent."""
        with self._lock:
            self._closed = True
            transcripts = list(self._open.values())
            self._open.clear()
        for transcript in transcripts:
            transcript.close()
