"""The gateway state database: files, pragmas, migrations, corruption, transactions, WAL."""

from __future__ import annotations

import base64
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from gateway.state import (
    DB_FILENAME,
    GatewayState,
    StateBusyError,
    StateCorruptError,
    StateError,
    StateVersionError,
)
from gateway.state import _db as db_module
from gateway.state._codec import hash_token
from gateway.state._schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, Migration

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / "state"


@pytest.fixture
def state(state_dir: Path) -> Iterator[GatewayState]:
    with GatewayState.in_state_dir(state_dir) as opened:
        yield opened


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _raw(path: Path) -> closing[sqlite3.Connection]:
    return closing(sqlite3.connect(path, isolation_level=None))


def _pragma(state: GatewayState, name: str) -> object:
    row = state._db.row(f"PRAGMA {name}")
    assert row is not None
    return row[0]


def _pair(state: GatewayState, device_id: str = "dev-1", now_ms: int = 1_000) -> None:
    state.devices.approve(
        device_id,
        KEY,
        role="operator",
        scopes=["operator.read"],
        approved_via="owner",
        now_ms=now_ms,
    )


@posix_only
def test_fresh_state_dir_and_files_are_owner_only(state: GatewayState, state_dir: Path) -> None:
    """The state dir is 0700 and the database, WAL and shared-memory files are 0600."""
    _pair(state)
    assert state.db_path == state_dir / DB_FILENAME
    assert _mode(state_dir) == 0o700
    assert _mode(state.db_path) == 0o600
    for suffix in ("-wal", "-shm"):
        sidecar = state.db_path.with_name(DB_FILENAME + suffix)
        assert sidecar.exists()
        assert _mode(sidecar) == 0o600


def test_path_may_be_the_file_or_an_existing_directory(tmp_path: Path) -> None:
    """GatewayState takes the database file; an existing directory means the file inside."""
    with GatewayState(tmp_path / "a" / "custom.sqlite3") as state:
        assert state.db_path == tmp_path / "a" / "custom.sqlite3"
        assert state.state_dir == tmp_path / "a"
    (tmp_path / "b").mkdir()
    with GatewayState(tmp_path / "b") as state:
        assert state.db_path == tmp_path / "b" / DB_FILENAME
    with GatewayState.in_state_dir(tmp_path / "c" / "d") as state:
        assert state.db_path == tmp_path / "c" / "d" / DB_FILENAME


@posix_only
def test_open_tightens_a_world_readable_database(state_dir: Path) -> None:
    """An existing database file readable by others is chmod-ed back to 0600."""
    GatewayState.in_state_dir(state_dir).close()
    os.chmod(state_dir / DB_FILENAME, 0o644)
    os.chmod(state_dir, 0o755)
    GatewayState.in_state_dir(state_dir).close()
    assert _mode(state_dir / DB_FILENAME) == 0o600
    assert _mode(state_dir) == 0o700


@posix_only
def test_shared_sticky_directory_is_not_tightened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A sticky shared directory used as state dir keeps its mode; a warning is logged."""
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    GatewayState.in_state_dir(shared).close()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert "accessible to other users" in caplog.text
    assert _mode(shared / DB_FILENAME) == 0o600


def test_uncreatable_state_dir_raises_state_error(tmp_path: Path) -> None:
    """A state dir that cannot be created raises StateError, not a bare OSError."""
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StateError, match="cannot create gateway state"):
        GatewayState.in_state_dir(blocker / "state")


def test_pragmas_wal_normal_foreign_keys(state: GatewayState) -> None:
    """The connection runs WAL, synchronous=NORMAL (1) and enforces foreign keys."""
    assert _pragma(state, "journal_mode") == "wal"
    assert _pragma(state, "synchronous") == 1
    assert _pragma(state, "foreign_keys") == 1


def test_durable_transaction_uses_synchronous_full(state: GatewayState) -> None:
    """Inside GatewayState.transaction() the level is FULL (2); afterwards NORMAL again."""
    with state.transaction():
        assert _pragma(state, "synchronous") == 2
        _pair(state)
    assert _pragma(state, "synchronous") == 1


def test_schema_version_table_and_application_id(state: GatewayState) -> None:
    """A new database records every migration and carries the gateway's application_id."""
    with _raw(state.db_path) as raw:
        versions = [row[0] for row in raw.execute("SELECT version FROM schema_version")]
        app_id = raw.execute("PRAGMA application_id").fetchone()[0]
    assert versions == [migration.version for migration in MIGRATIONS]
    assert state.schema_version == SCHEMA_VERSION == versions[-1]
    assert app_id == APPLICATION_ID


