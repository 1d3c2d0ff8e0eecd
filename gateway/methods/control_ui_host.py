"""What ``system.info`` tells about this host: machine, OS, CPU, memory and the disk
holding the state dir, read from the standard library and ``/proc`` (blocking: call it in a
worker thread)."""

from __future__ import annotations

import os
import platform
import socket
import sys
from pathlib import Path
from typing import Any

__all__ = ["system_info_payload"]

#: ``platform.machine()`` names as Node's ``os.arch()`` spells them (the wire's words).
_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "i386": "ia32", "i686": "ia32"}
#: ``sys.platform`` prefixes as Node's ``os.platform()`` spells them.
_PLATFORM = (("linux", "linux"), ("darwin", "darwin"), ("win", "win32"), ("freebsd", "freebsd"))


def _platform() -> str:
    for prefix, name in _PLATFORM:
        if sys.platform.startswith(prefix):
            return name
    return sys.platform


def _meminfo() -> dict[str, int]:
    """``/proc/meminfo`` in bytes (empty where there is none)."""
    out: dict[str, int] = {}
    try:
        lines = Path("/proc/meminfo").read_text("ascii", errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        name, _, rest = line.partition(":")
        fields = rest.split()
        if fields and fields[0].isdigit():
            out[name] = int(fields[0]) * (1024 if fields[1:2] == ["kB"] else 1)
    return out


def _memory() -> tuple[int, int]:
    """(total, free) bytes; free is what can be had without swapping (MemAvailable)."""
    info = _meminfo()
    if "MemTotal" in info:
        return info["MemTotal"], info.get("MemAvailable", info.get("MemFree", 0))
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return page * os.sysconf("SC_PHYS_PAGES"), page * os.sysconf("SC_AVPHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return 0, 0


def _cpu_model() -> str | None:
    try:
        text = Path("/proc/cpuinfo").read_text("utf-8", errors="replace")
    except OSError:
        return platform.processor() or None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "model name" and value.strip():
            return value.strip()
    return platform.processor() or None


def _mount_point(path: Path) -> Path:
    current = path.resolve()
    while not os.path.ismount(current) and current != current.parent:
        current = current.parent
    return current


def _disk(path: Path) -> tuple[int, int] | None:
    """(total, available to us) bytes of the file system holding ``path``."""
    try:
        stats = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    return stats.f_blocks * stats.f_frsize, stats.f_bavail * stats.f_frsize


def system_info_payload(
    *, port: int | None, state_dir: Path, instance_id: str, uptime_ms: int
) -> dict[str, Any]:
    """The ``system.info`` result for this host and gateway process.

    ``nodeVersion`` (required by the wire schema) names this gateway's runtime: Python,
    not Node.js. ``processMemory`` and ``eventLoop`` are left out: their fields are V8's
    heap and Node's event loop, which this process does not have.
    """
    hostname = socket.gethostname()
    system, release = platform.system() or _platform(), platform.release()
    total, free = _memory()
    result: dict[str, Any] = {
        "machineName": hostname.split(".")[0] or hostname,
        "hostname": hostname,
        "platform": _platform(),
        "release": release,
        "arch": _ARCH.get(platform.machine().lower(), platform.machine().lower()),
        "osLabel": f"{system} {release}".strip(),
    }
    if port:
        result["port"] = port
    result.update(
        {
            "nodeVersion": f"python {platform.python_version()}",
            "pid": os.getpid(),
            "processInstanceId": instance_id,
            "uptimeMs": uptime_ms,
            "cpuCount": os.cpu_count() or 1,
        }
    )
    model = _cpu_model()
    if model:
        result["cpuModel"] = model
    if hasattr(os, "getloadavg"):
        result["loadAverage"] = [round(v, 2) for v in os.getloadavg()]
    result["memoryTotalBytes"], result["memoryFreeBytes"] = total, free
    folder = state_dir if state_dir.exists() else state_dir.parent
    disk = _disk(folder)
    if disk is not None and disk[0] > 0:
        result["disks"] = [
            {"path": str(_mount_point(folder)), "totalBytes": disk[0], "availableBytes": disk[1]}
        ]
        result["diskTotalBytes"], result["diskAvailableBytes"] = disk
        result["diskPath"] = str(state_dir)
    result["defaultAgentUtilityModel"] = {"status": "unavailable"}
    return result
