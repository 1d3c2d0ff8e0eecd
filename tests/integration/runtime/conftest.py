"""The runtime tests' home: a fresh app home per test, secrets in the 0600 file fallback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AppPaths]:
    """The app's home under the test's folder; secrets in the 0600 file fallback."""
    import keyring
    from keyring.backends import fail

    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENCLAW_GATEWAY_TOKEN", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    try:
        yield AppPaths.default()
    finally:
        keyring.set_keyring(previous)
