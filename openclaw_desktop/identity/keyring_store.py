"""The system keyring as a :class:`~.secrets.SecretStore` (the only module importing keyring)."""

from __future__ import annotations

from typing import Any

import keyring
from keyring.backends import chainer, fail, null
from keyring.errors import KeyringError, PasswordDeleteError

from ..errors import SecretStoreError

__all__ = ["DEFAULT_SERVICE", "KeyringSecretStore", "keyring_available"]

DEFAULT_SERVICE = "openclaw-desktop"
_MIN_PRIORITY = 1
_BACKEND_ERRORS = (KeyringError, OSError, RuntimeError)


def _name(backend: Any) -> str:
    cls = type(backend)
    return f"{cls.__module__}.{cls.__qualname__}"


def _priority(backend: Any) -> float | None:
    try:
        value = backend.priority
    except Exception:  # a backend's priority check may fail in any way
        return None
    return float(value) if isinstance(value, int | float) else None


def keyring_available(backend: Any = None) -> tuple[bool, str]:
    """Tell whether the keyring backend can be trusted with secrets.

    Not usable: keyring's fail backend, its null backend, a chainer with no usable
    backends, and any backend with priority below 1 (such as the plaintext file backends
    of ``keyrings.alt``, which are no better than our own 0600 file).

    Args:
        backend: The backend to judge; defaults to the active ``keyring.get_keyring()``.

    Returns:
        ``(usable, explanation)``; the explanation names the backend.
    """
    if backend is None:
        try:
            backend = keyring.get_keyring()
        except Exception as exc:  # backend discovery can fail in arbitrary ways
            return False, f"keyring failed to load a backend ({type(exc).__name__})"
    name = _name(backend)
    if isinstance(backend, fail.Keyring):
        return False, f"{name}: keyring found no backend"
    if isinstance(backend, null.Keyring):
        return False, f"{name}: keyring is disabled (null backend)"
    if isinstance(backend, chainer.ChainerBackend):
        usable = [_name(inner) for inner in backend.backends if keyring_available(inner)[0]]
        if not usable:
            return False, f"{name} with no usable backends"
        return True, f"{name} over {', '.join(usable)}"
    priority = _priority(backend)
    if priority is None:
        return False, f"{name}: priority unknown"
    if priority < _MIN_PRIORITY:
        return False, f"{name} has priority {priority:g}, below {_MIN_PRIORITY}"
    return True, f"{name} (priority {priority:g})"


class KeyringSecretStore:
    """Secrets in the system keyring, one entry per key under one service name.

    Args:
        service: The keyring service name.
    """

    def __init__(self, service: str = DEFAULT_SERVICE) -> None:
        self.service = service

    def __repr__(self) -> str:
        return f"KeyringSecretStore(service={self.service!r})"

    @property
    def description(self) -> str:
        """Which keyring backend and service hold the secrets."""
        try:
            backend = _name(keyring.get_keyring())
        except Exception:  # only for display
            backend = "unknown backend"
        return f"system keyring {backend} (service {self.service!r})"

    def get(self, key: str) -> str | None:
        """The value for ``key``, or None."""
        _check_key(key)
        try:
            value = keyring.get_password(self.service, key)
        except _BACKEND_ERRORS as exc:
            raise _error("read", key, exc) from exc
        return value if isinstance(value, str) else None

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        _check_key(key)
        try:
            keyring.set_password(self.service, key, value)
        except _BACKEND_ERRORS as exc:
            raise _error("write", key, exc) from exc

    def delete(self, key: str) -> None:
        """Remove ``key``; a missing key is not an error."""
        _check_key(key)
        try:
            keyring.delete_password(self.service, key)
        except PasswordDeleteError as exc:
            if self.get(key) is not None:
                raise _error("delete", key, exc) from exc
        except _BACKEND_ERRORS as exc:
            raise _error("delete", key, exc) from exc


def _check_key(key: str) -> None:
    if not key:
        raise ValueError("secret key must not be empty")


def _error(action: str, key: str, exc: BaseException) -> SecretStoreError:
    return SecretStoreError(f"keyring could not {action} {key!r}: {type(exc).__name__}: {exc}")
