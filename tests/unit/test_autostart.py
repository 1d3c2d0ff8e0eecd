"""“Start at login” (:mod:`openclaw_desktop.integration.autostart`): the XDG autostart entry
is written and removed under ``$XDG_CONFIG_HOME``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from openclaw_desktop.integration.autostart import ENTRY_NAME, autostart_path, set_autostart


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG autostart is Linux's")
def test_the_entry_is_written_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert autostart_path() == tmp_path / "xdg" / "autostart" / ENTRY_NAME
    written = set_autostart(True)
    assert written == autostart_path()
    text = written.read_text(encoding="utf-8")
    assert text.startswith("[Desktop Entry]") and "Exec=" in text
    assert not list(written.parent.glob("*.tmp"))
    assert set_autostart(False) is None
    assert not written.exists()
    assert set_autostart(False) is None  # already gone
