"""``device.info`` and ``device.status``: real values read from the OS.

``device.status`` has the Android app's field names (battery ``level``/``state``/
``lowPowerModeEnabled``, thermal ``state``, storage bytes, network ``status``/``interfaces``,
``uptimeSeconds``) plus Windows' ``sections`` filter and ``collectedAt``; values that this
machine cannot tell are ``null`` or ``"unknown"``, never made up.
"""

from __future__ import annotations

import asyncio
import locale
import os
import platform
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openclaw_desktop import __version__
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.registry import CommandSpec
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["STATUS_SECTIONS", "device_area", "device_info", "device_status"]

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


_BATTERY_STATES = {
    "charging": "charging",
    "full": "full",
    "discharging": "unplugged",
    "not charging": "unplugged",
}


def _low_power() -> bool:
    profile = _read(_SYS / "firmware" / "acpi" / "platform_profile")
    return profile in ("low-power", "quiet")


def _battery() -> dict[str, Any]:
    """The reference's battery block: level 0..1, state charging|full|unplugged|unknown."""
    for supply in sorted((_SYS / "class" / "power_supply").glob("*")):
        if _read(supply / "type") != "Battery":
            continue
        capacity = _read(supply / "capacity")
        status = (_read(supply / "status") or "unknown").lower()
        level = int(capacity) / 100 if capacity and capacity.isdigit() else None
        return {
            "present": True,
            "level": level,
            "state": _BATTERY_STATES.get(status, "unknown"),
            "lowPowerModeEnabled": _low_power(),
        }
    return {
        "present": False,
        "level": None,
        "state": "unknown",
        "lowPowerModeEnabled": _low_power(),
    }


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


def _interface_type(name: str) -> str:
    base = _SYS / "class" / "net" / name
    if (base / "wireless").exists() or (base / "phy80211").exists():
        return "wifi"
    if name.startswith(("wwan", "rmnet")):
        return "cellular"
    if (base / "device").exists():
        return "wired"
    return "other"


def _network() -> dict[str, Any]:
    """The reference's network block (status, isExpensive, isConstrained, interface types),
    plus each interface by name."""
    details: list[dict[str, Any]] = []
    for _index, name in socket.if_nameindex():
        if name == "lo":
            continue
        state = _read(_SYS / "class" / "net" / name / "operstate") or "unknown"
        up = state in ("up", "unknown")
        details.append({"name": name, "type": _interface_type(name), "up": up})
    kinds = list(dict.fromkeys(d["type"] for d in details if d["up"]))
    return {
        "status": "satisfied" if kinds else "unsatisfied",
        "isExpensive": "cellular" in kinds,
        "isConstrained": False,
        "interfaces": kinds,
        "details": details,
    }


def _uptime() -> float:
    raw = _read(Path("/proc/uptime"))
    seconds = float(raw.split()[0]) if raw else time.monotonic()
    return round(seconds, 1)


_READERS: dict[str, Callable[[], Any]] = {
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
        # "uptime" is the reference's top-level ``uptimeSeconds``; the others are blocks.
        status: dict[str, Any] = {}
        for name in sections:
            key = "uptimeSeconds" if name == "uptime" else name
            status[key] = _READERS[name]()
        status["collectedAt"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return status

    return InvokeResult.success(await asyncio.to_thread(read_all))


def device_area(ctx: NodeContext) -> Area:
    """``device.info`` and ``device.status``: always available, nothing private."""
    del ctx
    return Area(
        (CommandSpec("device.info", "device"), CommandSpec("device.status", "device")),
        {"device.info": device_info, "device.status": device_status},
    )
