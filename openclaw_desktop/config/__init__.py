"""Configuration: where state lives and (later) the settings schema."""

from openclaw_desktop.config.paths import AppPaths

__all__ = ["AppPaths"]
