"""This computer's location from GeoClue2 (``org.freedesktop.GeoClue2``) over D-Bus.

GeoClue lives on the system bus of a desktop; the bus is configurable (a test points it at
a private bus carrying a GeoClue-compatible service). One fix is one short-lived client:
connect, ``Manager.CreateClient``, set ``DesktopId`` and ``RequestedAccuracyLevel``,
``Start``, wait for ``LocationUpdated`` (or a ``Location`` already there), read the
``Location`` object, then ``Stop``, ``DeleteClient`` and disconnect. GeoClue ties a client
to its bus connection, so nothing outlives the call.

Failures are :class:`DeviceError` with the reference's codes: ``LOCATION_DISABLED`` (GeoClue
refuses this user or app: location services off, no authorization agent),
``LOCATION_TIMEOUT`` (no fix, or none fresh enough, in time) and ``LOCATION_UNAVAILABLE``
(no bus, no GeoClue, any other failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openclaw_desktop.devices.dbus_calls import BusError, call, connected
from openclaw_desktop.devices.errors import DeviceError

if TYPE_CHECKING:
    from dbus_fast import Message
    from dbus_fast.aio import MessageBus

__all__ = [
    "ACCURACY_LEVELS",
    "DESKTOP_ID",
    "GEOCLUE_NAME",
    "GeoClue",
    "GeoFix",
    "GeoStatus",
]

GEOCLUE_NAME = "org.freedesktop.GeoClue2"
MANAGER_PATH = "/org/freedesktop/GeoClue2/Manager"
MANAGER_IFACE = "org.freedesktop.GeoClue2.Manager"
CLIENT_IFACE = "org.freedesktop.GeoClue2.Client"
LOCATION_IFACE = "org.freedesktop.GeoClue2.Location"
_PROPS = "org.freedesktop.DBus.Properties"
_DBUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")

#: The installed desktop entry's id: GeoClue's authorization agent asks about this app.
DESKTOP_ID = "openclaw-desktop"

#: The reference's accuracy names -> GeoClue's ``GClueAccuracyLevel`` (CITY 4, STREET 6,
#: EXACT 8), as the reference's Linux node host maps them.
ACCURACY_LEVELS = {"coarse": 4, "balanced": 6, "precise": 8}

#: GeoClue reports unknown altitude as -DBL_MAX and unknown speed and heading as -1.
_UNKNOWN_ALTITUDE = -1.0e300

_DISABLED_ERRORS = frozenset(
    {"org.freedesktop.DBus.Error.AccessDenied", "org.freedesktop.DBus.Error.AuthFailed"}
)
_GONE_ERRORS = frozenset(
    {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"}
)


@dataclass(frozen=True, slots=True)
class GeoFix:
    """One position as GeoClue reported it.

    Attributes:
        lat, lon: degrees.
        accuracy_m: radius of uncertainty in metres.
        altitude_m, speed_mps, heading_deg: None when GeoClue does not know them.
        timestamp: seconds since the epoch of the fix.
    """

    lat: float
    lon: float
    accuracy_m: float
    altitude_m: float | None
    speed_mps: float | None
    heading_deg: float | None
    timestamp: float


@dataclass(frozen=True, slots=True)
class GeoStatus:
    """Whether GeoClue can be asked here, and why not."""

    available: bool
    reason: str = ""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError | ConnectionRefusedError):
        return "nothing is listening there"
    return f"{type(exc).__name__}: {exc}"


def _where(address: str | None) -> str:
    return "the D-Bus system bus" if address is None else f"the D-Bus bus at {address}"


def _known(value: Any, unknown_below: float) -> float | None:
    if not isinstance(value, int | float) or not math.isfinite(value) or value < unknown_below:
        return None
    return float(value)


def _fix_from(props: dict[str, Any]) -> GeoFix | None:
    """A fix from a Location object's properties, or None when they are not one."""
    values = {name: getattr(variant, "value", variant) for name, variant in props.items()}
    lat, lon, accuracy = values.get("Latitude"), values.get("Longitude"), values.get("Accuracy")
    if not all(isinstance(v, int | float) and math.isfinite(v) for v in (lat, lon, accuracy)):
        return None
    assert isinstance(lat, int | float) and isinstance(lon, int | float)
    assert isinstance(accuracy, int | float)
    if not (-90 <= lat <= 90 and -180 <= lon <= 180 and accuracy >= 0):
        return None
    stamp = values.get("Timestamp")
    seconds = 0.0
    if isinstance(stamp, list | tuple) and len(stamp) == 2:
        seconds = float(stamp[0]) + float(stamp[1]) / 1_000_000
    return GeoFix(
        lat=float(lat),
        lon=float(lon),
        accuracy_m=float(accuracy),
        altitude_m=_known(values.get("Altitude"), _UNKNOWN_ALTITUDE),
        speed_mps=_known(values.get("Speed"), 0.0),
        heading_deg=_known(values.get("Heading"), 0.0),
        timestamp=seconds if seconds > 0 else time.time(),
    )


