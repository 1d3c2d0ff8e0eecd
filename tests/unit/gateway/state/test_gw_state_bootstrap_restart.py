"""BootstrapTokens across a restart: a setup code's voice-node profile, its redeemed legs and
its pending request are stored (schema 4), and older databases migrate to it."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from gateway.state import DB_FILENAME, GatewayState
from gateway.state import _db as db_module
from gateway.state._codec import hash_token
from gateway.state._schema import MIGRATIONS, SCHEMA_VERSION

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
PHONE = "phone-device-id"
T0 = 1_796_023_931_000


def _reopen(path: Path) -> GatewayState:
    """The same database opened again, as by a restarted gateway."""
    return GatewayState(path)


def test_schema_4_adds_the_setup_code_columns() -> None:
    """Migration 4 is the one that stores what used to be kept in memory, and it is applied
    (the current schema is at least 4)."""
    (four,) = [m for m in MIGRATIONS if m.version == 4]
    assert "voice-node" in four.description
    assert SCHEMA_VERSION >= 4


def test_a_voice_node_code_is_still_one_after_a_restart(tmp_path: Path) -> None:
    """profile_of() reads the marker from the database, not from the object that minted."""
    path = tmp_path / DB_FILENAME
    with GatewayState(path) as state:
        _token, voice = state.bootstrap.mint(T0, access="voice-node")
        _token, node = state.bootstrap.mint(T0, access="node")
        assert voice.access == node.access == "node"  # the stored access level
    with _reopen(path) as state:
        assert state.bootstrap.profile_of(voice) == "voice-node"
        assert state.bootstrap.profile_of(node) == "node"
    with _reopen(path) as state:  # a used-up code keeps the marker (setupStatus reports it)
        token, record = state.bootstrap.mint(T0, access="voice-node")
        assert state.bootstrap.redeem(token, PHONE, KEY, T0 + 1) is not None
        assert state.bootstrap.consume(record.setup_id, T0 + 2) is not None
    with _reopen(path) as state:
        status = state.bootstrap.status(record.setup_id, T0 + 3)
        assert status is not None and state.bootstrap.profile_of(status) == "voice-node"


def test_a_pending_redemption_survives_a_restart(tmp_path: Path) -> None:
    """While the bound device awaits approval it must ask for the same again, also after a
    restart; the leg recorded by its approved connect clears the pending request."""
    path = tmp_path / DB_FILENAME
    with GatewayState(path) as state:
        token, _record = state.bootstrap.mint(T0)
        asked = state.bootstrap.redeem(
            token, PHONE, KEY, T0 + 1, request=lambda _r: ("operator", ["operator.read"])
        )
        assert asked is not None
    with _reopen(path) as state:
        other = state.bootstrap.redeem(token, PHONE, KEY, T0 + 2, request=lambda _r: ("node", []))
        assert other is None
        same = state.bootstrap.redeem(
            token, PHONE, KEY, T0 + 3, request=lambda _r: ("operator", [" operator.read "])
        )
        assert same is not None
        state.bootstrap.redeem_leg(same, "operator", ["operator.read"])
    with _reopen(path) as state:
        node = state.bootstrap.redeem(token, PHONE, KEY, T0 + 4, request=lambda _r: ("node", []))
        assert node is not None


def test_redeemed_legs_add_up_across_restarts(tmp_path: Path) -> None:
    """Each leg is stored: the union after a restart includes the legs before it."""
    path = tmp_path / DB_FILENAME
    with GatewayState(path) as state:
        token, record = state.bootstrap.mint(T0)
        assert state.bootstrap.redeem(token, PHONE, KEY, T0 + 1) is not None
        roles, scopes = state.bootstrap.redeem_leg(
            record, "operator", ["operator.write", "operator.read"]
        )
        assert (roles, scopes) == ({"operator"}, {"operator.read", "operator.write"})
    with _reopen(path) as state:
        roles, scopes = state.bootstrap.redeem_leg(record, "node", [])
        assert (roles, scopes) == ({"operator", "node"}, {"operator.read", "operator.write"})
        state.bootstrap.consume(record.setup_id, T0 + 5)
        with closing(sqlite3.connect(path)) as raw:
            row = raw.execute(
                "SELECT pending_role, redeemed_roles, redeemed_scopes FROM bootstrap_tokens"
            ).fetchone()
        assert row == (None, "[]", "[]")  # used up: only the completion is kept


def test_redeem_leg_of_a_code_that_is_gone(tmp_path: Path) -> None:
    """A leg for a code pruned meanwhile records nothing and says so (empty sets)."""
    with GatewayState(tmp_path / DB_FILENAME) as state:
        token, record = state.bootstrap.mint(T0, ttl_ms=10)
        assert state.bootstrap.redeem(token, PHONE, KEY, T0 + 1) is not None
        state.bootstrap.mint(T0 + 10_000)  # prunes the expired code
        assert state.bootstrap.redeem_leg(record, "node", []) == (frozenset(), frozenset())


def test_a_version_3_database_migrates_with_its_setup_codes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A setup code stored by schema 3 is still redeemable after the upgrade: no marker (a
    code minted as voice-node by an older build stays a node code), no legs, nothing
    pending."""
    path = tmp_path / DB_FILENAME
    monkeypatch.setattr(db_module, "MIGRATIONS", MIGRATIONS[:3])
    monkeypatch.setattr(db_module, "SCHEMA_VERSION", 3)
    with GatewayState(path) as state:
        assert state.schema_version == 3
    with closing(sqlite3.connect(path)) as raw, raw:
        raw.execute(
            "INSERT INTO bootstrap_tokens (setup_id, token_sha256, access, issued_at_ms, "
            "expires_at_ms) VALUES ('old', ?, 'node', ?, ?)",
            (hash_token("old-token"), T0, T0 + 600_000),
        )
    monkeypatch.undo()
    with GatewayState(path) as state:
        assert state.schema_version == SCHEMA_VERSION
        record = state.bootstrap.redeem(
            "old-token", PHONE, KEY, T0 + 1, request=lambda _r: ("node", [])
        )
        assert record is not None and state.bootstrap.profile_of(record) == "node"
        assert state.bootstrap.redeem_leg(record, "node", []) == ({"node"}, set())
