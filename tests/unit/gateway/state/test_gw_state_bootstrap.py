"""BootstrapTokens: setup codes that bind to the first device, expire and are consumed once."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.state import (
    BOOTSTRAP_TOKEN_TTL_MS,
    DB_FILENAME,
    SETUP_COMPLETION_RETENTION_MS,
    BootstrapRecord,
    GatewayState,
)

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
OTHER_KEY = "AAAAk6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
PHONE = "phone-device-id"
T0 = 1_796_023_931_000


@pytest.fixture
def state(tmp_path: Path) -> Iterator[GatewayState]:
    with GatewayState(tmp_path / "state" / DB_FILENAME) as opened:
        yield opened


def test_mint_gives_a_token_and_a_non_secret_setup_id(state: GatewayState) -> None:
    """mint() returns a base64url token and a record with a uuid4 setup id and 10 min expiry."""
    token, record = state.bootstrap.mint(T0, access="limited")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", token)
    assert uuid.UUID(record.setup_id).version == 4
    assert token not in record.setup_id
    assert record == BootstrapRecord(
        setup_id=record.setup_id,
        access="limited",
        issued_at_ms=T0,
        expires_at_ms=T0 + BOOTSTRAP_TOKEN_TTL_MS,
    )
    assert BOOTSTRAP_TOKEN_TTL_MS == 600_000
    assert state.bootstrap.mint(T0)[1].access == "full"


def test_mint_with_custom_ttl(state: GatewayState) -> None:
    """ttl_ms sets the expiry; a non-positive ttl is refused."""
    _, record = state.bootstrap.mint(T0, ttl_ms=1_000)
    assert record.expires_at_ms == T0 + 1_000
    with pytest.raises(ValueError, match="ttl_ms"):
        state.bootstrap.mint(T0, ttl_ms=0)


def test_redeem_binds_to_the_first_device(state: GatewayState) -> None:
    """The first redeemer binds the token; it may come back; anyone else is refused."""
    token, minted = state.bootstrap.mint(T0)
    first = state.bootstrap.redeem(token, PHONE, KEY, T0 + 10)
    assert first is not None
    assert (first.device_id, first.public_key, first.bound_at_ms) == (PHONE, KEY, T0 + 10)
    assert first.setup_id == minted.setup_id
    again = state.bootstrap.redeem(f"  {token}\n", PHONE, KEY, T0 + 20)
    assert again is not None
    assert (again.bound_at_ms, again.last_used_at_ms) == (T0 + 10, T0 + 20)
    assert state.bootstrap.redeem(token, "someone-else", KEY, T0 + 30) is None
    assert state.bootstrap.redeem(token, PHONE, OTHER_KEY, T0 + 30) is None
    assert state.bootstrap.redeem(token, PHONE, KEY, T0 + 40) is not None


def test_redeem_unknown_token(state: GatewayState) -> None:
    """An unknown or empty token is refused."""
    state.bootstrap.mint(T0)
    assert state.bootstrap.redeem("not-a-token", PHONE, KEY, T0) is None
    assert state.bootstrap.redeem("", PHONE, KEY, T0) is None


def test_expiry_edges(state: GatewayState) -> None:
    """A token works up to expires_at_ms inclusive, not one millisecond after."""
    token, record = state.bootstrap.mint(T0)
    assert state.bootstrap.redeem(token, PHONE, KEY, record.expires_at_ms) is not None
    assert state.bootstrap.redeem(token, PHONE, KEY, record.expires_at_ms + 1) is None
    assert state.bootstrap.status(record.setup_id, record.expires_at_ms + 1) is None


def test_expired_tokens_are_pruned(state: GatewayState) -> None:
    """Minting later deletes expired unconsumed tokens."""
    _, old = state.bootstrap.mint(T0)
    state.bootstrap.mint(T0 + BOOTSTRAP_TOKEN_TTL_MS + 1)
    assert state.bootstrap.status(old.setup_id, T0) is None


def test_consume_completes_the_setup(state: GatewayState) -> None:
    """consume() makes the token unusable, even for its own device, and completes setup."""
    token, record = state.bootstrap.mint(T0, access="full")
    state.bootstrap.redeem(token, PHONE, KEY, T0 + 1)
    done = state.bootstrap.consume(record.setup_id, T0 + 2, device_name="Pixel")
    assert done is not None
    assert done.consumed
    assert done.consumed_at_ms == T0 + 2
    assert state.bootstrap.redeem(token, PHONE, KEY, T0 + 3) is None
    assert state.bootstrap.consume(record.setup_id, T0 + 3) is None


def test_consume_needs_a_bound_live_token(state: GatewayState) -> None:
    """An unbound, unknown or expired token cannot be consumed."""
    token, record = state.bootstrap.mint(T0)
    assert state.bootstrap.consume(record.setup_id, T0) is None
    assert state.bootstrap.consume("nope", T0) is None
    state.bootstrap.redeem(token, PHONE, KEY, T0)
    assert state.bootstrap.consume(record.setup_id, record.expires_at_ms + 1) is None


def test_consume_without_now_uses_the_wall_clock(state: GatewayState) -> None:
    """consume(setup_id) alone stamps a current wall-clock completion time."""
    token, record = state.bootstrap.mint(T0, ttl_ms=10**13)
    state.bootstrap.redeem(token, PHONE, KEY, T0)
    done = state.bootstrap.consume(record.setup_id)
    assert done is not None
    assert done.consumed_at_ms is not None
    assert done.consumed_at_ms > 1_700_000_000_000


def test_status_wire_follows_the_setup(state: GatewayState) -> None:
    """setupStatus: {} while pending, deliveryUncertain once consumed, then completion."""
    token, record = state.bootstrap.mint(T0, access="limited")
    pending = state.bootstrap.status(record.setup_id, T0)
    assert pending is not None
    assert pending.to_wire() == {}
    state.bootstrap.redeem(token, PHONE, KEY, T0 + 1)
    bound = state.bootstrap.status(record.setup_id, T0 + 1)
    assert bound is not None
    assert bound.to_wire() == {}
    state.bootstrap.consume(record.setup_id, T0 + 2, device_name="Pixel")
    uncertain = state.bootstrap.status(record.setup_id, T0 + 2)
    assert uncertain is not None
    payload = {
        "setupId": record.setup_id,
        "deviceId": PHONE,
        "deviceName": "Pixel",
        "access": "limited",
        "ts": T0 + 2,
    }
    assert uncertain.to_wire() == {"deliveryUncertain": payload}
    assert state.bootstrap.confirm_delivery(record.setup_id)
    confirmed = state.bootstrap.status(record.setup_id, T0 + 3)
    assert confirmed is not None
    assert confirmed.to_wire() == {"completion": payload}
    assert state.bootstrap.status("unknown", T0) is None


def test_confirm_delivery_needs_a_completed_setup(state: GatewayState) -> None:
    """confirm_delivery() of a pending or unknown setup does nothing."""
    _, record = state.bootstrap.mint(T0)
    assert not state.bootstrap.confirm_delivery(record.setup_id)
    assert not state.bootstrap.confirm_delivery("nope")


def test_completion_is_kept_for_twice_the_ttl(state: GatewayState) -> None:
    """A completed setup answers setupStatus for 20 minutes after completion, then goes."""
    token, record = state.bootstrap.mint(T0)
    state.bootstrap.redeem(token, PHONE, KEY, T0)
    state.bootstrap.consume(record.setup_id, T0)
    assert SETUP_COMPLETION_RETENTION_MS == 1_200_000
    assert state.bootstrap.status(record.setup_id, T0 + SETUP_COMPLETION_RETENTION_MS) is not None
    assert state.bootstrap.status(record.setup_id, T0 + SETUP_COMPLETION_RETENTION_MS + 1) is None
    state.bootstrap.mint(T0 + SETUP_COMPLETION_RETENTION_MS + 1)
    assert state.bootstrap.status(record.setup_id, T0) is None


def test_revoke_for_device_spares_completed_setups(state: GatewayState) -> None:
    """revoke_for_device() deletes live tokens bound to the device and key only."""
    live, live_record = state.bootstrap.mint(T0)
    done, done_record = state.bootstrap.mint(T0)
    other, _ = state.bootstrap.mint(T0)
    state.bootstrap.redeem(live, PHONE, KEY, T0)
    state.bootstrap.redeem(done, PHONE, KEY, T0)
    state.bootstrap.consume(done_record.setup_id, T0)
    state.bootstrap.redeem(other, "another", KEY, T0)
    assert state.bootstrap.revoke_for_device(PHONE, KEY) == 1
    assert state.bootstrap.status(live_record.setup_id, T0) is None
    assert state.bootstrap.status(done_record.setup_id, T0) is not None
    assert state.bootstrap.redeem(other, "another", KEY, T0) is not None
