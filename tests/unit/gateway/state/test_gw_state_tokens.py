"""DeviceTokens: issue, verify, rotate, revoke, list; verification by SHA-256, and only the
hash at rest (schema 5 drops the plaintext that schemas 3 and 4 kept, and erases it from the
file); rows from before schema 3 (hash only) keep working."""

from __future__ import annotations

import base64
import hashlib
import re
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from gateway.state import (
    DB_FILENAME,
    GatewayState,
    ScopeNotApprovedError,
    TokenRecord,
    UnknownDeviceError,
)
from gateway.state import _db as db_module
from gateway.state._codec import hash_token
from gateway.state._schema import MIGRATIONS

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
DEV = "dev-1"
OP_SCOPES = ["operator.read", "operator.write", "operator.admin"]


@pytest.fixture
def state(tmp_path: Path) -> Iterator[GatewayState]:
    with GatewayState(tmp_path / "state" / DB_FILENAME) as opened:
        opened.devices.approve(
            DEV, KEY, role="operator", scopes=OP_SCOPES, approved_via="owner", now_ms=1
        )
        opened.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="owner", now_ms=1)
        yield opened


def test_issue_returns_an_unpadded_base64url_token(state: GatewayState) -> None:
    """A token is 32 random bytes as 43 characters of base64url without padding."""
    token = state.tokens.issue(DEV, "operator", ["operator.read"], 1_000)
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    assert len(base64.urlsafe_b64decode(token + "=")) == 32
    assert state.tokens.issue(DEV, "operator", ["operator.read"], 1_000) != token


def test_verify_accepts_only_the_right_token_device_and_role(state: GatewayState) -> None:
    """verify() matches device, role and token; anything else is None."""
    token = state.tokens.issue(DEV, "operator", ["operator.read"], 1_000)
    record = state.tokens.verify(DEV, "operator", token)
    assert record == TokenRecord(DEV, "operator", ("operator.read",), 1_000, None, None, None)
    assert (
        state.tokens.verify(DEV, "operator", token[:-1] + ("A" if token[-1] != "A" else "B"))
        is None
    )
    assert state.tokens.verify(DEV, "node", token) is None
    assert state.tokens.verify("other", "operator", token) is None
    assert state.tokens.verify(DEV, "operator", "") is None


def test_verify_with_now_records_last_use(state: GatewayState) -> None:
    """verify(now_ms=...) stores lastUsedAtMs; without it the record is untouched."""
    token = state.tokens.issue(DEV, "node", [], 1_000)
    state.tokens.verify(DEV, "node", token)
    assert state.tokens.list(DEV)[0].last_used_at_ms is None
    record = state.tokens.verify(DEV, "node", token, now_ms=5_000)
    assert record is not None
    assert record.last_used_at_ms == 5_000
    assert state.tokens.verify(DEV, "node", "wrong", now_ms=6_000) is None
    assert state.tokens.list(DEV)[0].last_used_at_ms == 5_000


def test_issuing_again_replaces_the_token(state: GatewayState) -> None:
    """One active token per device and role: the earlier token stops working."""
    old = state.tokens.issue(DEV, "operator", ["operator.read"], 1_000)
    new = state.tokens.issue(DEV, "operator", ["operator.write"], 2_000)
    assert state.tokens.verify(DEV, "operator", old) is None
    record = state.tokens.verify(DEV, "operator", new)
    assert record is not None
    assert (record.scopes, record.created_at_ms) == (("operator.write",), 2_000)
    assert len(state.tokens.list(DEV)) == 1


def test_issue_requires_an_approved_role(state: GatewayState) -> None:
    """Tokens exist only for paired devices and their approved roles."""
    with pytest.raises(UnknownDeviceError) as caught:
        state.tokens.issue("nope", "operator", [], 1)
    assert (caught.value.device_id, caught.value.role) == ("nope", "operator")
    assert isinstance(caught.value, LookupError)
    with pytest.raises(UnknownDeviceError, match="worker"):
        state.tokens.issue(DEV, "worker", [], 1)


def test_issue_refuses_unapproved_or_foreign_scopes(state: GatewayState) -> None:
    """Scopes must be approved for the device and belong to the token's role."""
    with pytest.raises(ScopeNotApprovedError) as caught:
        state.tokens.issue(DEV, "operator", ["operator.read", "operator.pairing"], 1)
    assert caught.value.scope == "operator.pairing"
    assert isinstance(caught.value, ValueError)
    with pytest.raises(ScopeNotApprovedError, match=r"operator\.read"):
        state.tokens.issue(DEV, "node", ["operator.read"], 1)
    assert state.tokens.list(DEV) == []


def test_rotate_replaces_and_keeps_history(state: GatewayState) -> None:
    """rotate() invalidates the old token, keeps createdAtMs and sets rotatedAtMs."""
    old = state.tokens.issue(DEV, "operator", ["operator.read", "operator.write"], 1_000)
    new = state.tokens.rotate(DEV, "operator", None, 2_000)
    assert new != old
    assert state.tokens.verify(DEV, "operator", old) is None
    record = state.tokens.verify(DEV, "operator", new)
    assert record is not None
    assert record.scopes == ("operator.read", "operator.write")
    assert (record.created_at_ms, record.rotated_at_ms) == (1_000, 2_000)


