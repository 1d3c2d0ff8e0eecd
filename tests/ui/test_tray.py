"""The tray menu's capability toggles: the capability table's, ticked as settings.json says,
written back when toggled, and shown unavailable with the reason."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.node.capabilities import toggleable
from ui.tray import Tray


def make_tray(store: SettingsStore) -> Tray:
    """A tray over ``store`` whose menu callbacks do nothing."""
    return Tray(store, open_chat=lambda: None, pair_phone=lambda: None, quit_app=lambda: None)


def test_the_menu_has_one_toggle_per_capability(qtbot: QtBot, tmp_path: Path) -> None:
    """Every toggleable capability is a checkable menu entry, in table order, at its
    default; Run commands is one of them and off."""
    store = SettingsStore(tmp_path / "settings.json")
    tray = make_tray(store)
    qtbot.addWidget(tray.menu)
    rows = toggleable()
    assert list(tray.capability_actions) == [cap.key for cap in rows]
    texts = [action.text() for action in tray.menu.actions()]
    for cap in rows:
        action = tray.capability_actions[cap.key or ""]
        assert action.isCheckable() and action.isEnabled()
        assert action.text() == cap.menu_text and action.toolTip() == cap.help
        assert action.isChecked() is cap.default, cap.key
        assert cap.menu_text in texts
    assert not tray.capability_actions["node.exec"].isChecked()
    assert "Run commands" in texts


def test_toggling_writes_the_setting_and_unavailable_says_why(qtbot: QtBot, tmp_path: Path) -> None:
    """Ticking Run commands saves node.exec on; an unavailable capability is shown off,
    disabled and explained, and the user's choice in the file is kept."""
    store = SettingsStore(tmp_path / "settings.json")
    tray = make_tray(store)
    qtbot.addWidget(tray.menu)
    tray.capability_actions["node.exec"].setChecked(True)
    assert store.load().node.exec is True
    store.set("node.camera", "on")
    tray.set_unavailable({"camera": "no camera found"})
    camera = tray.capability_actions["node.camera"]
    assert not camera.isChecked() and not camera.isEnabled()
    assert camera.text() == "Camera (unavailable)"
    assert camera.toolTip() == "Unavailable here: no camera found"
    assert store.load().node.camera is True
    tray.set_unavailable({})
    assert camera.isChecked() and camera.isEnabled() and camera.text() == "Camera"
