"""Credentials over a real keyring backend (keyrings.alt plaintext file) and the fallback."""

from __future__ import annotations

import configparser
import logging
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyrings.alt.file import PlaintextKeyring

from openclaw_desktop.identity import (
    CredentialStore,
    FileSecretStore,
    StoredDeviceToken,
    open_secret_store,
)
from openclaw_desktop.identity import secrets as secrets_module
from openclaw_desktop.identity.keyring_store import KeyringSecretStore, keyring_available

GW = "gateway.local:18789"
DEV = "c" * 64


class _TrustedPlaintextKeyring(PlaintextKeyring):
    """The plaintext file backend, promoted so that open_secret_store picks it."""

    priority = 5


@pytest.fixture
def plaintext_keyring(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Installs a PlaintextKeyring writing below tmp_path; restores the old backend."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring" / "keyring_pass.cfg")
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        yield Path(backend.file_path)
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def restore_keyring() -> Iterator[None]:
    """Restores the active keyring backend after the test."""
    previous = keyring.get_keyring()
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def _entries(path: Path) -> dict[str, list[str]]:
    parser = configparser.RawConfigParser()
    parser.read(path, encoding="utf-8")
    return {section: list(parser[section]) for section in parser.sections()}


def test_credentials_end_to_end_over_keyring(plaintext_keyring: Path) -> None:
    """CredentialStore over KeyringSecretStore writes, reads and forgets real entries."""
    creds = CredentialStore(KeyringSecretStore())
    wide = ("operator.read", "operator.admin")
    creds.save_device_token(GW, DEV, StoredDeviceToken("op-token", "operator", wide, 1))
    creds.save_device_token(GW, DEV, StoredDeviceToken("node-token", "node", (), 2))
    creds.save_shared_token(GW, "shared-token")
    creds.save_password(GW, "pw")
    creds.save_tls_pin("wss://Gateway.Local", "AA:BB")

    assert plaintext_keyring.is_file()
    written = _entries(plaintext_keyring)
    assert len(written) == 1  # one service section (keyrings.alt escapes its name)
    assert len(next(iter(written.values()))) == 7  # 5 values, the gateway index, the global index

    # A fresh store object sees the same data: it lives in the backend, not in memory.
    again = CredentialStore(KeyringSecretStore())
    assert again.known_gateways() == [GW]
    assert again.shared_token(GW) == "shared-token"
    assert again.password(GW) == "pw"
    assert again.tls_pin(GW) == "AA:BB"
    again.save_device_token(GW, DEV, StoredDeviceToken("op-token", "operator", ("operator.read",)))
    stored = again.device_token(GW, DEV, "operator")
    assert stored is not None
    assert stored.scopes == wide

    again.forget_gateway(GW)
    assert again.known_gateways() == []
    assert again.device_token(GW, DEV, "node") is None
    assert again.shared_token(GW) is None
    assert all(not options for options in _entries(plaintext_keyring).values())


def test_keyring_delete_of_missing_key(plaintext_keyring: Path) -> None:
    """Deleting an absent key from the real backend is not an error."""
    store = KeyringSecretStore("openclaw-desktop-test")
    store.delete("never-written")
    store.set("k", "v")
    store.delete("k")
    store.delete("k")
    assert store.get("k") is None


def test_plaintext_backend_is_not_trusted_by_default(plaintext_keyring: Path) -> None:
    """The stock plaintext backend (priority 0.5) does not count as a keyring."""
    ok, why = keyring_available()
    assert not ok
    assert "PlaintextKeyring" in why


@pytest.mark.usefixtures("restore_keyring")
def test_open_secret_store_uses_usable_keyring(tmp_path: Path) -> None:
    """With a backend of priority >= 1, open_secret_store returns the keyring store."""
    backend = _TrustedPlaintextKeyring()
    backend.file_path = str(tmp_path / "kr.cfg")
    keyring.set_keyring(backend)
    store = open_secret_store(tmp_path / "secrets.json")
    assert isinstance(store, KeyringSecretStore)
    CredentialStore(store).save_shared_token(GW, "tok")
    assert not (tmp_path / "secrets.json").exists()
    assert (tmp_path / "kr.cfg").is_file()


@pytest.mark.usefixtures("restore_keyring")
def test_fallback_when_fail_backend_active(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With keyring's fail backend, secrets go to the 0600 file and one warning is logged."""
    monkeypatch.setattr(secrets_module, "_fallback_warned", False)
    keyring.set_keyring(fail.Keyring())
    path = tmp_path / "data" / "secrets.json"
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        first = open_secret_store(path)
        second = open_secret_store(path)
    assert isinstance(first, FileSecretStore)
    assert isinstance(second, FileSecretStore)
    warnings = [r for r in caplog.records if r.name == "openclaw.identity"]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert str(path) in message
    assert "0600" in message
    assert "fail" in message

    creds = CredentialStore(first)
    creds.save_shared_token(GW, "file-token")
    assert CredentialStore(FileSecretStore(path)).shared_token(GW) == "file-token"
    assert "file-token" not in caplog.text