def test_rotate_with_scopes_narrows(state: GatewayState) -> None:
    """rotate() with scopes gives the new token exactly those scopes."""
    state.tokens.issue(DEV, "operator", ["operator.read", "operator.write"], 1_000)
    token = state.tokens.rotate(DEV, "operator", ["operator.read"], 2_000)
    assert state.tokens.scopes(DEV, "operator") == ("operator.read",)
    assert state.tokens.verify(DEV, "operator", token) is not None
    with pytest.raises(ScopeNotApprovedError):
        state.tokens.rotate(DEV, "operator", ["operator.talk"], 3_000)


def test_rotate_without_a_token_uses_the_role_scopes(state: GatewayState) -> None:
    """Rotating a role with no token yet issues one with the role's approved scopes."""
    token = state.tokens.rotate(DEV, "operator", None, 2_000)
    record = state.tokens.verify(DEV, "operator", token)
    assert record is not None
    assert record.scopes == tuple(OP_SCOPES)
    assert (record.created_at_ms, record.rotated_at_ms) == (2_000, 2_000)
    with pytest.raises(UnknownDeviceError):
        state.tokens.rotate("nope", "operator", None, 2_000)


def test_revoke_disables_and_keeps_the_record(state: GatewayState) -> None:
    """A revoked token fails verify, has no scopes, and stays listed with revokedAtMs."""
    token = state.tokens.issue(DEV, "node", [], 1_000)
    assert state.tokens.revoke(DEV, "node", 3_000)
    assert state.tokens.verify(DEV, "node", token) is None
    assert state.tokens.scopes(DEV, "node") is None
    record = state.tokens.get(DEV, "node")
    assert record is not None
    assert not record.active
    assert record.revoked_at_ms == 3_000
    assert state.tokens.revoke(DEV, "node", 4_000)
    assert state.tokens.list(DEV)[0].revoked_at_ms == 3_000
    assert not state.tokens.revoke(DEV, "operator", 4_000)
    assert not state.tokens.revoke("nope", "node")


def test_revoke_without_now_uses_the_wall_clock(state: GatewayState) -> None:
    """revoke() without now_ms stamps a current wall-clock time."""
    state.tokens.issue(DEV, "node", [], 1_000)
    assert state.tokens.revoke(DEV, "node")
    record = state.tokens.get(DEV, "node")
    assert record is not None
    assert record.revoked_at_ms is not None
    assert record.revoked_at_ms > 1_700_000_000_000


def test_rotate_revives_a_revoked_role(state: GatewayState) -> None:
    """Rotating a revoked role's token gives a working token again."""
    state.tokens.issue(DEV, "node", [], 1_000)
    state.tokens.revoke(DEV, "node", 2_000)
    token = state.tokens.rotate(DEV, "node", None, 3_000)
    record = state.tokens.verify(DEV, "node", token)
    assert record is not None
    assert record.active


def test_list_and_wire_never_show_the_token(state: GatewayState) -> None:
    """Token records have no token field; the wire summary has the real keys."""
    token = state.tokens.issue(DEV, "operator", ["operator.read"], 1_000)
    state.tokens.issue(DEV, "node", [], 1_100)
    records = state.tokens.list(DEV)
    assert [record.role for record in records] == ["node", "operator"]
    assert not hasattr(records[0], "token")
    for record in records:
        assert token not in repr(record)
    assert records[1].to_wire() == {
        "role": "operator",
        "scopes": ["operator.read"],
        "createdAtMs": 1_000,
    }
    state.tokens.rotate(DEV, "operator", None, 2_000)
    state.tokens.revoke(DEV, "operator", 3_000)
    assert state.tokens.list(DEV)[1].to_wire() == {
        "role": "operator",
        "scopes": ["operator.read"],
        "createdAtMs": 1_000,
        "rotatedAtMs": 2_000,
        "revokedAtMs": 3_000,
    }


def test_the_database_holds_the_sha256(state: GatewayState) -> None:
    """The stored column is SHA-256 of the token's UTF-8 bytes."""
    token = state.tokens.issue(DEV, "node", [], 1_000)
    row = state._db.row(
        "SELECT token_sha256 FROM device_tokens WHERE device_id = ? AND role = ?", (DEV, "node")
    )
    assert row is not None
    assert bytes(row[0]) == hashlib.sha256(token.encode()).digest()


def test_tokens_follow_the_device(state: GatewayState) -> None:
    """Removing the device removes its tokens; removing a role removes that role's token."""
    operator = state.tokens.issue(DEV, "operator", [], 1_000)
    node = state.tokens.issue(DEV, "node", [], 1_000)
    state.devices.remove_role(DEV, "node")
    assert state.tokens.verify(DEV, "node", node) is None
    assert state.tokens.verify(DEV, "operator", operator) is not None
    state.devices.remove(DEV)
    assert state.tokens.verify(DEV, "operator", operator) is None
    assert state.tokens.list(DEV) == []


