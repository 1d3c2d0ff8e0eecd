"""location.get through a real private dbus-daemon and a real GeoClue2-compatible service:
a fix, the accuracy levels asked for, GeoClue refusing (disabled), no fix in time, a fix too
old for maxAgeMs, no GeoClue on the bus, the setting off, and bad params."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.geoclue import DESKTOP_ID, GeoClue
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.location import location_area
from openclaw_desktop.node.registry import CommandRegistry, Surface
from tests.helpers.bundled_gateway import run_desktop_cli
from tests.helpers.desktop_session import (
    dbus_session_fixture,  # noqa: F401 - provides the dbus_session fixture
)
from tests.helpers.geoclue_service import Fix, GeoClueService

pytestmark = pytest.mark.timeout(60)

VIENNA = Fix(48.20849, 16.37208, 12.5, altitude=182.0, speed=0.0, heading=270.0)


def dispatcher_for(address: str | None, enabled: bool = True) -> InvokeDispatcher:
    """A dispatcher over the location area alone, GeoClue on the bus at ``address``."""
    settings = NodeSettings(location=enabled, location_bus=address)
    area = location_area(NodeContext(settings=lambda: settings))
    return InvokeDispatcher(CommandRegistry(area.specs), area.handlers, settings.toggles)


async def test_a_fix_comes_back_in_the_reference_shape(dbus_session: str) -> None:
    """Every field of the fix, the ISO timestamp, isPrecise and source; the client is
    announced with our desktop id, asked for the default (balanced) level, then stopped."""
    stamp = time.time() - 2
    fix = Fix(
        VIENNA.lat, VIENNA.lon, 12.5, altitude=182.0, speed=0.0, heading=270.0, timestamp=stamp
    )
    async with GeoClueService.running(dbus_session, fix=fix) as service:
        result = await dispatcher_for(dbus_session).dispatch("location.get", {})
    assert result.ok, result
    payload = result.payload
    assert payload == {
        "lat": 48.20849,
        "lon": 16.37208,
        "accuracyMeters": 12.5,
        "altitudeMeters": 182.0,
        "speedMps": 0.0,
        "headingDeg": 270.0,
        "timestamp": payload["timestamp"],
        "isPrecise": True,
        "source": "unknown",
    }
    expected = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(stamp)))
    assert payload["timestamp"].startswith(expected) and payload["timestamp"].endswith("Z")
    assert len(payload["timestamp"]) == len("2026-01-03T12:34:56.000Z")
    state = service.state
    assert state.desktop_ids == [DESKTOP_ID]
    assert state.requested_levels == [6]
    assert state.stopped == state.clients == state.deleted
    assert len(state.clients) == 1


@pytest.mark.parametrize(("accuracy", "level"), [("coarse", 4), ("balanced", 6), ("precise", 8)])
async def test_accuracy_names_become_geoclue_levels(
    dbus_session: str, accuracy: str, level: int
) -> None:
    """desiredAccuracy coarse/balanced/precise asks GeoClue for levels 4/6/8."""
    async with GeoClueService.running(dbus_session, fix=VIENNA) as service:
        params = {"desiredAccuracy": accuracy, "timeoutMs": 5000}
        result = await dispatcher_for(dbus_session).dispatch("location.get", params)
    assert result.ok, result
    assert service.state.requested_levels == [level]


async def test_unknown_values_are_left_out_and_a_wide_fix_is_not_precise(
    dbus_session: str,
) -> None:
    """GeoClue's unknown altitude, speed and heading are omitted; 2 km is not precise."""
    async with GeoClueService.running(dbus_session, fix=Fix(1.5, -2.25, 2000.0)):
        result = await dispatcher_for(dbus_session).dispatch("location.get", None)
    assert result.ok, result
    assert set(result.payload) == {
        "lat",
        "lon",
        "accuracyMeters",
        "timestamp",
        "isPrecise",
        "source",
    }
    assert (result.payload["lat"], result.payload["lon"]) == (1.5, -2.25)
    assert result.payload["isPrecise"] is False


async def test_geoclue_refusing_the_user_is_location_disabled(dbus_session: str) -> None:
    """GeoClue's AccessDenied (location services off) is LOCATION_DISABLED."""
    async with GeoClueService.running(dbus_session, mode="disabled"):
        result = await dispatcher_for(dbus_session).dispatch("location.get", {})
    assert (result.ok, result.error_code) == (False, "LOCATION_DISABLED")
    assert result.error_message is not None
    assert "GeoClue location services are disabled" in result.error_message


async def test_no_fix_in_time_is_location_timeout(dbus_session: str) -> None:
    """No LocationUpdated: LOCATION_TIMEOUT after the (clamped, 1 s) timeoutMs, and the
    client is still stopped and deleted."""
    async with GeoClueService.running(dbus_session, mode="no_fix") as service:
        started = time.monotonic()
        result = await dispatcher_for(dbus_session).dispatch("location.get", {"timeoutMs": 10})
        elapsed = time.monotonic() - started
    assert (result.ok, result.error_code) == (False, "LOCATION_TIMEOUT")
    assert result.error_message == "LOCATION_TIMEOUT: no fix in time"
    assert 0.9 <= elapsed < 5
    assert service.state.clients and service.state.requested_levels == [6]


