"""The file and memory secret stores, and how open_secret_store picks one."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest

from openclaw_desktop.errors import SecretStoreError
from openclaw_desktop.identity import (
    FileSecretStore,
    MemorySecretStore,
    SecretStore,
    open_secret_store,
)
from openclaw_desktop.identity import secrets as secrets_module

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


@pytest.mark.parametrize("kind", ["file", "memory"])
def test_store_contract(tmp_path: Path, kind: str) -> None:
    """get/set/delete behave the same for both stores; deleting twice is fine."""
    store: SecretStore = (
        FileSecretStore(tmp_path / "secrets.json") if kind == "file" else MemorySecretStore()
    )
    assert isinstance(store, SecretStore)
    assert store.description
    assert store.get("a") is None
    store.set("a", "1")
    store.set("b", "ü")
    store.set("a", "2")
    assert store.get("a") == "2"
    assert store.get("b") == "ü"
    store.delete("a")
    store.delete("a")
    assert store.get("a") is None
    with pytest.raises(ValueError, match="empty"):
        store.set("", "x")


@posix_only
def test_file_store_mode_and_format(tmp_path: Path) -> None:
    """The file is a 0600 JSON object, and no temp files are left behind."""
    path = tmp_path / "data" / "secrets.json"
    store = FileSecretStore(path)
    store.set("k", "v")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"k": "v"}
    assert [p.name for p in path.parent.iterdir()] == ["secrets.json"]


@pytest.mark.parametrize("content", ["{oops", "[]", '{"k": 1}', ""])
def test_corrupt_file_raises_and_is_kept(tmp_path: Path, content: str) -> None:
    """A corrupt file raises SecretStoreError on read and write and is never overwritten."""
    path = tmp_path / "secrets.json"
    path.write_text(content)
    store = FileSecretStore(path)
    with pytest.raises(SecretStoreError, match="corrupt"):
        store.get("k")
    with pytest.raises(SecretStoreError, match="corrupt"):
        store.set("k", "v")
    with pytest.raises(SecretStoreError):
        store.delete("k")
    assert path.read_text() == content


def test_repr_has_no_values(tmp_path: Path) -> None:
    """Store reprs never show stored values."""
    file_store = FileSecretStore(tmp_path / "secrets.json")
    memory = MemorySecretStore()
    for store in (file_store, memory):
        store.set("key", "hunter2-secret")
        assert "hunter2-secret" not in repr(store)
        assert "hunter2-secret" not in store.description


def test_open_secret_store_without_keyring(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """use_keyring=False gives the file store and does not import the keyring adapter."""
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        store = open_secret_store(tmp_path / "secrets.json", use_keyring=False)
    assert isinstance(store, FileSecretStore)
    assert store.path == tmp_path / "secrets.json"
    assert caplog.records == []


def test_open_secret_store_warns_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When no keyring is usable the fallback is logged once per process."""
    from openclaw_desktop.identity import keyring_store

    monkeypatch.setattr(secrets_module, "_fallback_warned", False)
    monkeypatch.setattr(keyring_store, "keyring_available", lambda: (False, "test backend"))
    with caplog.at_level(logging.WARNING, logger="openclaw.identity"):
        first = open_secret_store(tmp_path / "secrets.json")
        second = open_secret_store(tmp_path / "secrets.json")
    assert isinstance(first, FileSecretStore)
    assert isinstance(second, FileSecretStore)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "test backend" in warnings[0].getMessage()
    assert "0600" in warnings[0].getMessage()
    assert str(tmp_path / "secrets.json") in warnings[0].getMessage()