def _files_hold(state_dir: Path, secret: str) -> bool:
    """Whether any file of the state dir (the database, its WAL) holds ``secret``."""
    needle = secret.encode()
    return any(needle in path.read_bytes() for path in state_dir.iterdir() if path.is_file())


def test_only_the_hash_is_kept_at_rest(tmp_path: Path) -> None:
    """Issued, rotated and revoked tokens: the table has no token column, and no file of the
    state dir holds any of the tokens, while open or after closing."""
    state_dir = tmp_path / "state"
    with GatewayState.in_state_dir(state_dir) as state:
        state.devices.approve(
            DEV, KEY, role="operator", scopes=OP_SCOPES, approved_via="owner", now_ms=1
        )
        columns = [row[1] for row in state._db.rows("PRAGMA table_info(device_tokens)")]
        assert "token" not in columns and "token_sha256" in columns
        tokens = [state.tokens.issue(DEV, "operator", ["operator.read"], 1_000)]
        tokens.append(state.tokens.rotate(DEV, "operator", None, 2_000))
        assert state.tokens.verify(DEV, "operator", tokens[-1]) is not None
        state.tokens.revoke(DEV, "operator", 3_000)
        assert not any(_files_hold(state_dir, token) for token in tokens)
    assert not any(_files_hold(state_dir, token) for token in tokens)


def test_a_schema_4_database_loses_its_plaintext_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database from schema 4 kept the tokens themselves: after the upgrade they still
    verify by their hash, the column is gone, and the plaintext is nowhere in the files."""
    state_dir = tmp_path / "state"
    monkeypatch.setattr(db_module, "MIGRATIONS", MIGRATIONS[:4])
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", 4)
    plain = "plaintext-token-kept-by-schema-4-databases"
    with GatewayState.in_state_dir(state_dir) as old:
        assert old.schema_version == 4
        old.devices.approve(
            DEV, KEY, role="operator", scopes=OP_SCOPES, approved_via="owner", now_ms=1
        )
        old.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="owner", now_ms=1)
    with closing(sqlite3.connect(state_dir / DB_FILENAME, isolation_level=None)) as raw:
        for role, scopes in (("operator", '["operator.read"]'), ("node", "[]")):
            raw.execute(
                "INSERT INTO device_tokens (device_id, role, token_sha256, token, scopes, "
                "created_at_ms, rotated_at_ms) VALUES (?, ?, ?, ?, ?, 500, 600)",
                (DEV, role, hash_token(plain + role), plain + role, scopes),
            )
    assert _files_hold(state_dir, plain)
    monkeypatch.undo()
    with GatewayState.in_state_dir(state_dir) as state:
        assert state.schema_version == MIGRATIONS[-1].version >= 5
        record = state.tokens.verify(DEV, "operator", plain + "operator")
        assert record == TokenRecord(DEV, "operator", ("operator.read",), 500, 600, None, None)
        assert state.tokens.verify(DEV, "node", plain + "node") is not None
        columns = [row[1] for row in state._db.rows("PRAGMA table_info(device_tokens)")]
        assert "token" not in columns
        assert state._db.row("PRAGMA foreign_key_check") is None
        state.devices.remove_role(DEV, "node")  # the rebuilt table still follows its device
        assert state.tokens.get(DEV, "node") is None
    assert not _files_hold(state_dir, plain)


def test_a_schema_2_database_keeps_its_hash_only_tokens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a database from before schema 3: its hash-only tokens still verify, and the
    next issue() replaces them."""
    state_dir = tmp_path / "state"
    monkeypatch.setattr(db_module, "MIGRATIONS", MIGRATIONS[:2])
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", 2)
    legacy = "legacy-token-from-schema-2"
    with GatewayState.in_state_dir(state_dir) as old:
        assert old.schema_version == 2
        old.devices.approve(
            DEV, KEY, role="operator", scopes=OP_SCOPES, approved_via="owner", now_ms=1
        )
    with closing(sqlite3.connect(state_dir / DB_FILENAME, isolation_level=None)) as raw:
        raw.execute(
            "INSERT INTO device_tokens (device_id, role, token_sha256, scopes, created_at_ms) "
            "VALUES (?, 'operator', ?, '[\"operator.read\"]', 500)",
            (DEV, hash_token(legacy)),
        )
    monkeypatch.undo()
    with GatewayState.in_state_dir(state_dir) as state:
        assert state.schema_version == MIGRATIONS[-1].version >= 3
        record = state.tokens.verify(DEV, "operator", legacy)
        assert record is not None
        assert record.scopes == ("operator.read",)
        fresh = state.tokens.issue(DEV, "operator", ["operator.read"], 2_000)
        assert state.tokens.verify(DEV, "operator", legacy) is None
        assert state.tokens.verify(DEV, "operator", fresh) is not None
