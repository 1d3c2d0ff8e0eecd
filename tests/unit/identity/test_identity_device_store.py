"""The device identity, its file, and the fail-closed rules around a broken file."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from openclaw_desktop.errors import IdentityError
from openclaw_desktop.identity import (
    DeviceIdentity,
    IdentityStore,
    b64url_decode,
    b64url_encode,
    device_id_for,
    verify_signature,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_identity_properties_are_consistent() -> None:
    """public_key, public_key_raw and device_id all describe the same key."""
    identity = DeviceIdentity.generate(now_ms=123)
    assert len(identity.public_key_raw) == 32
    assert b64url_decode(identity.public_key) == identity.public_key_raw
    assert "=" not in identity.public_key
    assert identity.device_id == device_id_for(identity.public_key_raw)
    assert identity.created_at_ms == 123


def test_sign_produces_verifiable_unpadded_signature() -> None:
    """sign() returns unpadded base64url that verifies with the public key."""
    identity = DeviceIdentity.generate()
    signature = identity.sign("v3|x|é")
    assert "=" not in signature
    assert len(b64url_decode(signature)) == 64
    assert verify_signature(identity.public_key_raw, "v3|x|é", signature)


def test_repr_has_no_key_material() -> None:
    """repr shows the device id but neither key."""
    identity = DeviceIdentity.generate()
    text = repr(identity)
    assert identity.device_id in text
    assert b64url_encode(identity.private_key_seed()) not in text
    assert identity.public_key not in text
    assert "private" not in text.lower()


def test_from_seed_round_trip() -> None:
    """An identity rebuilt from its seed is equal to the original."""
    identity = DeviceIdentity.generate()
    again = DeviceIdentity.from_seed(identity.private_key_seed(), identity.created_at_ms)
    assert again == identity
    assert hash(again) == hash(identity)
    with pytest.raises(ValueError, match="32 bytes"):
        DeviceIdentity.from_seed(b"short", 0)


def test_load_or_create_then_load(tmp_path: Path) -> None:
    """A created identity is written once and loads back unchanged."""
    store = IdentityStore(tmp_path / "identity" / "device.json")
    assert not store.exists()
    created = store.load_or_create()
    assert store.exists()
    assert store.load() == created
    assert store.load_or_create() == created
    document = json.loads(store.path.read_text())
    assert document["version"] == 1
    assert document["deviceId"] == created.device_id
    assert document["publicKey"] == created.public_key
    assert len(b64url_decode(document["privateKey"])) == 32
    assert document["createdAtMs"] == created.created_at_ms


@posix_only
def test_file_and_dir_modes(tmp_path: Path) -> None:
    """The identity file is 0600 and the folder created for it 0700."""
    store = IdentityStore(tmp_path / "identity" / "device.json")
    store.load_or_create()
    assert _mode(store.path) == 0o600
    assert _mode(store.path.parent) == 0o700
    assert [p.name for p in store.path.parent.iterdir()] == ["device.json"]


@posix_only
def test_too_open_mode_is_tightened(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A group/world readable file loads, with a warning, and becomes 0600."""
    store = IdentityStore(tmp_path / "device.json")
    created = store.load_or_create()
    os.chmod(store.path, 0o644)
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        assert store.load() == created
    assert _mode(store.path) == 0o600
    assert "0644" in caplog.text


def _broken(case: str, good: dict[str, object]) -> bytes:
    """The bytes of one kind of unusable identity file, derived from a good one."""
    other = DeviceIdentity.generate()
    raw = {
        "empty": b"",
        "not-json": b"{not json",
        "not-utf8": b"\xff\xfe",
        "not-object": b"[1, 2]",
    }
    if case in raw:
        return raw[case]
    changed: dict[str, object] = {
        "version-2": {**good, "version": 2},
        "version-string": {**good, "version": "1"},
        "device-id-mismatch": {**good, "deviceId": other.device_id},
        "public-key-mismatch": {**good, "publicKey": other.public_key},
        "private-key-garbage": {**good, "privateKey": "not-base64!"},
        "private-key-short": {**good, "privateKey": b64url_encode(b"\x01" * 31)},
        "no-created-at": {k: v for k, v in good.items() if k != "createdAtMs"},
        "no-private-key": {k: v for k, v in good.items() if k != "privateKey"},
    }
    return json.dumps(changed[case]).encode()


