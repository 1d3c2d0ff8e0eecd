"""Unit tests for the device.* and system.notify handlers (real values, no processes)."""

from __future__ import annotations

import platform
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop import __version__
from openclaw_desktop.node.handlers import device
from openclaw_desktop.node.handlers.device import STATUS_SECTIONS, device_info, device_status

# ---------------------------------------------------------------- device.status

EXPECTED_KEYS = ["battery", "thermal", "storage", "network", "uptimeSeconds"]
assert len(EXPECTED_KEYS) == len(STATUS_SECTIONS)


async def test_status_returns_every_section_with_real_values() -> None:
    """Without params every section is present and holds plausible values of this machine."""
    result = await device_status(None)
    assert result.ok is True
    status = result.payload
    assert list(status) == [*EXPECTED_KEYS, "collectedAt"]
    assert set(status["battery"]) == {"present", "level", "state", "lowPowerModeEnabled"}
    assert isinstance(status["battery"]["present"], bool)
    assert status["battery"]["state"] in ("charging", "full", "unplugged", "unknown")
    assert status["thermal"]["state"] in ("nominal", "fair", "serious", "critical", "unknown")
    storage = status["storage"]
    assert storage["totalBytes"] == shutil.disk_usage(Path.home()).total
    assert 0 <= storage["freeBytes"] <= storage["totalBytes"]
    assert storage["usedBytes"] <= storage["totalBytes"]
    assert status["uptimeSeconds"] > 0
    network = status["network"]
    names = [i["name"] for i in network["details"]]
    assert names == [name for _, name in socket.if_nameindex() if name != "lo"]
    assert network["status"] == ("satisfied" if network["interfaces"] else "unsatisfied")
    assert set(network["interfaces"]) <= {"wifi", "cellular", "wired", "other"}
    assert network["isExpensive"] is ("cellular" in network["interfaces"])


@pytest.mark.parametrize("params", [{}, {"sections": None}, {"other": 1}])
async def test_status_params_without_sections_mean_all(params: dict[str, Any]) -> None:
    """An object without sections asks for everything."""
    result = await device_status(params)
    assert list(result.payload) == [*EXPECTED_KEYS, "collectedAt"]


async def test_status_sections_are_returned_in_canonical_order() -> None:
    """Asking for a subset gives just those sections, in the documented order."""
    result = await device_status({"sections": ["uptime", "battery", "uptime"]})
    assert result.ok is True
    assert list(result.payload) == ["battery", "uptimeSeconds", "collectedAt"]


async def test_status_rejects_unknown_sections() -> None:
    """Unknown section names are listed back with the known ones."""
    result = await device_status({"sections": ["battery", "gpu", "bluetooth"]})
    assert result.error_code == "INVALID_REQUEST"
    assert result.error_message == (
        "INVALID_REQUEST: unknown sections bluetooth, gpu; "
        "known: battery, thermal, storage, network, uptime"
    )


@pytest.mark.parametrize("sections", ["battery", {"battery": True}, [1], ["battery", None], 5])
async def test_status_rejects_malformed_sections(sections: Any) -> None:
    """sections must be a list of strings."""
    result = await device_status({"sections": sections})
    assert result.error_message == "INVALID_REQUEST: sections must be a list of names"


@pytest.mark.parametrize("params", [["battery"], "battery", 3, True])
async def test_status_rejects_non_object_params(params: Any) -> None:
    """params, when given, must be an object."""
    result = await device_status(params)
    assert result.error_message == "INVALID_REQUEST: params must be an object"


