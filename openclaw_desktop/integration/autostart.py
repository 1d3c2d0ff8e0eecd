"""“Start at login”: an XDG autostart entry on Linux (``$XDG_CONFIG_HOME/autostart``).

The entry is :func:`openclaw_desktop.integration.xdg.autostart_entry`: the same name, icon
and absolute command as the menu entry that ``openclaw-desktop desktop install`` writes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from openclaw_desktop.integration.command import app_argv
from openclaw_desktop.integration.xdg import DESKTOP_FILE, autostart_entry, config_home

__all__ = ["ENTRY_NAME", "autostart_path", "set_autostart"]

ENTRY_NAME = DESKTOP_FILE


def autostart_path() -> Path:
    """Where the entry lives."""
    return config_home() / "autostart" / ENTRY_NAME


def set_autostart(enabled: bool) -> Path | None:
    """Write (or remove) the entry; returns its path when written. No-op off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    path = autostart_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(autostart_entry(app_argv()), encoding="utf-8")
    os.replace(tmp, path)
    return path
