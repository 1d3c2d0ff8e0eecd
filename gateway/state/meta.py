"""A small key/value table for non-secret gateway facts (e.g. a first-start timestamp).

Secrets do not belong here: the database is copied into backups and bug reports more readily
than a dedicated 0600 file. The shared gateway token lives in ``<state_dir>/gateway-token``
(see :func:`gateway.state.secret_files.read_or_create_shared_token`).
"""

from __future__ import annotations

from gateway.state._codec import require_text
from gateway.state._db import Database

__all__ = ["MetaStore"]


class MetaStore:
    """The ``meta`` table. Get one from :attr:`GatewayState.meta`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, key: str) -> str | None:
        """The value stored under ``key``, or None."""
        row = self._db.row("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any earlier value.

        Raises:
            ValueError: If ``key`` is blank.
        """
        key = require_text("key", key)
        with self._db.transaction():
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete(self, key: str) -> bool:
        """Remove ``key``; False if it was not set."""
        with self._db.transaction():
            cursor = self._db.execute("DELETE FROM meta WHERE key = ?", (key,))
        return cursor.rowcount > 0