def write(path: Path, text: str) -> None:
    """Create a sysfs-like file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


async def test_battery_and_thermal_are_read_from_sysfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A battery and thermal zones under /sys give level, state and the hottest zone."""
    write(tmp_path / "class/power_supply/AC/type", "Mains")
    write(tmp_path / "class/power_supply/BAT0/type", "Battery")
    write(tmp_path / "class/power_supply/BAT0/capacity", "87")
    write(tmp_path / "class/power_supply/BAT0/status", "Discharging")
    write(tmp_path / "class/thermal/thermal_zone0/temp", "45000")
    write(tmp_path / "class/thermal/thermal_zone1/temp", "72049")
    write(tmp_path / "class/thermal/thermal_zone2/temp", "garbage")
    monkeypatch.setattr(device, "_SYS", tmp_path)
    result = await device_status({"sections": ["battery", "thermal"]})
    result.payload.pop("collectedAt")
    assert result.payload == {
        "battery": {
            "present": True,
            "level": 0.87,
            "state": "unplugged",
            "lowPowerModeEnabled": False,
        },
        "thermal": {"state": "fair", "maxCelsius": 72.0},
    }


@pytest.mark.parametrize(
    ("millidegrees", "state"),
    [
        ("-5000", "nominal"),
        ("69999", "nominal"),
        ("70000", "fair"),
        ("85000", "serious"),
        ("95000", "critical"),
    ],
)
async def test_thermal_state_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, millidegrees: str, state: str
) -> None:
    """The hottest zone maps to nominal < 70 <= fair < 85 <= serious < 95 <= critical."""
    write(tmp_path / "class/thermal/thermal_zone0/temp", millidegrees)
    monkeypatch.setattr(device, "_SYS", tmp_path)
    result = await device_status({"sections": ["thermal"]})
    assert result.payload["thermal"]["state"] == state


async def test_no_battery_and_no_thermal_zones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A desktop without battery or sensors reports that honestly, not made-up numbers."""
    monkeypatch.setattr(device, "_SYS", tmp_path)
    result = await device_status({"sections": ["battery", "thermal"]})
    result.payload.pop("collectedAt")
    assert result.payload == {
        "battery": {
            "present": False,
            "level": None,
            "state": "unknown",
            "lowPowerModeEnabled": False,
        },
        "thermal": {"state": "unknown", "maxCelsius": None},
    }


@pytest.mark.parametrize(
    ("status", "state"),
    [("Charging", "charging"), ("Full", "full"), ("Not charging", "unplugged"), ("?", "unknown")],
)
async def test_battery_states_use_the_reference_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: str, state: str
) -> None:
    """sysfs battery states map onto charging|full|unplugged|unknown; power-saver is read."""
    write(tmp_path / "class/power_supply/BAT1/type", "Battery")
    write(tmp_path / "class/power_supply/BAT1/status", status)
    write(tmp_path / "firmware/acpi/platform_profile", "low-power")
    monkeypatch.setattr(device, "_SYS", tmp_path)
    battery = (await device_status({"sections": ["battery"]})).payload["battery"]
    assert battery["state"] == state
    assert battery["level"] is None
    assert battery["lowPowerModeEnabled"] is True


async def test_battery_with_unreadable_capacity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A battery without a numeric capacity has level None."""
    write(tmp_path / "class/power_supply/BAT1/type", "Battery")
    write(tmp_path / "class/power_supply/BAT1/capacity", "n/a")
    monkeypatch.setattr(device, "_SYS", tmp_path)
    result = await device_status({"sections": ["battery"]})
    assert result.payload["battery"] == {
        "present": True,
        "level": None,
        "state": "unknown",
        "lowPowerModeEnabled": False,
    }


# ---------------------------------------------------------------- device.info


async def test_device_info_fields() -> None:
    """device.info reports this machine's name, OS and our version."""
    result = await device_info(None)
    assert result.ok is True
    info = result.payload
    assert set(info) == {
        "deviceName",
        "modelIdentifier",
        "systemName",
        "systemVersion",
        "appVersion",
        "appBuild",
        "locale",
    }
    assert all(isinstance(v, str) and v for v in info.values())
    assert info["deviceName"] == socket.gethostname()
    assert info["systemName"] == platform.system()
    assert info["appVersion"] == __version__
    assert info["appBuild"] == __version__
    assert "_" not in info["locale"]


async def test_device_info_ignores_params() -> None:
    """device.info takes no params; whatever is passed does not change the answer."""
    assert (await device_info({"x": 1})).payload == (await device_info(None)).payload
