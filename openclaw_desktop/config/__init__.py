"""Configuration: where state lives and the settings schema."""

from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.config.settings import NodeSettings, Settings, SettingsStore, setting_keys
from openclaw_desktop.config.window_state import WindowStateStore

__all__ = [
    "AppPaths",
    "NodeSettings",
    "Settings",
    "SettingsStore",
    "WindowStateStore",
    "setting_keys",
]
