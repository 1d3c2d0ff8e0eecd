"""Checkpoints of replies in progress, so a reply cut by a crash or ``kill -9`` leaves a trace.

While a run streams, its current assistant text (and reasoning) is kept in one small file,
``<sessions>/inflight/<sha256(runId)>.json``, rewritten at most every
:data:`CHECKPOINT_INTERVAL_S` (and once more when the text stops changing): written to a
temporary file, fsynced and renamed over the old one, so the file is always one whole
checkpoint. The writes happen in a worker thread, one at a time per run, so a fast model costs
at most a couple of small writes a second. A run that ends the normal way (completed,
aborted, failed: those are recorded in the transcript by the run itself) removes its file.

A file left when the gateway starts belongs to a run the last process never finished:
:func:`recover_interrupted` appends to its session's transcript an assistant message with the
partial text, ``stopReason: "aborted"``, an ``errorMessage`` and the real gateway's abort
marker ``openclawAbort: {aborted: true, origin: "interrupted", runId}``, then removes the file.
At most the text of the last interval is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from gateway.hub import now_ms

if TYPE_CHECKING:
    from gateway.chat.transcript_store import TranscriptStore

__all__ = [
    "CHECKPOINT_INTERVAL_S",
    "INTERRUPTED_ERROR",
    "CheckpointFolder",
    "ReplyCheckpoint",
    "interrupted_message",
    "recover_interrupted",
]

log = logging.getLogger("gateway.chat")

#: A streaming reply's checkpoint is rewritten at most this often.
CHECKPOINT_INTERVAL_S: Final = 0.25
#: ``errorMessage`` of a reply recovered from a checkpoint.
INTERRUPTED_ERROR: Final = "the gateway stopped before this reply finished (interrupted)"
#: ``openclawAbort.origin`` of such a reply (the real gateway's origins: rpc, stop-command, ...).
INTERRUPTED_ORIGIN: Final = "interrupted"
_VERSION: Final = 1
_SUFFIX: Final = ".json"
_BINARY = getattr(os, "O_BINARY", 0)


class CheckpointFolder:
    """The folder of checkpoint files (created 0700). Blocking file I/O: worker threads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def name(run_id: str) -> str:
        """The file name of a run's checkpoint (a run id never becomes a path)."""
        return hashlib.sha256(run_id.encode("utf-8")).hexdigest() + _SUFFIX

    def write(self, name: str, record: dict[str, Any]) -> None:
        """Replace the checkpoint ``name`` with ``record`` atomically (temp, fsync, rename)."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        temp = self.folder / (name + ".tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _BINARY, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, self.folder / name)

    def remove(self, name: str) -> None:
        """Remove a checkpoint (gone already is fine)."""
        for path in (self.folder / name, self.folder / (name + ".tmp")):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def leftovers(self) -> list[tuple[str, dict[str, Any] | None]]:
        """Every checkpoint in the folder with its record (None when unreadable); stray
        temporary files (a write cut mid-way) are removed."""
        if not self.folder.is_dir():
            return []
        out: list[tuple[str, dict[str, Any] | None]] = []
        for path in sorted(self.folder.iterdir()):
            if path.name.endswith(".tmp"):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                continue
            if not path.name.endswith(_SUFFIX):
                continue
            try:
                record = json.loads(path.read_bytes().decode("utf-8"))
            except (OSError, ValueError):
                record = None
            out.append((path.name, record if isinstance(record, dict) else None))
        return out


class ReplyCheckpoint:
    """One run's checkpoint, fed from the event loop as its reply streams."""

    def __init__(self, folder: CheckpointFolder, run_id: str, session_key: str) -> None:
        self._folder = folder
        self._name = folder.name(run_id)
        self._record: dict[str, Any] = {
            "version": _VERSION,
            "runId": run_id,
            "sessionKey": session_key,
            "startedAt": now_ms(),
            "provider": None,
            "model": None,
            "text": "",
            "thinking": "",
        }
        self._dirty = False
        self._closed = False
        self._last = float("-inf")
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._failed = False

    async def start(self) -> None:
        """Write the first checkpoint (no text yet): from now on the run leaves a trace."""
        await self._write_now()

    def update(self, text: str, thinking: str) -> None:
        """The reply's current text and reasoning (cumulative, of the current model turn)."""
        if self._closed:
            return
        self._record["text"], self._record["thinking"] = text, thinking
        self._dirty = True
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(
                self._write_loop(), name="chat-checkpoint"
            )

    def turn(self, provider: str, model: str) -> None:
        """A new model turn starts: its text starts empty."""
        self._record["provider"], self._record["model"] = provider, model
        self.update("", "")

    async def finish(self) -> None:
        """The run ended and recorded itself: stop writing and remove the checkpoint."""
        self._closed = True
        self._wake.set()
        if self._writer is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer
        try:
            await asyncio.to_thread(self._folder.remove, self._name)
        except OSError as exc:
            log.warning("could not remove a reply checkpoint: %s", exc.strerror)

    async def _write_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while self._dirty and not self._closed:
            wait = self._last + CHECKPOINT_INTERVAL_S - loop.time()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._wake.wait()
                continue
            await self._write_now()

    async def _write_now(self) -> None:
        self._dirty = False
        record = {**self._record, "updatedAt": now_ms()}
        self._last = asyncio.get_running_loop().time()
        try:
            await asyncio.to_thread(self._folder.write, self._name, record)
        except OSError as exc:
            if not self._failed:  # once per run: a full disk must not flood the log
                log.warning("could not write a reply checkpoint: %s", exc.strerror)
            self._failed = True


