"""This gateway's own log file, which ``logs.tail`` reads: one JSON object per line with the
keys the real CLI's ``openclaw logs`` reads (``time``, ``level``, ``subsystem``, ``message``),
redacted like every other log output, rotated at :data:`MAX_BYTES`."""

from __future__ import annotations

import datetime
import json
import logging
import logging.handlers
import os
from pathlib import Path
from typing import Any

from openclaw_desktop.log import RedactingFilter

__all__ = ["MAX_BYTES", "LogFileFormatter", "file_handler", "log_path", "read_tail"]

#: The file rotates beyond this size (one backup is kept).
MAX_BYTES = 5 * 1024 * 1024


def log_path(state_dir: Path) -> Path:
    """Where the gateway with this state dir writes its log."""
    return Path(state_dir) / "logs" / "gateway.log"


class LogFileFormatter(logging.Formatter):
    """``{"time", "level", "subsystem", "message"}`` (plus ``exc`` with a traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "subsystem": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def file_handler(state_dir: Path, level: int = logging.INFO) -> logging.Handler:
    """A rotating, redacting handler writing :func:`log_path` (0600, folder 0700)."""
    path = log_path(state_dir)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.close(fd)
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=1, encoding="utf-8"
    )
    handler.setLevel(level)
    handler.setFormatter(LogFileFormatter())
    handler.addFilter(RedactingFilter())
    return handler


def read_tail(path: Path, *, cursor: int | None, limit: int, max_bytes: int) -> dict[str, Any]:
    """The reference's tail of ``path``: from ``cursor`` (else the last ``max_bytes``), the
    last ``limit`` whole lines, and ``cursor`` for the next call.

    A cursor past the end (the file was rotated) starts over (``reset``); more than
    ``max_bytes`` after the cursor skips ahead (``reset``, ``skippedBytes``). A missing
    file is empty."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return {"cursor": 0, "size": 0, "lines": [], "truncated": False, "reset": bool(cursor)}
    reset = truncated = False
    skipped: int | None = None
    if cursor is None:
        start = max(0, size - max_bytes)
        truncated = start > 0
    elif cursor > size:
        reset = True
        start = max(0, size - max_bytes)
        truncated = start > 0
    else:
        start = cursor
        if size - start > max_bytes:
            reset = truncated = True
            bounded = size - max_bytes
            skipped = bounded - start
            start = bounded
    result: dict[str, Any] = {"cursor": size, "size": size, "lines": [], "truncated": truncated}
    result["reset"] = reset
    if skipped is not None:
        result["skippedBytes"] = skipped
    if size <= start:
        return result
    with path.open("rb") as fh:
        fh.seek(start)
        data = fh.read(size - start)
    if start > 0 and (cursor is None or reset):
        # Began inside a line: drop its tail (a cursor from an earlier answer is on a line).
        newline = data.find(b"\n")
        data = data[newline + 1 :] if newline >= 0 else b""
    text = data.decode("utf-8", errors="replace")
    lines = [line for line in text.split("\n") if line]
    if len(lines) > limit:
        lines = lines[-limit:]
        result["truncated"] = True
    result["lines"] = lines
    return result