@pytest.mark.parametrize(
    "case",
    [
        "empty",
        "not-json",
        "not-utf8",
        "not-object",
        "version-2",
        "version-string",
        "device-id-mismatch",
        "public-key-mismatch",
        "private-key-garbage",
        "private-key-short",
        "no-created-at",
        "no-private-key",
    ],
)
def test_broken_file_raises_and_is_left_untouched(tmp_path: Path, case: str) -> None:
    """Any unusable file raises IdentityError from load and load_or_create, unchanged."""
    store = IdentityStore(tmp_path / "device.json")
    store.load_or_create()
    good = json.loads(store.path.read_text())
    broken = _broken(case, good)
    store.path.write_bytes(broken)
    os.chmod(store.path, 0o600)
    for call in (store.load, store.load_or_create):
        with pytest.raises(IdentityError) as info:
            call()
        assert info.value.path == str(store.path)
        assert good["privateKey"] not in str(info.value)
        assert "identity reset" in str(info.value)
    assert store.path.read_bytes() == broken
    assert sorted(p.name for p in tmp_path.iterdir()) == ["device.json"]


def test_load_missing_file_raises(tmp_path: Path) -> None:
    """load() does not create anything."""
    store = IdentityStore(tmp_path / "device.json")
    with pytest.raises(IdentityError, match="does not exist"):
        store.load()
    assert not store.path.exists()


@posix_only
def test_dangling_symlink_is_not_replaced(tmp_path: Path) -> None:
    """A dangling symlink counts as an existing (unusable) identity."""
    path = tmp_path / "device.json"
    path.symlink_to(tmp_path / "elsewhere.json")
    store = IdentityStore(path)
    assert store.exists()
    with pytest.raises(IdentityError):
        store.load_or_create()
    assert path.is_symlink()


@posix_only
def test_unreadable_file_raises(tmp_path: Path) -> None:
    """A directory in place of the file is reported, not replaced."""
    (tmp_path / "device.json").mkdir()
    store = IdentityStore(tmp_path / "device.json")
    with pytest.raises(IdentityError, match="cannot read"):
        store.load_or_create()


def test_reset_moves_good_file_to_old(tmp_path: Path) -> None:
    """reset() keeps the previous identity as device.json.old-<ms> and makes a new one."""
    store = IdentityStore(tmp_path / "device.json")
    first = store.load_or_create()
    previous = store.path.read_bytes()
    second = store.reset()
    assert second.device_id != first.device_id
    assert store.load() == second
    backups = [p for p in tmp_path.iterdir() if p.name.startswith("device.json.old-")]
    assert len(backups) == 1
    assert backups[0].read_bytes() == previous
    assert backups[0].name.removeprefix("device.json.old-").isdigit()


def test_reset_moves_broken_file_to_broken(tmp_path: Path) -> None:
    """reset() of a broken identity keeps it as device.json.broken-<ms>."""
    store = IdentityStore(tmp_path / "device.json")
    store.path.write_text("garbage")
    fresh = store.reset()
    assert store.load() == fresh
    backups = [p for p in tmp_path.iterdir() if p.name.startswith("device.json.broken-")]
    assert len(backups) == 1
    assert backups[0].read_text() == "garbage"


def test_reset_twice_keeps_both_backups(tmp_path: Path) -> None:
    """Two resets in the same millisecond do not overwrite a backup."""
    store = IdentityStore(tmp_path / "device.json")
    store.load_or_create()
    store.reset()
    store.reset()
    assert len([p for p in tmp_path.iterdir() if ".old-" in p.name]) == 2


def test_reset_without_existing_file_creates(tmp_path: Path) -> None:
    """reset() on a fresh install simply creates the identity."""
    store = IdentityStore(tmp_path / "sub" / "device.json")
    identity = store.reset()
    assert store.load() == identity


def test_store_repr_and_errors_do_not_leak(tmp_path: Path) -> None:
    """The store's repr is just its path."""
    store = IdentityStore(tmp_path / "device.json")
    identity = store.load_or_create()
    assert b64url_encode(identity.private_key_seed()) not in repr(store)
