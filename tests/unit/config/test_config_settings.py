"""The settings schema and its file: defaults, atomic saves, loud corruption, key parsing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore, setting_keys
from openclaw_desktop.config.settings import UiSettings
from openclaw_desktop.errors import ConfigError


def test_privacy_sensitive_sources_are_off_by_default() -> None:
    """Camera, screen, microphone, running commands, location, the installed-apps list and
    computer control are opt-in; notifications are on."""
    node = NodeSettings()
    assert node.toggles() == {
        "notifications": True,
        "camera": False,
        "screen": False,
        "microphone": False,
        "exec": False,
        "location": False,
        "installed_apps": False,
        "computer": False,
    }


def test_missing_file_means_defaults(tmp_path: Path) -> None:
    """No file yet: the defaults, and nothing is written."""
    store = SettingsStore(tmp_path / "settings.json")
    assert store.load() == Settings()
    assert store.mtime_ns() is None
    assert not store.path.exists()


def test_set_saves_atomically_and_privately(tmp_path: Path) -> None:
    """set() coerces the text, writes the whole file and keeps other values."""
    store = SettingsStore(tmp_path / "cfg" / "settings.json")
    store.set("node.camera", "on")
    updated = store.set("node.camera_source", "rtsp://cam.local/stream")
    assert updated.node.camera is True
    assert updated.node.camera_source == "rtsp://cam.local/stream"
    assert store.load() == updated
    data = json.loads(store.path.read_text(encoding="utf-8"))
    assert data["node"]["camera"] is True
    assert [p.name for p in store.path.parent.iterdir()] == ["settings.json"]  # no temp left
    if os.name == "posix":
        assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.set("node.camera_source", "none").node.camera_source is None


@pytest.mark.parametrize(
    ("raw", "value"), [("on", True), ("TRUE", True), ("1", True), ("off", False), ("no", False)]
)
def test_switch_words(tmp_path: Path, raw: str, value: bool) -> None:
    """Switches accept the usual on/off words."""
    store = SettingsStore(tmp_path / "settings.json")
    assert store.set("node.screen", raw).node.screen is value


@pytest.mark.parametrize(
    ("key", "raw", "message"),
    [
        ("node.camera", "maybe", "expected on/off"),
        ("node.flashlight", "on", "unknown setting 'node.flashlight'"),
        ("camera", "on", "unknown setting 'camera'"),
        ("ui.colour", "dark", "unknown setting"),
        ("ui.theme", "purple", "ui.theme"),
        ("node.camera_source", "x" * 3000, "node.camera_source"),
    ],
)
def test_bad_input_is_a_clear_error_and_changes_nothing(
    tmp_path: Path, key: str, raw: str, message: str
) -> None:
    """A bad key or value raises ConfigError and leaves the file as it was."""
    store = SettingsStore(tmp_path / "settings.json")
    store.set("node.camera", "on")
    before = store.path.read_bytes()
    with pytest.raises(ConfigError, match=message):
        store.set(key, raw)
    assert store.path.read_bytes() == before


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"node": {"camera": "sometimes"}}',
        b'{"node": {"camera": true, "typo_setting": 1}}',
        b'{"version": 7}',
        b"[]",
        b"\xff\xfe",
    ],
)
def test_corrupt_file_fails_loudly_and_is_not_overwritten(tmp_path: Path, content: bytes) -> None:
    """An unreadable file is never replaced by defaults: the error names the file."""
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    store = SettingsStore(path)
    with pytest.raises(ConfigError, match=r"settings\.json is not valid"):
        store.load()
    with pytest.raises(ConfigError):
        store.set("node.camera", "on")
    assert path.read_bytes() == content


def test_every_key_is_documented() -> None:
    """settings keys lists every node option with a description."""
    keys = setting_keys()
    expected = {f"node.{name}" for name in NodeSettings.model_fields}
    expected |= {f"ui.{name}" for name in UiSettings.model_fields}
    expected |= {"discovery.interfaces"}
    assert set(keys) == expected
    assert all(keys.values())


def test_ui_settings_are_set_like_node_ones(tmp_path: Path) -> None:
    """ui.* keys go through the same parsing and atomic save."""
    store = SettingsStore(tmp_path / "settings.json")
    assert store.load().ui.notify_replies is True
    updated = store.set("ui.start_at_login", "on")
    assert updated.ui.start_at_login is True and updated.node == NodeSettings()
    assert store.set("ui.theme", "dark").ui.theme == "dark"
    with pytest.raises(ConfigError, match=r"unknown setting 'ui\.colour'"):
        store.set("ui.colour", "dark")


def test_mtime_changes_on_save(tmp_path: Path) -> None:
    """mtime_ns is what a running node polls to notice a change."""
    store = SettingsStore(tmp_path / "settings.json")
    store.save(Settings())
    first = store.mtime_ns()
    os.utime(store.path, ns=(1, 1))
    assert store.mtime_ns() == 1
    assert first is not None
