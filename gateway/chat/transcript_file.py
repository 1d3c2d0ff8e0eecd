"""Low-level JSONL transcript file I/O: create, scan/repair, append with fsync.

Durability rule: a record is committed once its terminating newline is on disk. Every append
is one ``os.write`` of ``<json>\\n`` followed by ``os.fsync``; a new file is fsynced and so is
its directory. On open, bytes after the last newline (a record torn by a crash) are logged and
truncated away, so the next record never glues onto them. A complete line that is not a valid
record is skipped with a warning and left in the file untouched.

Everything here is blocking file I/O.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_RECORD_BYTES",
    "ScannedFile",
    "append_record",
    "create_file",
    "encode_record",
    "fsync_dir",
    "read_header",
    "record_size",
    "scan_file",
]

log = logging.getLogger("gateway.chat")

#: Largest serialized record (one JSONL line) accepted, in bytes.
MAX_RECORD_BYTES = 16 * 1024 * 1024
_HEADER_READ_BYTES = 8192
_FILE_MODE = 0o600
_BINARY = getattr(os, "O_BINARY", 0)


#: Stands in for the ``id``/``parentId`` the store adds (both UUIDs) when sizing a message.
_ID_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"


def _serialize(record: Mapping[str, Any]) -> tuple[str, bytes]:
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text, text.encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        raise ValueError(f"message is not JSON-serializable: {exc}") from None


def encode_record(record: Mapping[str, Any]) -> tuple[bytes, int]:
    """Serialize ``record`` to one JSONL line; return the bytes and its length in characters.

    Raises:
        ValueError: If the record is not JSON-serializable (sets, bytes, NaN, non-string
            keys, lone surrogates, ...) or is larger than :data:`MAX_RECORD_BYTES`.
    """
    text, data = _serialize(record)
    if len(data) + 1 > MAX_RECORD_BYTES:
        raise ValueError(f"message is larger than {MAX_RECORD_BYTES} bytes once serialized")
    return data + b"\n", len(text)


def record_size(message: Mapping[str, Any]) -> int:
    """The bytes ``message`` would take as one transcript line (with the ``id`` and
    ``parentId`` a store adds, and the newline), to refuse a message before accepting it;
    it fits when this is at most :data:`MAX_RECORD_BYTES`.

    Raises:
        ValueError: If the message is not JSON-serializable.
    """
    _, data = _serialize({**message, "id": _ID_PLACEHOLDER, "parentId": _ID_PLACEHOLDER})
    return len(data) + 1


def fsync_dir(directory: Path) -> None:
    """fsync a directory so a newly created or renamed entry survives a crash (POSIX only)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def create_file(path: Path, header: Mapping[str, Any]) -> bool:
    """Create ``path`` (mode 0600) holding only the header line, fsync it and its directory.

    Returns:
        False (and writes nothing) if the file already exists.
    """
    data, _ = encode_record(header)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY, _FILE_MODE)
    except FileExistsError:
        return False
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(path.parent)
    return True


def append_record(fd: int, data: bytes, committed: int) -> int:
    """Append one encoded line to the file open as ``fd`` (``O_APPEND``) and fsync it.

    ``committed`` is the size the file must have before the write; anything beyond it (left by
    an earlier failed write) is truncated first. Returns the new committed size.

    Raises:
        OSError: If writing or syncing fails; the file is cut back to ``committed`` if possible.
    """
    if os.fstat(fd).st_size != committed:
        os.ftruncate(fd, committed)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    except OSError:
        try:
            os.ftruncate(fd, committed)
        except OSError:
            log.warning("could not cut a failed transcript write back; repairing on next append")
        raise
    return committed + len(data)


@dataclass
class ScannedFile:
    """What :func:`scan_file` found: the header, valid records in file order, and the size."""

    header: dict[str, Any] | None = None
    records: list[tuple[dict[str, Any], int]] = field(default_factory=list)
    committed: int = 0
    skipped: int = 0
    torn_bytes: int = 0


def _is_record(obj: object) -> bool:
    if not isinstance(obj, dict):
        return False
    ident, parent, role = obj.get("id"), obj.get("parentId"), obj.get("role")
    return (
        isinstance(ident, str)
        and bool(ident)
        and (parent is None or isinstance(parent, str))
        and isinstance(role, str)
        and bool(role)
    )


def _is_header(obj: object) -> bool:
    return isinstance(obj, dict) and obj.get("type") == "session" and "role" not in obj


def scan_file(path: Path, *, repair: bool) -> ScannedFile:
    """Read a transcript, skipping bad lines; with ``repair`` truncate a torn tail.

    A line that is not JSON, not an object, lacks a string ``id``/``role`` or a string/null
    ``parentId``, or repeats an ``id`` is skipped with a warning (line number only, never its
    content). Duplicate ids keep the first occurrence.
    """
    data = path.read_bytes()
    scanned = ScannedFile()
    scanned.committed = data.rfind(b"\n") + 1
    scanned.torn_bytes = len(data) - scanned.committed
    if scanned.torn_bytes:
        log.warning(
            "transcript %s ends with %d bytes of a torn record; %s",
            path.name,
            scanned.torn_bytes,
            "truncating them" if repair else "ignoring them",
        )
        if repair:
            with open(path, "r+b") as fh:
                fh.truncate(scanned.committed)
                fh.flush()
                os.fsync(fh.fileno())
    seen: set[str] = set()
    lines = data[: scanned.committed].split(b"\n")[:-1]
    for lineno, raw in enumerate(lines, start=1):
        try:
            text = raw.decode("utf-8")
            obj = json.loads(text)
        except ValueError:  # also UnicodeDecodeError
            obj = None
        if lineno == 1 and _is_header(obj):
            assert isinstance(obj, dict)
            scanned.header = obj
            continue
        if not _is_record(obj) or obj["id"] in seen:
            scanned.skipped += 1
            log.warning("transcript %s: skipping invalid line %d", path.name, lineno)
            continue
        assert isinstance(obj, dict)
        seen.add(obj["id"])
        scanned.records.append((obj, len(text)))
    return scanned


def read_header(path: Path) -> dict[str, Any] | None:
    """Return the header of a transcript file (its first line), or None if it has none."""
    with open(path, "rb") as fh:
        first = fh.readline(_HEADER_READ_BYTES)
    if not first.endswith(b"\n"):
        return None
    try:
        obj = json.loads(first.decode("utf-8"))
    except ValueError:
        return None
    return obj if _is_header(obj) else None
