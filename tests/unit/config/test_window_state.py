"""``window-state.json``: drafts per gateway and session, kept private, never overwritten
when unreadable."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from openclaw_desktop.config import AppPaths, WindowStateStore
from openclaw_desktop.config.window_state import MAX_DRAFT_CHARS
from openclaw_desktop.errors import ConfigError

GW = "ws://127.0.0.1:18789"


def test_drafts_are_kept_per_gateway_and_session(tmp_path: Path) -> None:
    """Each session of each gateway has its own draft; a blank one is forgotten."""
    store = WindowStateStore(AppPaths.under(tmp_path).window_state_file)
    assert store.draft(GW, "main") == ""
    store.set_draft(GW, "main", "half a thought")
    store.set_draft(GW, "work", "another")
    store.set_draft("wss://gw.example", "main", "elsewhere")
    assert store.draft(GW, "main") == "half a thought"
    assert store.draft("wss://gw.example", "main") == "elsewhere"
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    store.set_draft(GW, "main", "  \n")
    store.set_draft("wss://gw.example", "main", "")
    assert store.load() == {GW: {"work": "another"}}


def test_a_huge_draft_is_saved_cut(tmp_path: Path) -> None:
    """A pasted novel does not make the state file unbounded."""
    store = WindowStateStore(tmp_path / "window-state.json")
    store.set_draft(GW, "main", "x" * (MAX_DRAFT_CHARS + 10))
    assert len(store.draft(GW, "main")) == MAX_DRAFT_CHARS


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"drafts": {"gw": {"main": 3}}}', b"[1, 2]", b"\xff\xfe"],
)
def test_an_unreadable_file_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    """Bad content raises ConfigError naming the file, and a save does not replace it."""
    path = tmp_path / "window-state.json"
    path.write_bytes(content)
    store = WindowStateStore(path)
    with pytest.raises(ConfigError, match=r"window-state\.json"):
        store.load()
    with pytest.raises(ConfigError):
        store.set_draft(GW, "main", "new words")
    assert path.read_bytes() == content


def test_the_file_is_plain_json(tmp_path: Path) -> None:
    """What is written reads back with any JSON reader (versioned)."""
    store = WindowStateStore(tmp_path / "window-state.json")
    store.set_draft(GW, "main", "héllo <b>")
    assert json.loads(store.path.read_text("utf-8")) == {
        "version": 1,
        "drafts": {GW: {"main": "héllo <b>"}},
    }
