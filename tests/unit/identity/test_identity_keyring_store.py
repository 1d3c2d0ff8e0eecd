"""Judging keyring backends and mapping keyring errors (with in-process backends)."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import chainer, fail, null
from keyring.errors import KeyringLocked, PasswordDeleteError

from openclaw_desktop.errors import SecretStoreError
from openclaw_desktop.identity.keyring_store import KeyringSecretStore, keyring_available


class _GoodBackend(KeyringBackend):
    """A dict-backed backend that claims a real priority."""

    priority = 5

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.values.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.values[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.values:
            raise PasswordDeleteError("not found")
        del self.values[(service, username)]


class _WeakBackend(_GoodBackend):
    priority = 0.5


class _LockedBackend(_GoodBackend):
    def get_password(self, service: str, username: str) -> str | None:
        raise KeyringLocked("locked")

    def set_password(self, service: str, username: str, password: str) -> None:
        raise KeyringLocked("locked")


class _StuckDeleteBackend(_GoodBackend):
    def delete_password(self, service: str, username: str) -> None:
        raise PasswordDeleteError("cannot delete")


@pytest.fixture
def restore_keyring() -> Iterator[None]:
    """Lets a test install a backend; the previous one is restored afterwards."""
    previous = keyring.get_keyring()
    yield
    keyring.set_keyring(previous)


def test_fail_and_null_backends_are_unusable() -> None:
    """The fail and null backends are reported unusable and named."""
    ok, why = keyring_available(fail.Keyring())
    assert not ok
    assert "fail" in why
    ok, why = keyring_available(null.Keyring())
    assert not ok
    assert "null" in why


def test_low_priority_backend_is_unusable() -> None:
    """A backend with priority below 1 (like plaintext files) is not trusted."""
    ok, why = keyring_available(_WeakBackend())
    assert not ok
    assert "_WeakBackend" in why
    assert "0.5" in why


def test_good_backend_is_usable() -> None:
    """A backend with priority 5 is usable and named in the explanation."""
    ok, why = keyring_available(_GoodBackend())
    assert ok
    assert "_GoodBackend" in why


def test_chainer_without_usable_backends(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chainer over only weak backends is unusable; with one good backend it is usable."""
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [_WeakBackend()])
    ok, why = keyring_available(chainer.ChainerBackend())
    assert not ok
    assert "ChainerBackend" in why
    monkeypatch.setattr(chainer.ChainerBackend, "backends", [_WeakBackend(), _GoodBackend()])
    ok, why = keyring_available(chainer.ChainerBackend())
    assert ok
    assert "_GoodBackend" in why


@pytest.mark.usefixtures("restore_keyring")
def test_active_backend_is_judged() -> None:
    """Without an argument the active keyring backend is judged."""
    keyring.set_keyring(fail.Keyring())
    assert keyring_available()[0] is False
    keyring.set_keyring(_GoodBackend())
    assert keyring_available()[0] is True


@pytest.mark.usefixtures("restore_keyring")
def test_store_round_trip_and_missing_delete() -> None:
    """Values go under the service name; deleting a missing key is not an error."""
    backend = _GoodBackend()
    keyring.set_keyring(backend)
    store = KeyringSecretStore()
    store.set("k", "v")
    assert backend.values == {("openclaw-desktop", "k"): "v"}
    assert store.get("k") == "v"
    store.delete("k")
    store.delete("k")
    assert store.get("k") is None
    assert "_GoodBackend" in store.description


@pytest.mark.usefixtures("restore_keyring")
def test_keyring_errors_become_secret_store_errors() -> None:
    """Locked or failing backends raise SecretStoreError without the value."""
    keyring.set_keyring(_LockedBackend())
    store = KeyringSecretStore("svc")
    with pytest.raises(SecretStoreError, match="KeyringLocked"):
        store.get("k")
    with pytest.raises(SecretStoreError) as info:
        store.set("k", "secret-value")
    assert "secret-value" not in str(info.value)
    keyring.set_keyring(fail.Keyring())
    with pytest.raises(SecretStoreError, match="NoKeyringError"):
        store.get("k")


@pytest.mark.usefixtures("restore_keyring")
def test_failed_delete_of_present_key_raises() -> None:
    """If a present key cannot be deleted, that is an error."""
    backend = _StuckDeleteBackend()
    keyring.set_keyring(backend)
    store = KeyringSecretStore()
    store.delete("absent")
    store.set("k", "v")
    with pytest.raises(SecretStoreError, match="delete"):
        store.delete("k")
