"""The entry point: :class:`GatewayState`, one SQLite database per state directory."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from gateway.state._db import DB_FILENAME, Database
from gateway.state.bootstrap import BootstrapTokens
from gateway.state.devices import DeviceRegistry
from gateway.state.meta import MetaStore
from gateway.state.nodes import NodeSurfaces
from gateway.state.pairing import PairingRequests
from gateway.state.sessions import ChatSessions
from gateway.state.tokens import DeviceTokens

__all__ = ["DB_FILENAME", "GatewayState"]


class GatewayState:
    """The bundled gateway's durable state: devices, pairing, tokens, setup codes, nodes.

    Opening creates the database file (0600) and its directory (0700) if needed, checks the
    file and migrates it forward. Every method is synchronous and runs a few small indexed
    statements, so the server can call them on its event loop. One instance belongs to one
    thread. Each public write is one transaction; to group several writes atomically, wrap
    them in :meth:`transaction`.

    Args:
        path: The database file, conventionally ``<state_dir>/gateway.sqlite3``
            (:data:`DB_FILENAME`); an existing directory means that file inside it.
        busy_timeout_ms: How long a write waits when another connection holds the lock.

    Raises:
        StateCorruptError: The database is damaged or is not a gateway state database.
        StateVersionError: The database comes from a newer build.
        StateError: It cannot be opened for another reason.

    Attributes:
        devices: Paired devices.
        pairing: Pending device pairing requests.
        tokens: Device tokens (hashes only).
        bootstrap: Setup-code bootstrap tokens (hashes only).
        nodes: Node capability surfaces and their pending requests.
        meta: Non-secret key/value facts.
        sessions: The chat sessions index.
    """

    def __init__(self, path: Path, *, busy_timeout_ms: int = 2_000) -> None:
        if path.is_dir():
            path = path / DB_FILENAME
        self._db = Database(path, busy_timeout_ms=busy_timeout_ms)
        self.devices = DeviceRegistry(self._db)
        self.bootstrap = BootstrapTokens(self._db)
        self.pairing = PairingRequests(self._db, self.devices, self.bootstrap)
        self.tokens = DeviceTokens(self._db, self.devices)
        self.nodes = NodeSurfaces(self._db, self.devices)
        self.meta = MetaStore(self._db)
        self.sessions = ChatSessions(self._db)

    @classmethod
    def in_state_dir(cls, state_dir: Path, *, busy_timeout_ms: int = 2_000) -> GatewayState:
        """Open ``<state_dir>/gateway.sqlite3``, creating the directory if needed."""
        return cls(state_dir / DB_FILENAME, busy_timeout_ms=busy_timeout_ms)

    @property
    def db_path(self) -> Path:
        """The database file."""
        return self._db.path

    @property
    def state_dir(self) -> Path:
        """The directory holding the database (and the shared-token file)."""
        return self._db.path.parent

    @property
    def schema_version(self) -> int:
        """The schema version of the open database."""
        return self._db.schema_version

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several calls into one durable transaction (all or nothing).

        For example, approve a device and issue its token so that a crash cannot leave an
        approved device without the token the client was about to receive.
        """
        with self._db.transaction(durable=True):
            yield

    def close(self) -> None:
        """Close the database; the instance cannot be used afterwards."""
        self._db.close()

    def __enter__(self) -> GatewayState:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