def interrupted_message(record: dict[str, Any], text: str, thinking: str) -> dict[str, Any]:
    """The assistant message that stands for a reply cut by the end of the last process."""
    run_id = str(record.get("runId") or "")
    # No empty text block: some model APIs refuse one when the message goes back as context.
    content: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking}] if thinking else []
    content += [{"type": "text", "text": text}] if text else []
    return {
        "role": "assistant",
        "content": content,
        "api": "openclaw",
        "provider": str(record.get("provider") or "openclaw"),
        "model": str(record.get("model") or "unknown"),
        "usage": {
            "input": 0,
            "output": 0,
            "totalTokens": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "stopReason": "aborted",
        "errorMessage": INTERRUPTED_ERROR,
        "timestamp": now_ms(),
        "idempotencyKey": f"{run_id}:assistant",
        "openclawAbort": {"aborted": True, "origin": INTERRUPTED_ORIGIN, "runId": run_id},
        "__openclaw": {"runId": run_id, "interrupted": True},
    }


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(
        str(b.get("text") or "") for b in parts if isinstance(b, dict) and b.get("type") == "text"
    )


def _last_of_run(path: list[dict[str, Any]], run_id: str) -> dict[str, Any] | None:
    """The run's last assistant message on the visible path (None when it wrote none)."""
    for message in reversed(path):
        if message.get("idempotencyKey") == f"{run_id}:user":
            return None
        meta = message.get("__openclaw")
        owner = meta.get("runId") if isinstance(meta, dict) else None
        if owner == run_id and message.get("role") == "assistant":
            found: dict[str, Any] = message
            return found
    return None


def recover_interrupted(folder: CheckpointFolder, store: TranscriptStore) -> list[str]:
    """Turn every checkpoint left by the last process into an interrupted assistant message.

    A run whose transcript already ends with its final message (the process died between
    recording it and removing the checkpoint) gets nothing more; text already recorded as a
    finished model turn (before a tool call) is not repeated. Blocking I/O.

    Returns:
        The session keys that got a message.
    """
    recovered: list[str] = []
    for name, record in folder.leftovers():
        key = record.get("sessionKey") if record else None
        run_id = record.get("runId") if record else None
        if record is None or not isinstance(key, str) or not isinstance(run_id, str):
            log.warning("dropping an unreadable reply checkpoint %s", name)
            folder.remove(name)
            continue
        try:
            transcript = store.open(key)
        except ValueError:
            log.warning("dropping a reply checkpoint of an invalid session key")
            folder.remove(name)
            continue
        text, thinking = str(record.get("text") or ""), str(record.get("thinking") or "")
        last = _last_of_run(transcript.visible_path(), run_id)
        if last is not None and last.get("stopReason") != "toolUse":
            folder.remove(name)  # the run had recorded its end
            continue
        if last is not None and text and _text_of(last) == text:
            text, thinking = "", ""  # that turn is recorded; the cut came after it
        try:
            transcript.append(interrupted_message(record, text, thinking))
        except ValueError:  # a reply text past the transcript's line limit: keep a marker
            transcript.append(interrupted_message(record, "", ""))
        folder.remove(name)
        recovered.append(key)
    return recovered
