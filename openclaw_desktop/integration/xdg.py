"""Freedesktop integration on Linux: the desktop entry, the AppStream metadata, the icons and
the ``openclaw://`` URL handler, installed for this user under ``$XDG_DATA_HOME``.

The texts are generated here (one source): ``packaging/linux/`` holds the same files with
``Exec=openclaw-desktop %u`` for distribution packages, checked against this module by a test.
An installed entry names this app by its absolute path (:func:`~.command.app_argv`), so it
works from a virtual environment that is not on ``PATH``.

The scheme handler is the desktop entry's ``MimeType=x-scheme-handler/openclaw;`` plus a
default in ``mimeapps.list``: set with ``xdg-mime`` when it is installed, else written into
``$XDG_CONFIG_HOME/mimeapps.list`` directly (other entries are kept as they are).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

from openclaw_desktop.integration.command import desktop_exec
from openclaw_desktop.integration.icon import HICOLOR_SIZES, ICON_NAME, ICON_SVG

__all__ = [
    "APP_ID",
    "DESKTOP_FILE",
    "METAINFO_FILE",
    "RELEASES",
    "SCHEME_MIME",
    "InstallReport",
    "autostart_entry",
    "config_home",
    "data_home",
    "desktop_entry",
    "install",
    "metainfo",
    "set_default_handler",
    "uninstall",
    "unset_default_handler",
]

APP_ID = "io.github.openclaw_desktop.OpenClawDesktop"
"""The AppStream component id (reverse DNS)."""
DESKTOP_FILE = "openclaw-desktop.desktop"
"""The desktop file id (matches ``QGuiApplication.setDesktopFileName``)."""
METAINFO_FILE = f"{APP_ID}.metainfo.xml"
SCHEME_MIME = "x-scheme-handler/openclaw"
RELEASES = (("0.1.0", "2026-11-30"),)
"""AppStream releases, newest first: (version, date)."""

NAME = "OpenClaw Desktop"
COMMENT = "Chat with your OpenClaw agent and offer this computer as a node"
TIMEOUT_S = 20.0
PngRenderer = Callable[[int], bytes]


def data_home() -> Path:
    """``$XDG_DATA_HOME`` (default ``~/.local/share``)."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def config_home() -> Path:
    """``$XDG_CONFIG_HOME`` (default ``~/.config``)."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def _entry(argv: Sequence[str], *field_codes: str) -> list[str]:
    return [
        "[Desktop Entry]",
        "Type=Application",
        f"Name={NAME}",
        "GenericName=AI Agent Chat",
        f"Comment={COMMENT}",
        f"Exec={desktop_exec(argv, *field_codes)}",
        f"Icon={ICON_NAME}",
        "Terminal=false",
    ]


def desktop_entry(argv: Sequence[str]) -> str:
    """The application's desktop entry; ``Exec`` runs ``argv`` with the clicked URL (``%u``)."""
    lines = _entry(argv, "%u")
    lines += [
        "Categories=Network;Chat;",
        "Keywords=AI;agent;assistant;gateway;OpenClaw;",
        f"MimeType={SCHEME_MIME};",
        "StartupNotify=true",
    ]
    return "\n".join(lines) + "\n"


def autostart_entry(argv: Sequence[str]) -> str:
    """The XDG autostart entry (“start at login”): the same app, no URL, no menu entry."""
    lines = _entry(argv)
    lines.append("X-GNOME-Autostart-enabled=true")
    return "\n".join(lines) + "\n"


def metainfo() -> str:
    """The AppStream metainfo of the application."""
    releases = "\n".join(
        f'    <release version="{escape(version)}" date="{escape(date)}"/>'
        for version, date in RELEASES
    )
    return f"""\
<?xml version="1.0" encoding="UTF-8"?>
<component type="desktop-application">
  <id>{APP_ID}</id>
  <metadata_license>CC0-1.0</metadata_license>
  <project_license>MIT</project_license>
  <name>{NAME}</name>
  <summary>Desktop companion for the OpenClaw AI gateway</summary>
  <developer id="io.github.openclaw_desktop">
    <name>The OpenClaw Desktop developers</name>
  </developer>
  <description>
    <p>
      Chat with your OpenClaw agent, and let it use this computer as a device node:
      notifications, device status and, when you enable them, the camera, the microphone
      and the screen.
    </p>
    <p>
      A bundled gateway runs on this computer, so phones can pair with it offline; the app
      also connects to any OpenClaw gateway on your network or elsewhere, with TLS
      certificate pinning.
    </p>
  </description>
  <launchable type="desktop-id">{DESKTOP_FILE}</launchable>
  <categories>
    <category>Network</category>
    <category>Chat</category>
  </categories>
  <provides>
    <binary>openclaw-desktop</binary>
    <mediatype>{SCHEME_MIME}</mediatype>
  </provides>
  <content_rating type="oars-1.1"/>
  <releases>
{releases}
  </releases>
</component>
"""


@dataclass
class InstallReport:
    """What :func:`install` / :func:`uninstall` did, for the user."""

    written: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _write(path: Path, data: bytes, report: InstallReport) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
    report.written.append(path)


def _icon_paths(data: Path) -> list[Path]:
    hicolor = data / "icons" / "hicolor"
    paths = [hicolor / "scalable" / "apps" / f"{ICON_NAME}.svg"]
    paths += [hicolor / f"{s}x{s}" / "apps" / f"{ICON_NAME}.png" for s in HICOLOR_SIZES]
    return paths


def _run(tool: str, *args: str) -> str | None:
    """Run a helper if it is installed; a note when it failed (None when fine or absent)."""
    path = shutil.which(tool)
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{tool} failed: {exc}"
    if done.returncode != 0:
        return f"{tool} failed ({done.returncode}): {done.stderr.strip()[:200]}"
    return None


