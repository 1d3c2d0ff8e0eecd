"""The SQLite connection: opening, integrity checks, migrations and transactions.

Durability: the connection runs WAL with ``synchronous=NORMAL``. A commit then survives a crash
of the gateway process (the WAL frames are in the OS before COMMIT returns) but the last few
commits may roll back on power loss or an OS crash; the file stays consistent either way.
Writes that hand out or take away trust (tokens, approvals, revocations, setup codes) run with
``durable=True``, which switches the connection to ``synchronous=FULL`` for that commit so the
WAL is fsynced: a device must never hold a token the gateway forgot, and a revoked token must
never come back after a power cut. Bookkeeping (last seen, pending-request refresh and expiry)
stays NORMAL; these writes are frequent and losing one is harmless.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gateway.state._files import ensure_private_dir, ensure_private_file
from gateway.state._schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from gateway.state.errors import StateBusyError, StateCorruptError, StateError, StateVersionError

__all__ = ["DB_FILENAME", "Database", "Params"]

log = logging.getLogger("gateway.state")

#: The database file inside the state directory.
DB_FILENAME = "gateway.sqlite3"

Params = Sequence[Any]

_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


class Database:
    """One connection to the state database; not shared between threads.

    Args:
        path: The database file (0600); its directory is created with mode 0700 if missing.
        busy_timeout_ms: How long a write waits for another connection's lock.

    Raises:
        StateCorruptError: The file is not a SQLite database, fails ``quick_check`` or is not a
            gateway state database.
        StateVersionError: The schema is newer than this build.
        StateError: Any other failure to open.
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 2_000) -> None:
        self.path = path
        self.busy_timeout_ms = busy_timeout_ms
        try:
            ensure_private_dir(path.parent)
            ensure_private_file(self.path)
        except OSError as exc:
            raise StateError(f"cannot create gateway state {self.path}: {exc}") from exc
        self._depth = 0
        self._durable = False
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=busy_timeout_ms / 1000, isolation_level=None
            )
        except sqlite3.Error as exc:
            raise StateError(f"cannot open gateway state {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        try:
            self._configure()
            self._check_integrity()
            self._migrate()
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the connection; the last connection to close checkpoints the WAL."""
        self._conn.close()

    def _configure(self) -> None:
        mode = self._scalar("PRAGMA journal_mode=WAL")
        if str(mode).lower() != "wal":
            log.warning("SQLite refused WAL mode for %s (got %r); continuing", self.path, mode)
        self.execute("PRAGMA synchronous=NORMAL")
        self.execute("PRAGMA foreign_keys=ON")
        self.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")

    def _check_integrity(self) -> None:
        problems = [" ".join(str(row[0]).split()) for row in self.rows("PRAGMA quick_check")]
        if problems != ["ok"]:
            raise StateCorruptError(self.path, "integrity check failed: " + "; ".join(problems[:3]))

    def _migrate(self) -> None:
        with self.transaction(durable=True):
            app_id = int(self._scalar("PRAGMA application_id"))
            tables = {
                str(row[0])
                for row in self.rows(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%'"
                )
            }
            if "schema_version" not in tables:
                if tables or app_id not in (0, APPLICATION_ID):
                    raise StateCorruptError(
                        self.path,
                        "not an OpenClaw gateway state database (tables: "
                        + ", ".join(sorted(tables)[:5])
                        + ")",
                    )
                self.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY NOT NULL)")
                self.execute(f"PRAGMA application_id={APPLICATION_ID}")
                current = 0
            else:
                if app_id != APPLICATION_ID:
                    raise StateCorruptError(self.path, f"unexpected application_id {app_id:#x}")
                current = int(self._scalar("SELECT coalesce(max(version), 0) FROM schema_version"))
            if current > SCHEMA_VERSION:
                raise StateVersionError(self.path, current, SCHEMA_VERSION)
            for migration in MIGRATIONS:
                if migration.version <= current:
                    continue
                log.info(
                    "migrating %s to schema %d: %s",
                    self.path,
                    migration.version,
                    migration.description,
                )
                for statement in migration.statements:
                    self.execute(statement)
                self.execute(
                    "INSERT INTO schema_version (version) VALUES (?)", (migration.version,)
                )

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        return int(self._scalar("SELECT max(version) FROM schema_version"))

    # ------------------------------------------------------------------ statements

    def _translate(self, exc: sqlite3.DatabaseError) -> StateError:
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
            return StateBusyError(self.path, self.busy_timeout_ms)
        if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or "not a database" in str(exc):
            return StateCorruptError(self.path, str(exc))
        return StateError(f"gateway state {self.path}: {exc}")

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        """Run one statement.

        Raises:
            sqlite3.IntegrityError: Passed through so callers can map constraint failures.
            StateError: Any other database failure, translated.
        """
        try:
            return self._conn.execute(sql, params)
        except (sqlite3.IntegrityError, sqlite3.ProgrammingError):
            raise
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from exc

    def rows(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """All rows of a query."""
        cursor = self.execute(sql, params)
        try:
            return cursor.fetchall()
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from exc

    def row(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """The first row of a query, or None."""
        cursor = self.execute(sql, params)
        try:
            found: sqlite3.Row | None = cursor.fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from exc
        return found

    def _scalar(self, sql: str, params: Params = ()) -> Any:
        found = self.row(sql, params)
        return None if found is None else found[0]

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def transaction(self, *, durable: bool = False) -> Iterator[None]:
        """One atomic write: ``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception.

        Nested calls join the outer transaction through a SAVEPOINT, so an inner failure that
        the caller catches undoes only the inner writes.

        Args:
            durable: fsync the WAL at commit (``synchronous=FULL``). SQLite cannot change the
                level inside a transaction, so a nested durable block needs a durable outer one.

        Raises:
            RuntimeError: A durable block nested inside a non-durable transaction.
            StateBusyError: Another connection held the write lock past the busy timeout.
        """
        if self._depth:
            if durable and not self._durable:
                raise RuntimeError("a durable write cannot join a non-durable transaction")
            name = f"sp{self._depth}"
            self.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield
            except BaseException:
                self.execute(f"ROLLBACK TO {name}")
                self.execute(f"RELEASE {name}")
                raise
            else:
                self.execute(f"RELEASE {name}")
            finally:
                self._depth -= 1
            return
        if durable:
            self.execute("PRAGMA synchronous=FULL")
        try:
            self.execute("BEGIN IMMEDIATE")
            self._depth, self._durable = 1, durable
            try:
                yield
            except BaseException:
                self._rollback()
                raise
            try:
                self.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        finally:
            self._depth, self._durable = 0, False
            if durable:
                self.execute("PRAGMA synchronous=NORMAL")

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            try:
                self._conn.execute("ROLLBACK")
            except sqlite3.Error as exc:  # the original exception matters more
                log.warning("rollback of %s failed: %s", self.path, exc)
