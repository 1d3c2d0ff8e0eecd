"""The runtime tests' home: a fresh app home per test, secrets in the 0600 file fallback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths
from tests.helpers.no_keyring import no_keyring


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AppPaths]:
    """The app's home under the test's folder; secrets in the 0600 file fallback."""
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENCLAW_GATEWAY_TOKEN", raising=False)
    with no_keyring():
        yield AppPaths.default()
