"""Where secrets live: the system keyring when one exists, else a private file.

:class:`SecretStore` is a flat string-to-string store. :func:`open_secret_store` picks
the system keyring when a real backend is available and otherwise falls back to
:class:`FileSecretStore` (mode 0600), logging one warning per process.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from ..errors import SecretStoreError
from ._files import read_private_file, write_private_file

__all__ = ["FileSecretStore", "MemorySecretStore", "SecretStore", "open_secret_store"]

log = logging.getLogger("openclaw.identity")

_MAX_FILE_BYTES = 4 * 1024 * 1024
_fallback_lock = threading.Lock()
_fallback_warned = False


@runtime_checkable
class SecretStore(Protocol):
    """A flat store of secret strings by key."""

    @property
    def description(self) -> str:
        """Where the secrets go, for the user (never includes a secret)."""
        ...

    def get(self, key: str) -> str | None:
        """The value for ``key``, or None.

        Raises:
            SecretStoreError: If the store cannot be read.
        """
        ...

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any previous value.

        Raises:
            SecretStoreError: If the store cannot be written.
        """
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; removing a missing key is not an error.

        Raises:
            SecretStoreError: If the store cannot be written.
        """
        ...


def _check_key(key: str) -> None:
    if not key:
        raise ValueError("secret key must not be empty")


class MemorySecretStore:
    """A secret store in a dict, for tests.

    Args:
        initial: Optional starting contents (copied).
    """

    description = "in-memory store (not persisted)"

    def __init__(self, initial: dict[str, str] | None = None) -> None:
        self._values: dict[str, str] = dict(initial or {})

    def __repr__(self) -> str:
        return f"MemorySecretStore(<{len(self._values)} entries>)"

    def get(self, key: str) -> str | None:
        """The value for ``key``, or None."""
        _check_key(key)
        return self._values.get(key)

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        _check_key(key)
        self._values[key] = value

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        _check_key(key)
        self._values.pop(key, None)

    def snapshot(self) -> dict[str, str]:
        """A copy of the contents (tests use it to look for leftovers)."""
        return dict(self._values)


class FileSecretStore:
    """Secrets in one JSON object file with mode 0600, written atomically.

    A file that exists but is not a JSON object of strings raises
    :class:`~openclaw_desktop.errors.SecretStoreError` and is never overwritten.

    Args:
        path: The file, normally ``AppPaths.secrets_file``.
        fallback_reason: Why the keyring is not used (named in :attr:`description`).
    """

    def __init__(self, path: Path, fallback_reason: str | None = None) -> None:
        self.path = path
        self.fallback_reason = fallback_reason
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FileSecretStore({str(self.path)!r})"

    @property
    def description(self) -> str:
        """Where the secrets go, and why not to the keyring when that is known."""
        where = f"file {self.path} (mode 0600)"
        if self.fallback_reason is None:
            return where
        return f"no usable keyring backend: {self.fallback_reason}; secrets go to {where}"

    def get(self, key: str) -> str | None:
        """The value for ``key``, or None."""
        _check_key(key)
        with self._lock:
            return self._read().get(key)

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        _check_key(key)
        with self._lock:
            values = self._read()
            values[key] = value
            self._write(values)

    def delete(self, key: str) -> None:
        """Remove ``key`` if present."""
        _check_key(key)
        with self._lock:
            values = self._read()
            if values.pop(key, None) is not None:
                self._write(values)

    def _read(self) -> dict[str, str]:
        try:
            data = read_private_file(self.path, limit=_MAX_FILE_BYTES, what="secret file")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise SecretStoreError(f"cannot read {self.path}: {exc.strerror}") from exc
        if data is None:
            raise SecretStoreError(f"{self.path} is too large to be a secret file")
        try:
            document: Any = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise SecretStoreError(
                f"{self.path} is corrupt (not JSON); fix or remove it, it is not overwritten"
            ) from exc
        if not isinstance(document, dict) or not all(
            isinstance(value, str) for value in document.values()
        ):
            raise SecretStoreError(
                f"{self.path} is corrupt (not an object of strings); fix or remove it, "
                "it is not overwritten"
            )
        return document

    def _write(self, values: dict[str, str]) -> None:
        data = (json.dumps(values, indent=2, sort_keys=True) + "\n").encode("utf-8")
        try:
            write_private_file(self.path, data)
        except OSError as exc:
            raise SecretStoreError(f"cannot write {self.path}: {exc.strerror}") from exc


def open_secret_store(secrets_file: Path, *, use_keyring: bool = True) -> SecretStore:
    """Open the best secret store available.

    Args:
        secrets_file: The fallback file, normally ``AppPaths.secrets_file``.
        use_keyring: Try the system keyring first.

    Returns:
        A keyring-backed store when ``use_keyring`` is set and a usable keyring backend
        exists, else a :class:`FileSecretStore` on ``secrets_file``. The fallback caused
        by a missing keyring is logged as one warning per process.
    """
    if use_keyring:
        from . import keyring_store  # lazy: importing the package must not import keyring

        available, why = keyring_store.keyring_available()
        if available:
            return keyring_store.KeyringSecretStore()
        _warn_fallback_once(secrets_file, why)
        return FileSecretStore(secrets_file, fallback_reason=why)
    return FileSecretStore(secrets_file)


def _warn_fallback_once(secrets_file: Path, why: str) -> None:
    global _fallback_warned
    with _fallback_lock:
        if _fallback_warned:
            return
        _fallback_warned = True
    log.warning(
        "no usable keyring backend (%s); secrets are stored in %s with mode 0600 instead",
        why,
        secrets_file,
    )
