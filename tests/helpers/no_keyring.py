"""Tests keep the developer's keyring out of reach: secrets go to the file fallback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["no_keyring"]


@contextlib.contextmanager
def no_keyring() -> Iterator[None]:
    """The failing keyring backend for the block, then the previous one again.

    Setting ``PYTHON_KEYRING_BACKEND`` inside a test is not enough: keyring reads it once,
    when the process first asks for a backend, which an earlier test may already have done.
    """
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        keyring.set_keyring(previous)