class GeoClue:
    """Asks GeoClue2 for this computer's position.

    Args:
        address: the D-Bus address GeoClue is on; None means the system bus.
        desktop_id: the ``DesktopId`` the client announces.
        probe_timeout: seconds the availability check may take.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        desktop_id: str = DESKTOP_ID,
        probe_timeout: float = 2.0,
    ) -> None:
        self.address = address
        self.desktop_id = desktop_id
        self.probe_timeout = probe_timeout

    async def probe(self) -> GeoStatus:
        """Whether GeoClue is on the bus (owned, or activatable). Never raises."""
        where = _where(self.address)
        try:
            async with asyncio.timeout(self.probe_timeout), connected(self.address) as bus:
                (owned,) = await call(bus, _DBUS, "NameHasOwner", "s", [GEOCLUE_NAME])
                if owned:
                    return GeoStatus(True)
                (activatable,) = await call(bus, _DBUS, "ListActivatableNames")
                if GEOCLUE_NAME in activatable:
                    return GeoStatus(True)
        except TimeoutError:
            return GeoStatus(False, f"{where} did not answer in {self.probe_timeout:g} s")
        except Exception as exc:
            return GeoStatus(False, f"cannot reach {where}: {_describe(exc)}")
        return GeoStatus(
            False, f"GeoClue2 is not on {where} (nothing owns or can start {GEOCLUE_NAME})"
        )

    async def locate(
        self, accuracy_level: int, timeout_s: float, max_age_s: float | None = None
    ) -> GeoFix:
        """One fix at ``accuracy_level``, no older than ``max_age_s`` (None: any age),
        within ``timeout_s``.

        Raises:
            DeviceError: ``LOCATION_DISABLED``, ``LOCATION_TIMEOUT`` or
                ``LOCATION_UNAVAILABLE`` with the reason.
        """
        where = _where(self.address)
        try:
            async with asyncio.timeout(timeout_s), connected(self.address) as bus:
                return await self._locate_on(bus, accuracy_level, max_age_s)
        except TimeoutError:
            raise DeviceError("LOCATION_TIMEOUT", "no fix in time") from None
        except BusError as exc:
            if exc.name in _DISABLED_ERRORS:
                raise DeviceError(
                    "LOCATION_DISABLED", f"GeoClue location services are disabled ({exc})"
                ) from None
            if exc.name in _GONE_ERRORS:
                raise DeviceError("LOCATION_UNAVAILABLE", f"GeoClue2 is not on {where}") from None
            raise DeviceError("LOCATION_UNAVAILABLE", f"GeoClue2 failed: {exc}") from None
        except DeviceError:
            raise
        except Exception as exc:
            raise DeviceError(
                "LOCATION_UNAVAILABLE", f"cannot reach {where}: {_describe(exc)}"
            ) from None

    async def _locate_on(
        self, bus: MessageBus, accuracy_level: int, max_age_s: float | None
    ) -> GeoFix:
        from dbus_fast import Variant

        manager = (GEOCLUE_NAME, MANAGER_PATH, MANAGER_IFACE)
        (client_path,) = await call(bus, manager, "CreateClient")
        props = (GEOCLUE_NAME, client_path, _PROPS)
        client = (GEOCLUE_NAME, client_path, CLIENT_IFACE)
        updates: asyncio.Queue[str] = asyncio.Queue()

        def on_message(message: Message) -> None:
            if (
                message.member == "LocationUpdated"
                and message.interface == CLIENT_IFACE
                and message.path == client_path
                and len(message.body) == 2
            ):
                updates.put_nowait(str(message.body[1]))

        rule = (
            f"type='signal',sender='{GEOCLUE_NAME}',interface='{CLIENT_IFACE}',"
            f"member='LocationUpdated',path='{client_path}'"
        )
        bus.add_message_handler(on_message)
        try:
            await call(bus, _DBUS, "AddMatch", "s", [rule])
            await call(
                bus, props, "Set", "ssv", [CLIENT_IFACE, "DesktopId", Variant("s", self.desktop_id)]
            )
            await call(
                bus,
                props,
                "Set",
                "ssv",
                [CLIENT_IFACE, "RequestedAccuracyLevel", Variant("u", accuracy_level)],
            )
            await call(bus, client, "Start")
            try:
                (current,) = await call(bus, props, "Get", "ss", [CLIENT_IFACE, "Location"])
                location_path = str(getattr(current, "value", current))
                while True:
                    if location_path not in ("", "/"):
                        fix = await self._read_fix(bus, location_path)
                        if fix is not None and _fresh(fix, max_age_s):
                            return fix
                    location_path = await updates.get()
            finally:
                with contextlib.suppress(Exception):
                    await call(bus, client, "Stop")
                with contextlib.suppress(Exception):
                    await call(bus, manager, "DeleteClient", "o", [client_path])
        finally:
            bus.remove_message_handler(on_message)

    async def _read_fix(self, bus: MessageBus, location_path: str) -> GeoFix | None:
        target = (GEOCLUE_NAME, location_path, _PROPS)
        (props,) = await call(bus, target, "GetAll", "s", [LOCATION_IFACE])
        return _fix_from(props) if isinstance(props, dict) else None


#: GeoClue's timestamps are whole seconds in practice; a fix is still fresh within that.
_TIMESTAMP_RESOLUTION_S = 1.0


def _fresh(fix: GeoFix, max_age_s: float | None) -> bool:
    if max_age_s is None:
        return True
    age = time.time() - fix.timestamp
    return -_TIMESTAMP_RESOLUTION_S < age < max_age_s + _TIMESTAMP_RESOLUTION_S
