"""Configuration: where state lives and the settings schema."""

from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.config.settings import NodeSettings, Settings, SettingsStore, setting_keys

__all__ = ["AppPaths", "NodeSettings", "Settings", "SettingsStore", "setting_keys"]
