"""Logger categories and console logging setup.

Loggers are named ``openclaw.<area>``. Nothing in the core logs tokens, passwords, setup
codes or private keys; :class:`RedactingFilter` is a second line of defence for anything
that looks like one in a message's arguments.
"""

from __future__ import annotations

import datetime
import json
import logging
import logging.handlers
import re
import sys
from pathlib import Path

__all__ = [
    "LOGGER_NAMES",
    "LOG_FILE_NAME",
    "JsonLinesFormatter",
    "RedactingFilter",
    "configure_logging",
    "log_to_folder",
]

LOGGER_NAMES = (
    "openclaw.transport",
    "openclaw.session",
    "openclaw.identity",
    "openclaw.trust",
    "openclaw.node",
    "openclaw.cli",
    "gateway",
)

#: The window's log file, in its logs folder (``AppPaths.log_dir``).
LOG_FILE_NAME = "desktop.log"

_SECRET_FIELDS = re.compile(
    r'("?(?:token|password|deviceToken|bootstrapToken|privateKey|setupCode)"?\s*[:=]\s*"?)'
    r'([^",\s}]+)',
    re.IGNORECASE,
)

# The setup code of an ``openclaw://pair?code=…`` link (it holds a bootstrap token).
_LINK_CODE = re.compile(r"(openclaw://[^\s\"']*?[?&]code=)([^&#\s\"']+)", re.IGNORECASE)


class RedactingFilter(logging.Filter):
    """Masks ``token=…``/``"password": "…"`` style values and the code of ``openclaw://``
    links in formatted messages."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = _SECRET_FIELDS.sub(r"\1<redacted>", message)
        redacted = _LINK_CODE.sub(r"\1<redacted>", redacted)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


class JsonLinesFormatter(logging.Formatter):
    """One JSON object per line, for log collectors (journald, Loki, ``jq``): ``ts`` (UTC,
    ISO 8601 with milliseconds), ``level``, ``logger``, ``msg``, and ``exc`` with the
    traceback when there is one. The message is formatted (and redacted) first."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(verbosity: int = 0, *, json_lines: bool = False) -> None:
    """Log to stderr: warnings by default, info with ``-v``, debug with ``-vv``; as text, or
    as JSON lines (:class:`JsonLinesFormatter`) with ``json_lines``."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonLinesFormatter()
        if json_lines
        else logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    )
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The node prints invokes and notifications at WARNING/INFO; keep them visible.
    logging.getLogger("openclaw.node").setLevel(min(level, logging.INFO))
    logging.getLogger("websockets").setLevel(max(level, logging.WARNING))


def log_to_folder(folder: Path) -> Path | None:
    """Also log to :data:`LOG_FILE_NAME` in ``folder`` (created if needed; rotated at 1 MB,
    3 kept, secrets redacted like on stderr). Returns the file, or None when it cannot be
    written."""
    path = folder / LOG_FILE_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
        )
    except OSError:
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)-7s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    logging.getLogger().addHandler(handler)
    return path
