"""The settings dialog writes settings.json (a running node applies it) and the autostart
entry; availability comes from the node's own survey."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from openclaw_desktop.config import SettingsStore
from openclaw_desktop.node import Availability, CommandSpec, SurfaceEntry
from openclaw_desktop.node.capabilities import toggleable
from ui.dialogs.settings import SettingsDialog


def entries() -> list[SurfaceEntry]:
    """A survey where the camera is missing and notifications work."""
    return [
        SurfaceEntry(
            CommandSpec("camera.snap", "camera"), Availability.no("no camera found"), False
        ),
        SurfaceEntry(CommandSpec("system.notify", "system"), Availability.yes(), True),
    ]


def test_saving_writes_settings_and_autostart(
    qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Toggles and fields land in settings.json; start at login writes the XDG entry."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    store = SettingsStore(tmp_path / "settings.json")
    dialog = SettingsDialog(store, entries())
    qtbot.addWidget(dialog)
    texts = " ".join(label.text() for label in dialog.findChildren(QLabel))
    assert "not available: no camera found" in texts
    # Unavailable here: shown off and disabled, with the reason; another source may work.
    camera = dialog.capabilities["camera"]
    assert not camera.isEnabled() and not camera.isChecked()
    assert camera.accessibleDescription() == "Unavailable here: no camera found"
    dialog.camera_source.setText("rtsp://cam.local/stream")
    assert camera.isEnabled()
    camera.setChecked(True)
    dialog.start_at_login.setChecked(True)
    dialog.notify_replies.setChecked(False)
    dialog.display_name.setText("Studio laptop")
    dialog.theme.setCurrentText("dark")
    dialog.save()
    saved = store.load()
    assert saved.node.display_name == "Studio laptop" and saved.ui.theme == "dark"
    assert saved.node.camera is True
    assert saved.node.camera_source == "rtsp://cam.local/stream"
    assert saved.ui.start_at_login is True and saved.ui.notify_replies is False
    entry = tmp_path / "xdg" / "autostart" / "openclaw-desktop.desktop"
    assert "Exec=" in entry.read_text(encoding="utf-8")
    again = SettingsDialog(store, entries())
    qtbot.addWidget(again)
    again.start_at_login.setChecked(False)
    again.save()
    assert not entry.exists()


def test_a_refused_value_keeps_the_dialog_open(qtbot: QtBot, tmp_path: Path) -> None:
    """An invalid value is shown and nothing after it is written."""
    store = SettingsStore(tmp_path / "settings.json")
    dialog = SettingsDialog(store, [])
    qtbot.addWidget(dialog)
    dialog.camera_source.setText("x" * 3000)
    dialog.save()
    assert not dialog.error.isHidden()
    assert "camera_source" in dialog.error.text()
    assert store.load().node.camera_source is None


def test_one_checkbox_per_capability_of_the_table(qtbot: QtBot, tmp_path: Path) -> None:
    """The dialog's toggles are the table's, in its order, with its labels and help; Run
    commands is among them, off by default, and saving it on writes node.exec."""
    store = SettingsStore(tmp_path / "settings.json")
    dialog = SettingsDialog(store, entries())
    qtbot.addWidget(dialog)
    rows = toggleable()
    assert list(dialog.capabilities) == [cap.setting for cap in rows]
    for cap in rows:
        box = dialog.capabilities[cap.setting or ""]
        assert box.text() == cap.label and box.accessibleName() == cap.label
        assert box.isChecked() is cap.default, cap.setting
        if cap.setting != "camera":  # unavailable in this survey: the tooltip says why
            assert box.toolTip() == cap.help
    run = dialog.capabilities["exec"]
    assert run.text().startswith("Run commands") and run.isEnabled() and not run.isChecked()
    run.setChecked(True)
    dialog.save()
    assert store.load().node.exec is True
    again = SettingsDialog(store, entries())
    qtbot.addWidget(again)
    assert again.capabilities["exec"].isChecked()
