"""``device.apps``: the applications installed here, read from the XDG desktop entries.

Entries are the ``*.desktop`` files under ``applications/`` of ``$XDG_DATA_HOME`` (default
``~/.local/share``) and then each folder of ``$XDG_DATA_DIRS`` (default
``/usr/local/share:/usr/share``); the first file of one desktop-file id wins, as in the
Desktop Entry specification (the id is the path below ``applications/`` with ``/`` as ``-``).
Only ``Type=Application`` entries count; ``Hidden=true`` entries are deleted ones and an
entry whose ``TryExec`` program is not installed is not installed either.

Params, closed as the reference's node host: ``query`` (a non-empty string after trimming,
matched case-insensitively against the label and the id), ``limit`` (an integer, clamped to
1..200, default 100) and ``includeSystem`` (a boolean). Any other key is ``INVALID_REQUEST``.

Result: ``{count, totalMatched, truncated, apps: [{label, id, path, system}]}``, sorted by
label. ``system`` (decision: the reference's macOS meaning, the OS's own apps, has no
Linux counterpart) is an entry the application menu does not show (``NoDisplay=true``:
helpers, URL handlers, settings panels); they are left out unless ``includeSystem``.
"""

from __future__ import annotations

import asyncio
import locale
import math
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec
from openclaw_desktop.node.results import InvokeResult

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "AppsRequest",
    "InstalledApp",
    "apps_area",
    "device_apps",
    "installed_apps",
    "parse_apps_request",
]

DEFAULT_LIMIT = 100
MAX_LIMIT = 200
_KEYS = frozenset({"query", "limit", "includeSystem"})


@dataclass(frozen=True, slots=True)
class InstalledApp:
    """One application as ``device.apps`` lists it."""

    label: str
    id: str
    path: str
    system: bool

    def to_wire(self) -> dict[str, Any]:
        """The result entry."""
        return {"label": self.label, "id": self.id, "path": self.path, "system": self.system}


@dataclass(frozen=True, slots=True)
class AppsRequest:
    """Validated ``device.apps`` params."""

    query: str | None = None
    limit: int = DEFAULT_LIMIT
    include_system: bool = False


def parse_apps_request(params: Any) -> AppsRequest:
    """Validate ``device.apps`` params.

    Raises:
        BadParams: not an object, an unknown key, or a field of the wrong type.
    """
    body = params_object(params)
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise BadParams(
            f"unknown params: {', '.join(unknown)} (allowed: query, limit, includeSystem)"
        )
    query = body.get("query")
    if "query" in body:
        if not isinstance(query, str) or not query.strip():
            raise BadParams("query must be a non-empty string")
        query = query.strip()
    limit = DEFAULT_LIMIT
    if "limit" in body:
        raw = body["limit"]
        if (
            isinstance(raw, bool)
            or not isinstance(raw, int | float)
            or not math.isfinite(raw)
            or raw != int(raw)
        ):
            raise BadParams("limit must be an integer")
        limit = min(MAX_LIMIT, max(1, int(raw)))
    include_system = body.get("includeSystem", False)
    if not isinstance(include_system, bool):
        raise BadParams("includeSystem must be a boolean")
    return AppsRequest(query=query, limit=limit, include_system=include_system)


def _data_dirs(environ: dict[str, str]) -> list[Path]:
    home = environ.get("XDG_DATA_HOME", "").strip()
    first = Path(home) if home else Path.home() / ".local" / "share"
    dirs = environ.get("XDG_DATA_DIRS", "").strip() or "/usr/local/share:/usr/share"
    return [first, *(Path(d) for d in dirs.split(":") if d.strip())]


def _entry_group(path: Path) -> dict[str, str] | None:
    """The ``[Desktop Entry]`` group's keys, or None when the file has none or is unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    keys: dict[str, str] = {}
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            if inside:
                break
            inside = line == "[Desktop Entry]"
            continue
        if inside and "=" in line:
            key, value = line.split("=", 1)
            keys.setdefault(key.strip(), value.strip())
    return keys if inside or keys else None


def _locales() -> list[str]:
    """``Name[...]`` suffixes to try, most specific first (``de_AT``, ``de``)."""
    lang = ""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        lang = os.environ.get(var, "").strip()
        if lang:
            break
    if not lang:
        lang = locale.getlocale()[0] or ""
    lang = lang.split(".")[0].split("@")[0]
    if not lang or lang in ("C", "POSIX"):
        return []
    return list(dict.fromkeys([lang, lang.split("_")[0]]))


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def _app(path: Path, desktop_id: str, suffixes: list[str]) -> InstalledApp | None:
    keys = _entry_group(path)
    if keys is None or keys.get("Type") != "Application" or _true(keys.get("Hidden")):
        return None
    try_exec = keys.get("TryExec")
    if try_exec and shutil.which(try_exec) is None:
        return None
    label = next((keys[f"Name[{s}]"] for s in suffixes if keys.get(f"Name[{s}]")), None)
    label = label or keys.get("Name") or desktop_id.removesuffix(".desktop")
    return InstalledApp(label, desktop_id, str(path), _true(keys.get("NoDisplay")))


def _desktop_files(root: Path) -> Iterator[tuple[str, Path]]:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*.desktop")):
        if path.is_file():
            yield str(path.relative_to(root)).replace(os.sep, "-"), path


def installed_apps(environ: dict[str, str] | None = None) -> list[InstalledApp]:
    """Every installed application, sorted by label (then path). Blocking: file I/O."""
    env = dict(os.environ) if environ is None else environ
    suffixes = _locales()
    seen: set[str] = set()
    apps: list[InstalledApp] = []
    for data_dir in _data_dirs(env):
        for desktop_id, path in _desktop_files(data_dir / "applications"):
            if desktop_id in seen:
                continue
            seen.add(desktop_id)
            app = _app(path, desktop_id, suffixes)
            if app is not None:
                apps.append(app)
    return sorted(apps, key=lambda a: (a.label.casefold(), a.path))


def _matches(app: InstalledApp, request: AppsRequest) -> bool:
    if app.system and not request.include_system:
        return False
    if request.query is None:
        return True
    needle = request.query.casefold()
    return needle in app.label.casefold() or needle in app.id.casefold()


async def device_apps(params: Any) -> InvokeResult:
    """``device.apps``."""
    request = parse_apps_request(params)
    matching = [app for app in await asyncio.to_thread(installed_apps) if _matches(app, request)]
    apps = matching[: request.limit]
    return InvokeResult.success(
        {
            "count": len(apps),
            "totalMatched": len(matching),
            "truncated": len(matching) > len(apps),
            "apps": [app.to_wire() for app in apps],
        }
    )


async def _xdg_desktop() -> Availability:
    if sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return Availability.yes()
    return Availability.no("installed applications are read from XDG desktop entries (Linux, BSD)")


def apps_area(ctx: NodeContext) -> Area:
    """``device.apps``, gated by the installed-apps setting (off by default: the reference's
    ``INSTALLED_APPS_SHARING_DISABLED``)."""
    del ctx
    spec = CommandSpec(
        "device.apps",
        "device",
        availability=_xdg_desktop,
        setting="installed_apps",
        disabled_code="INSTALLED_APPS_SHARING_DISABLED",
        disabled_message="enable Installed applications in Settings",
    )
    return Area((spec,), {"device.apps": device_apps})
