"""``system.info``'s host facts (gateway.methods.control_ui_host), read from this machine."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

import pytest

from gateway.methods.control_ui_host import system_info_payload

#: The keys the reference's result schema requires (SystemInfoResultSchema).
REQUIRED = {
    "machineName",
    "hostname",
    "platform",
    "release",
    "arch",
    "osLabel",
    "nodeVersion",
    "pid",
    "uptimeMs",
    "cpuCount",
    "memoryTotalBytes",
    "memoryFreeBytes",
}
#: Every key the reference's schema allows (it is a closed object).
ALLOWED = REQUIRED | {
    "lanAddress",
    "port",
    "processInstanceId",
    "cpuModel",
    "loadAverage",
    "eventLoop",
    "processMemory",
    "diskTotalBytes",
    "diskAvailableBytes",
    "diskPath",
    "disks",
    "defaultAgentUtilityModel",
}


def test_this_host_is_described(tmp_path: Path) -> None:
    """Required keys present, none outside the schema, values this machine's."""
    info = system_info_payload(port=18789, state_dir=tmp_path, instance_id="boot-1", uptime_ms=5)
    assert REQUIRED <= set(info) <= ALLOWED
    assert info["hostname"] == socket.gethostname()
    assert info["release"] == platform.release()
    assert info["pid"] == os.getpid() and info["cpuCount"] == os.cpu_count()
    assert (info["port"], info["processInstanceId"], info["uptimeMs"]) == (18789, "boot-1", 5)
    assert info["diskPath"] == str(tmp_path)
    stats = os.statvfs(tmp_path)
    assert info["diskTotalBytes"] == stats.f_blocks * stats.f_frsize
    assert info["disks"][0]["totalBytes"] == info["diskTotalBytes"]
    assert Path(info["disks"][0]["path"]).is_mount()


@pytest.mark.skipif(not Path("/proc/meminfo").is_file(), reason="Linux /proc only")
def test_memory_is_meminfo() -> None:
    """Total and available memory as /proc/meminfo says (what Node's os.* report)."""
    info = system_info_payload(port=None, state_dir=Path("/"), instance_id="b", uptime_ms=0)
    fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    total = int(fields["MemTotal"].split()[0]) * 1024
    assert info["memoryTotalBytes"] == total
    assert 0 < info["memoryFreeBytes"] <= total
    assert "port" not in info


def test_node_only_facts_are_left_out(tmp_path: Path) -> None:
    """No V8 heap or Node event loop is invented; the runtime is named as Python."""
    info = system_info_payload(port=1, state_dir=tmp_path, instance_id="b", uptime_ms=0)
    assert "processMemory" not in info and "eventLoop" not in info
    assert info["nodeVersion"] == f"python {platform.python_version()}"
    assert info["arch"] in {"x64", "arm64", "ia32"} or info["arch"] == platform.machine().lower()


def test_a_missing_state_dir_reports_its_parent_disk(tmp_path: Path) -> None:
    """Before the state dir exists, its parent's file system is measured."""
    info = system_info_payload(port=1, state_dir=tmp_path / "not-yet", instance_id="b", uptime_ms=0)
    assert info["diskPath"] == str(tmp_path / "not-yet")
    assert info["diskTotalBytes"] > 0
