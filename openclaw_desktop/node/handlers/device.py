"""``device.info`` and ``device.status``: real values read from the OS."""

from __future__ import annotations

import asyncio
import locale
import os
import platform
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from openclaw_desktop import __version__
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["STATUS_SECTIONS", "device_info", "device_status"]

STATUS_SECTIONS = ("battery", "thermal", "storage", "network", "uptime")
_SYS = Path("/sys")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _os_version() -> str:
    try:
        release = platform.freedesktop_os_release()
        return release.get("PRETTY_NAME") or release.get("VERSION_ID") or platform.release()
    except OSError:
        return platform.release() or platform.version()


def _model() -> str:
    for name in ("product_name", "board_name"):
        value = _read(_SYS / "class" / "dmi" / "id" / name)
        if value:
            return value
    return platform.machine() or "unknown"


def _info() -> dict[str, Any]:
    lang = locale.getlocale()[0] or os.environ.get("LANG", "").split(".")[0] or "en_US"
    return {
        "deviceName": socket.gethostname(),
        "modelIdentifier": _model(),
        "systemName": platform.system(),
        "systemVersion": _os_version(),
        "appVersion": __version__,
        "appBuild": __version__,
        "locale": lang.replace("_", "-"),
    }


async def device_info(params: Any) -> InvokeResult:
    """``device.info``."""
    return InvokeResult.success(await asyncio.to_thread(_info))


def _battery() -> dict[str, Any]:
    for supply in sorted((_SYS / "class" / "power_supply").glob("*")):
        if _read(supply / "type") != "Battery":
            continue
        capacity = _read(supply / "capacity")
        status = (_read(supply / "status") or "unknown").lower()
        level = int(capacity) / 100 if capacity and capacity.isdigit() else None
        return {"present": True, "level": level, "state": status}
    return {"present": False, "level": None, "state": "unknown"}


def _thermal() -> dict[str, Any]:
    temps: list[float] = []
    for zone in sorted((_SYS / "class" / "thermal").glob("thermal_zone*")):
        raw = _read(zone / "temp")
        if raw and raw.lstrip("-").isdigit():
            temps.append(int(raw) / 1000)
    if not temps:
        return {"state": "unknown", "maxCelsius": None}
    hottest = max(temps)
    state = (
        "nominal"
        if hottest < 70
        else "fair"
        if hottest < 85
        else "serious"
        if hottest < 95
        else "critical"
    )
    return {"state": state, "maxCelsius": round(hottest, 1)}


def _storage() -> dict[str, Any]:
    usage = shutil.disk_usage(Path.home())
    return {"totalBytes": usage.total, "freeBytes": usage.free, "usedBytes": usage.used}


def _network() -> dict[str, Any]:
    interfaces: list[dict[str, Any]] = []
    for _index, name in socket.if_nameindex():
        state = _read(_SYS / "class" / "net" / name / "operstate") or "unknown"
        interfaces.append({"name": name, "up": state in ("up", "unknown") and name != "lo"})
    online = any(i["up"] for i in interfaces)
    return {"online": online, "interfaces": interfaces}


def _uptime() -> dict[str, Any]:
    raw = _read(Path("/proc/uptime"))
    seconds = float(raw.split()[0]) if raw else time.monotonic()
    return {"seconds": round(seconds, 1)}


_READERS = {
    "battery": _battery,
    "thermal": _thermal,
    "storage": _storage,
    "network": _network,
    "uptime": _uptime,
}


async def device_status(params: Any) -> InvokeResult:
    """``device.status`` with optional ``sections`` (unknown names are rejected)."""
    sections: list[str] = list(STATUS_SECTIONS)
    if isinstance(params, dict) and params.get("sections") is not None:
        wanted = params["sections"]
        if not isinstance(wanted, list) or not all(isinstance(s, str) for s in wanted):
            return InvokeResult.error(
                NodeErrorCode.INVALID_REQUEST, "sections must be a list of names"
            )
        unknown = sorted(set(wanted) - set(STATUS_SECTIONS))
        if unknown:
            return InvokeResult.error(
                NodeErrorCode.INVALID_REQUEST,
                f"unknown sections {', '.join(unknown)}; known: {', '.join(STATUS_SECTIONS)}",
            )
        sections = [s for s in STATUS_SECTIONS if s in wanted]
    elif params is not None and not isinstance(params, dict):
        return InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "params must be an object")

    def read_all() -> dict[str, Any]:
        return {name: _READERS[name]() for name in sections}

    return InvokeResult.success(await asyncio.to_thread(read_all))