async def test_a_fix_older_than_max_age_is_not_answered(dbus_session: str) -> None:
    """A 10-minute-old fix: answered without maxAgeMs, LOCATION_TIMEOUT with maxAgeMs 15 s."""
    old = Fix(10.0, 20.0, 30.0, timestamp=time.time() - 600)
    async with GeoClueService.running(dbus_session, fix=old):
        any_age = await dispatcher_for(dbus_session).dispatch("location.get", {})
        fresh = await dispatcher_for(dbus_session).dispatch(
            "location.get", {"maxAgeMs": 15_000, "timeoutMs": 1000}
        )
        ignored = await dispatcher_for(dbus_session).dispatch(
            "location.get", {"maxAgeMs": -1, "timeoutMs": 1000}
        )
    assert any_age.ok and any_age.payload["lat"] == 10.0
    assert (fresh.ok, fresh.error_code) == (False, "LOCATION_TIMEOUT")
    assert ignored.ok, "a negative maxAgeMs means any age, as on the reference"


async def test_no_geoclue_on_the_bus_is_not_advertised(dbus_session: str) -> None:
    """Without the service the command is unavailable: not advertised, and refused at invoke
    with LOCATION_UNAVAILABLE (the spec's code), as the adapter itself says."""
    dispatcher = dispatcher_for(dbus_session)
    surface = Surface.from_entries(await dispatcher.registry.survey({"location": True}))
    assert "location.get" not in surface.commands
    assert surface.permissions == {"location": False}
    result = await dispatcher.dispatch("location.get", {})
    assert (result.ok, result.error_code) == (False, "LOCATION_UNAVAILABLE")
    assert result.error_message is not None and "GeoClue2 is not on" in result.error_message
    with pytest.raises(DeviceError) as caught:
        await GeoClue(dbus_session).locate(6, 2.0)
    assert caught.value.code == "LOCATION_UNAVAILABLE"


async def test_an_unreachable_bus_is_location_unavailable(tmp_path: Path) -> None:
    """A bus address nobody listens on: the probe says why, locate() is LOCATION_UNAVAILABLE."""
    address = f"unix:path={tmp_path / 'no-bus'}"
    status = await GeoClue(address).probe()
    assert not status.available
    assert status.reason == f"cannot reach the D-Bus bus at {address}: nothing is listening there"
    with pytest.raises(DeviceError) as caught:
        await GeoClue(address).locate(6, 2.0)
    assert caught.value.code == "LOCATION_UNAVAILABLE"


async def test_the_setting_off_is_location_disabled_and_geoclue_is_not_asked(
    dbus_session: str,
) -> None:
    """Off by default: LOCATION_DISABLED as the reference words it, no client created."""
    async with GeoClueService.running(dbus_session, fix=VIENNA) as service:
        dispatcher = dispatcher_for(dbus_session, enabled=False)
        result = await dispatcher.dispatch("location.get", {})
        surface = Surface.from_entries(await dispatcher.registry.survey(NodeSettings().toggles()))
    assert (result.ok, result.error_code) == (False, "LOCATION_DISABLED")
    assert result.error_message == "LOCATION_DISABLED: enable Location in Settings"
    assert service.state.clients == []
    assert "location.get" not in surface.commands
    assert NodeSettings().location is False


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ("nope", "params"),
        ([1, 2], "params"),
        ({"timeoutMs": "soon"}, "timeoutMs"),
        ({"timeoutMs": True}, "timeoutMs"),
        ({"maxAgeMs": {}}, "maxAgeMs"),
        ({"desiredAccuracy": "exact"}, "desiredAccuracy"),
        ({"desiredAccuracy": 8}, "desiredAccuracy"),
    ],
)
async def test_bad_params_are_invalid_request_and_geoclue_is_not_asked(
    dbus_session: str, params: Any, field: str
) -> None:
    """Each malformed request gets INVALID_REQUEST naming its field, before any D-Bus call."""
    async with GeoClueService.running(dbus_session, fix=VIENNA) as service:
        result = await dispatcher_for(dbus_session).dispatch("location.get", params)
    assert (result.ok, result.error_code) == (False, "INVALID_REQUEST")
    assert result.error_message is not None and field in result.error_message
    assert service.state.clients == []


async def test_doctor_shows_location_from_the_configured_bus(
    dbus_session: str, tmp_path: Path
) -> None:
    """``openclaw-desktop doctor`` reports location.get available once GeoClue is on the
    configured bus (enabled, so advertised), and why not when nothing answers there."""
    home = tmp_path / "home"
    store = SettingsStore(home / "config" / "settings.json")
    store.save(Settings(node=NodeSettings(location=True, location_bus=dbus_session)))

    def location_line() -> str:
        out = run_desktop_cli(home, "doctor").stdout
        (line,) = [ln for ln in out.splitlines() if ln.strip().startswith("location.get")]
        return line

    async with GeoClueService.running(dbus_session, fix=VIENNA) as service:
        line = await asyncio.to_thread(location_line)
    assert line.split() == [
        "location.get",
        "available:",
        "yes;",
        "enabled:",
        "yes;",
        "advertised:",
        "yes",
    ]
    assert service.state.clients == [], "doctor only looks, it asks for no fix"
    store.set("node.location_bus", f"unix:path={tmp_path / 'nobody'}")
    line = await asyncio.to_thread(location_line)
    assert "available: no (cannot reach the D-Bus bus at unix:path=" in line
    assert "nothing is listening there" in line and line.endswith("advertised: no")