def _refresh_caches(data: Path, report: InstallReport) -> None:
    for note in (
        _run("update-desktop-database", str(data / "applications")),
        _run("gtk-update-icon-cache", "-f", "-t", "-q", str(data / "icons" / "hicolor")),
    ):
        if note:
            report.notes.append(note)


def install(
    argv: Sequence[str],
    *,
    data: Path | None = None,
    config: Path | None = None,
    render_png: PngRenderer | None = None,
    xdg_mime: str | None = None,
) -> InstallReport:
    """Install the desktop entry, metainfo and icons, and make this app the ``openclaw://``
    handler.

    Args:
        argv: The command that starts this app (:func:`~.command.app_argv`).
        data: ``$XDG_DATA_HOME`` by default.
        config: ``$XDG_CONFIG_HOME`` by default (for ``mimeapps.list``).
        render_png: Renders the icon at a size; without it only the SVG is installed.
        xdg_mime: Path of ``xdg-mime``; None writes ``mimeapps.list`` directly.
    """
    data = data or data_home()
    config = config or config_home()
    report = InstallReport()
    _write(data / "applications" / DESKTOP_FILE, desktop_entry(argv).encode(), report)
    _write(data / "metainfo" / METAINFO_FILE, metainfo().encode(), report)
    svg, *pngs = _icon_paths(data)
    _write(svg, ICON_SVG.encode(), report)
    if render_png is None:
        report.notes.append("PNG icons not rendered (no Qt here); the SVG icon is installed")
    else:
        for size, path in zip(HICOLOR_SIZES, pngs, strict=True):
            _write(path, render_png(size), report)
    _refresh_caches(data, report)
    if xdg_mime is not None:
        note = _run(xdg_mime, "default", DESKTOP_FILE, SCHEME_MIME)
        if note is None:
            report.notes.append(f"openclaw:// links open this app (set with {xdg_mime})")
            return report
        report.notes.append(note + "; writing mimeapps.list instead")
    set_default_handler(config / "mimeapps.list")
    report.written.append(config / "mimeapps.list")
    report.notes.append("openclaw:// links open this app (mimeapps.list)")
    return report


def uninstall(*, data: Path | None = None, config: Path | None = None) -> InstallReport:
    """Remove what :func:`install` wrote, and this app as the ``openclaw://`` handler."""
    data = data or data_home()
    config = config or config_home()
    report = InstallReport()
    paths = [data / "applications" / DESKTOP_FILE, data / "metainfo" / METAINFO_FILE]
    for path in [*paths, *_icon_paths(data)]:
        if path.exists():
            path.unlink()
            report.removed.append(path)
    if unset_default_handler(config / "mimeapps.list"):
        report.removed.append(config / "mimeapps.list")
    _refresh_caches(data, report)
    return report


# ---------------------------------------------------------------- mimeapps.list
_DEFAULTS = "[Default Applications]"
_ADDED = "[Added Associations]"


def _sections(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Section header -> (index of the header, index after its last line)."""
    found: dict[str, tuple[int, int]] = {}
    current: str | None = None
    for i, line in enumerate(lines):
        if line.startswith("[") and line.rstrip().endswith("]"):
            if current is not None:
                found[current] = (found[current][0], i)
            current = line.strip()
            found[current] = (i, len(lines))
    return found


def _set_key(lines: list[str], section: str, key: str, value: str) -> list[str]:
    bounds = _sections(lines).get(section)
    if bounds is None:
        if lines and lines[-1].strip():
            lines.append("")
        return [*lines, section, f"{key}={value}"]
    start, end = bounds
    for i in range(start + 1, end):
        if lines[i].split("=", 1)[0].strip() == key:
            lines[i] = f"{key}={value}"
            return lines
    insert = end
    while insert > start + 1 and not lines[insert - 1].strip():
        insert -= 1
    return [*lines[:insert], f"{key}={value}", *lines[insert:]]


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def _write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def set_default_handler(mimeapps: Path) -> None:
    """Make this app the default (and an added association) for ``openclaw://`` links."""
    lines = _read_lines(mimeapps)
    lines = _set_key(lines, _DEFAULTS, SCHEME_MIME, f"{DESKTOP_FILE};")
    bounds = _sections(lines).get(_ADDED)
    current: list[str] = []
    if bounds is not None:
        for line in lines[bounds[0] + 1 : bounds[1]]:
            key, _, value = line.partition("=")
            if key.strip() == SCHEME_MIME:
                current = [v for v in value.strip().split(";") if v]
    apps = [DESKTOP_FILE, *(a for a in current if a != DESKTOP_FILE)]
    _write_lines(mimeapps, _set_key(lines, _ADDED, SCHEME_MIME, ";".join(apps) + ";"))


def unset_default_handler(mimeapps: Path) -> bool:
    """Drop this app from the ``openclaw://`` entries of ``mimeapps.list``; whether it changed.

    Other applications named for the scheme stay; a key left with no application goes.
    """
    lines = _read_lines(mimeapps)
    changed = False
    kept: list[str] = []
    for line in lines:
        key, sep, value = line.partition("=")
        if sep and key.strip() == SCHEME_MIME:
            apps = [a for a in value.strip().split(";") if a]
            others = [a for a in apps if a != DESKTOP_FILE]
            if others != apps:
                changed = True
                if others:
                    kept.append(f"{SCHEME_MIME}={';'.join(others)};")
                continue
        kept.append(line)
    if changed:
        _write_lines(mimeapps, kept)
    return changed
