"""“Start at login”: an XDG autostart entry on Linux (``$XDG_CONFIG_HOME/autostart``)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

__all__ = ["ENTRY_NAME", "autostart_path", "set_autostart"]

ENTRY_NAME = "openclaw-desktop.desktop"


def autostart_path() -> Path:
    """Where the entry lives."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "autostart" / ENTRY_NAME


def _command() -> str:
    script = Path(sys.argv[0]).resolve() if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "openclaw-desktop" and script.exists():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m ui.launcher"


def set_autostart(enabled: bool) -> Path | None:
    """Write (or remove) the entry; returns its path when written. No-op off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    path = autostart_path()
    if not enabled:
        path.unlink(missing_ok=True)
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    text = (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Name=OpenClaw Desktop\n"
        "Comment=Chat with your OpenClaw agent; offer this computer as a node\n"
        f"Exec={_command()}\n"
        "Icon=openclaw-desktop\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