def test_migration_from_an_empty_file(state_dir: Path) -> None:
    """A zero-byte database file is a valid empty database and is migrated to the schema."""
    state_dir.mkdir(mode=0o700)
    (state_dir / DB_FILENAME).write_bytes(b"")
    with GatewayState.in_state_dir(state_dir) as state:
        assert state.schema_version == SCHEMA_VERSION
        assert state.devices.list() == []


def test_forward_migration_runs_once_on_reopen(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A newly added migration is applied on the next open, exactly once."""
    GatewayState.in_state_dir(state_dir).close()
    nxt = SCHEMA_VERSION + 1
    extra = Migration(nxt, "test table", ("CREATE TABLE extra (x INTEGER)",))
    monkeypatch.setattr(db_module, "MIGRATIONS", (*MIGRATIONS, extra))
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", nxt)
    for _ in range(2):
        with GatewayState.in_state_dir(state_dir) as state:
            assert state.schema_version == nxt
    with _raw(state_dir / DB_FILENAME) as raw:
        versions = [row[0] for row in raw.execute("SELECT version FROM schema_version")]
    assert versions == list(range(1, nxt + 1))


def test_failed_migration_leaves_the_previous_version(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration that fails midway rolls back entirely; the old schema still opens."""
    with GatewayState.in_state_dir(state_dir) as state:
        _pair(state)
    nxt = SCHEMA_VERSION + 1
    broken = Migration(nxt, "broken", ("CREATE TABLE half (x INTEGER)", "THIS IS NOT SQL"))
    monkeypatch.setattr(db_module, "MIGRATIONS", (*MIGRATIONS, broken))
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", nxt)
    with pytest.raises(StateError):
        GatewayState.in_state_dir(state_dir)
    monkeypatch.undo()
    with GatewayState.in_state_dir(state_dir) as state:
        assert state.schema_version == SCHEMA_VERSION
        assert [device.device_id for device in state.devices.list()] == ["dev-1"]
    with _raw(state_dir / DB_FILENAME) as raw:
        names = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert "half" not in names


def test_a_version_1_database_gains_the_sessions_index(
    state_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An installation from before chat (schema 1) migrates forward and keeps its devices."""
    monkeypatch.setattr(db_module, "MIGRATIONS", MIGRATIONS[:1])
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", 1)
    with GatewayState.in_state_dir(state_dir) as state:
        _pair(state)
        assert state.schema_version == 1
    monkeypatch.undo()
    with GatewayState.in_state_dir(state_dir) as state:
        assert state.schema_version == SCHEMA_VERSION >= 2
        assert [device.device_id for device in state.devices.list()] == ["dev-1"]
        session = state.sessions.ensure("agent:main:main", "main", 5)
        assert state.sessions.update(session.key, 6, status="running").status == "running"


def test_newer_schema_is_refused(state_dir: Path) -> None:
    """A database from a newer build raises StateVersionError and is not modified."""
    GatewayState.in_state_dir(state_dir).close()
    with _raw(state_dir / DB_FILENAME) as raw:
        raw.execute("INSERT INTO schema_version (version) VALUES (99)")
    before = (state_dir / DB_FILENAME).read_bytes()
    with pytest.raises(StateVersionError) as caught:
        GatewayState.in_state_dir(state_dir)
    assert caught.value.found == 99
    assert caught.value.supported == SCHEMA_VERSION
    assert "99" in str(caught.value)
    assert (state_dir / DB_FILENAME).read_bytes() == before


def test_garbage_file_raises_corrupt_and_is_kept(state_dir: Path) -> None:
    """A file that is not SQLite raises StateCorruptError and is left byte-for-byte."""
    state_dir.mkdir(mode=0o700)
    garbage = b"this is definitely not a database\n" * 200
    (state_dir / DB_FILENAME).write_bytes(garbage)
    with pytest.raises(StateCorruptError) as caught:
        GatewayState.in_state_dir(state_dir)
    assert caught.value.path == state_dir / DB_FILENAME
    assert "move it aside" in str(caught.value)
    assert (state_dir / DB_FILENAME).read_bytes() == garbage


def test_damaged_page_raises_corrupt(state_dir: Path) -> None:
    """A database whose b-tree page was overwritten fails the integrity check on open."""
    with GatewayState.in_state_dir(state_dir) as state:
        for index in range(200):
            _pair(state, f"dev-{index}", now_ms=index)
    path = state_dir / DB_FILENAME
    data = bytearray(path.read_bytes())
    data[3 * 4096 : 4 * 4096] = b"\x5a" * 4096
    path.write_bytes(bytes(data))
    with pytest.raises(StateCorruptError, match="integrity check failed"):
        GatewayState.in_state_dir(state_dir)
    assert path.read_bytes() == bytes(data)


def test_foreign_sqlite_database_is_refused(state_dir: Path) -> None:
    """A SQLite file with someone else's tables is not adopted or migrated."""
    state_dir.mkdir(mode=0o700)
    with _raw(state_dir / DB_FILENAME) as raw:
        raw.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY)")
    with pytest.raises(StateCorruptError, match="not an OpenClaw gateway state database"):
        GatewayState.in_state_dir(state_dir)
    with _raw(state_dir / DB_FILENAME) as raw:
        names = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    assert names == {"photos"}


def test_reopen_keeps_everything(state_dir: Path) -> None:
    """Devices, tokens, requests, setup codes, node surfaces and meta survive close/reopen."""
    with GatewayState.in_state_dir(state_dir) as state:
        _pair(state)
        state.devices.approve(
            "node-1", KEY, role="node", scopes=[], approved_via="silent", now_ms=1
        )
        token = state.tokens.issue("dev-1", "operator", ["operator.read"], 2_000)
        pending = state.pairing.request("dev-2", KEY, role="node", scopes=[], now_ms=3_000)
        boot_token, setup = state.bootstrap.mint(3_000)
        surface = state.nodes.request(
            "node-1",
            commands=["system.notify"],
            caps=["system"],
            permissions=None,
            required_approve_scopes=["operator.pairing", "operator.write"],
            now_ms=3_000,
        )
        state.meta.set("first-start", "3000")
    with GatewayState.in_state_dir(state_dir) as state:
        assert state.devices.get("dev-1") is not None
        assert state.tokens.verify("dev-1", "operator", token) is not None
        assert state.pairing.get(pending.request_id, 3_000) == pending.request
        assert state.bootstrap.status(setup.setup_id, 3_000) == setup
        assert state.bootstrap.redeem(boot_token, "dev-3", KEY, 3_000) is not None
        assert state.nodes.get(surface.request_id, 3_000) == surface.request
        assert state.meta.get("first-start") == "3000"


def _pair_issue_and_fail(state: GatewayState) -> None:
    with state.transaction():
        _pair(state)
        state.tokens.issue("dev-1", "operator", [], 1_000)
        raise RuntimeError("boom")


def _meta_issue_and_fail(state: GatewayState) -> None:
    with state.transaction():
        state.meta.set("inner", "1")
        state.tokens.issue("dev-1", "operator", ["operator.read"], 1_000)
        raise ValueError("inner")


def test_transaction_is_all_or_nothing(state: GatewayState) -> None:
    """An exception inside GatewayState.transaction() undoes every write in it."""
    with pytest.raises(RuntimeError, match="boom"):
        _pair_issue_and_fail(state)
    assert state.devices.list() == []
    assert state.tokens.list("dev-1") == []


def test_caught_inner_failure_undoes_only_the_inner_writes(state: GatewayState) -> None:
    """A failing block inside a transaction rolls back to its savepoint; the rest commits."""
    with state.transaction():
        _pair(state)
        with pytest.raises(ValueError, match="inner"):
            _meta_issue_and_fail(state)
        with pytest.raises(StateError):
            state.tokens.issue("dev-1", "operator", ["operator.admin"], 1_000)
        state.meta.set("outer", "1")
    assert state.devices.get("dev-1") is not None
    assert state.tokens.list("dev-1") == []
    assert state.meta.get("inner") is None
    assert state.meta.get("outer") == "1"


def test_durable_write_cannot_join_a_plain_transaction(state: GatewayState) -> None:
    """Nesting a durable write in a non-durable transaction is a programming error."""
    with pytest.raises(RuntimeError, match="durable"), state._db.transaction():
        _pair(state)
    assert state.devices.list() == []


def test_readers_are_not_blocked_by_an_open_write_transaction(state_dir: Path) -> None:
    """Under WAL a second connection reads the last committed state while a write is open."""
    with (
        GatewayState.in_state_dir(state_dir) as writer,
        GatewayState.in_state_dir(state_dir) as reader,
    ):
        _pair(writer, "dev-old")
        with writer.transaction():
            _pair(writer, "dev-new")
            started = time.monotonic()
            seen = [device.device_id for device in reader.devices.list()]
            assert time.monotonic() - started < 1.0
            assert seen == ["dev-old"]
            assert reader.devices.get("dev-new") is None
        assert {device.device_id for device in reader.devices.list()} == {"dev-old", "dev-new"}


def test_second_writer_gets_busy_error(state_dir: Path) -> None:
    """A write that waits past busy_timeout_ms for another writer raises StateBusyError."""
    with (
        GatewayState.in_state_dir(state_dir) as writer,
        GatewayState.in_state_dir(state_dir, busy_timeout_ms=100) as other,
    ):
        with writer.transaction():
            _pair(writer)
            started = time.monotonic()
            with pytest.raises(StateBusyError) as caught:
                other.meta.set("k", "v")
            assert time.monotonic() - started < 2.0
        assert caught.value.timeout_ms == 100
        assert "locked" in str(caught.value)
        other.meta.set("k", "v")
        assert writer.meta.get("k") == "v"


def test_raw_tokens_never_reach_the_database_files(state_dir: Path) -> None:
    """Setup-code and device tokens exist only as SHA-256 in the .sqlite3 and -wal files."""
    state = GatewayState.in_state_dir(state_dir)
    _pair(state)
    device_token = state.tokens.issue("dev-1", "operator", ["operator.read"], 1_000)
    tokens = [state.bootstrap.mint(1_000)[0], state.bootstrap.mint(1_000)[0], device_token]
    db_path = state_dir / DB_FILENAME
    wal_path = db_path.with_name(DB_FILENAME + "-wal")

    def file_bytes() -> bytes:
        return db_path.read_bytes() + (wal_path.read_bytes() if wal_path.exists() else b"")

    live = file_bytes()
    assert wal_path.exists()
    state.close()
    closed = file_bytes()
    for data in (live, closed):
        for token in tokens:
            raw = base64.urlsafe_b64decode(token + "=")
            assert token.encode() not in data
            assert raw not in data
        assert hash_token(tokens[0]) in data  # the check looks at the right bytes
        assert hash_token(device_token) in data
