"""A small, real GeoClue2-compatible D-Bus service for tests.

It owns ``org.freedesktop.GeoClue2`` on a (private) bus and implements the parts of
GeoClue's interfaces a client uses: ``Manager.GetClient/CreateClient/DeleteClient``, the
``Client`` object (``DesktopId``, ``RequestedAccuracyLevel``, ``Location``, ``Active``,
``Start``, ``Stop``, signal ``LocationUpdated``) and ``Location`` objects (``Latitude``,
``Longitude``, ``Accuracy``, ``Altitude``, ``Speed``, ``Heading``, ``Description``,
``Timestamp``), with GeoClue's conventions (unknown altitude -DBL_MAX, unknown speed and
heading -1, ``Start`` refused until ``DesktopId`` is set).

Modes: ``fix`` (a ``LocationUpdated`` shortly after ``Start``), ``no_fix`` (``Start``
succeeds, no position ever comes) and ``disabled`` (``CreateClient`` is refused with
``AccessDenied``, as GeoClue does when location services are off for the user).

Usage (inside the test's event loop)::

    async with GeoClueService.running(address, fix=Fix(48.2, 16.37, 12.5)) as service:
        ...
        assert service.requested_levels == [6]
"""

# No ``from __future__ import annotations``: dbus-fast reads the D-Bus signatures from the
# annotations at class creation.
import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Annotated

from dbus_fast.aio import MessageBus
from dbus_fast.annotations import (
    DBusBool,
    DBusDouble,
    DBusObjectPath,
    DBusSignature,
    DBusStr,
    DBusUInt32,
)
from dbus_fast.constants import PropertyAccess
from dbus_fast.errors import DBusError
from dbus_fast.service import ServiceInterface, dbus_method, dbus_property, dbus_signal

from tests.helpers.dbus_service import own_name, release

__all__ = ["NAME", "Fix", "GeoClueService"]

NAME = "org.freedesktop.GeoClue2"
MANAGER_PATH = "/org/freedesktop/GeoClue2/Manager"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
UNKNOWN_ALTITUDE = -sys.float_info.max

_Timestamp = Annotated[list[int], DBusSignature("(tt)")]
_Paths = Annotated[list[str], DBusSignature("oo")]


@dataclass(frozen=True)
class Fix:
    """The position the service reports (None: GeoClue's "unknown" value)."""

    lat: float
    lon: float
    accuracy: float
    altitude: float | None = None
    speed: float | None = None
    heading: float | None = None
    #: Seconds since the epoch; None means "now" at the moment of the fix.
    timestamp: float | None = None


@dataclass
class _State:
    mode: str = "fix"
    fix: Fix | None = None
    delay: float = 0.05
    desktop_ids: list[str] = field(default_factory=list)
    requested_levels: list[int] = field(default_factory=list)
    clients: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    locations: int = 0


class _Location(ServiceInterface):
    def __init__(self, fix: Fix) -> None:
        super().__init__("org.freedesktop.GeoClue2.Location")
        self._fix = fix
        stamp = time.time() if fix.timestamp is None else fix.timestamp
        self._stamp = [int(stamp), int((stamp % 1) * 1_000_000)]

    @dbus_property(access=PropertyAccess.READ)
    def Latitude(self) -> DBusDouble:  # noqa: N802 - D-Bus names
        return self._fix.lat

    @dbus_property(access=PropertyAccess.READ)
    def Longitude(self) -> DBusDouble:  # noqa: N802
        return self._fix.lon

    @dbus_property(access=PropertyAccess.READ)
    def Accuracy(self) -> DBusDouble:  # noqa: N802
        return self._fix.accuracy

    @dbus_property(access=PropertyAccess.READ)
    def Altitude(self) -> DBusDouble:  # noqa: N802
        return UNKNOWN_ALTITUDE if self._fix.altitude is None else self._fix.altitude

    @dbus_property(access=PropertyAccess.READ)
    def Speed(self) -> DBusDouble:  # noqa: N802
        return -1.0 if self._fix.speed is None else self._fix.speed

    @dbus_property(access=PropertyAccess.READ)
    def Heading(self) -> DBusDouble:  # noqa: N802
        return -1.0 if self._fix.heading is None else self._fix.heading

    @dbus_property(access=PropertyAccess.READ)
    def Description(self) -> DBusStr:  # noqa: N802
        return "test fix"

    @dbus_property(access=PropertyAccess.READ)
    def Timestamp(self) -> _Timestamp:  # noqa: N802
        return list(self._stamp)


class _Client(ServiceInterface):
    def __init__(self, service: "GeoClueService", path: str) -> None:
        super().__init__("org.freedesktop.GeoClue2.Client")
        self._service = service
        self._path = path
        self._desktop_id = ""
        self._level = 0
        self._location = "/"
        self._active = False
        self._distance = 0
        self._time = 0
        self._pending: asyncio.TimerHandle | None = None

    @dbus_property(access=PropertyAccess.READ)
    def Location(self) -> DBusObjectPath:  # noqa: N802
        return self._location

    @dbus_property()
    def DesktopId(self) -> DBusStr:  # noqa: N802
        return self._desktop_id

    @DesktopId.setter  # type: ignore[no-redef]
    def DesktopId(self, value: DBusStr) -> None:  # noqa: N802
        self._desktop_id = value
        self._service.state.desktop_ids.append(value)

    @dbus_property()
    def RequestedAccuracyLevel(self) -> DBusUInt32:  # noqa: N802
        return self._level

    @RequestedAccuracyLevel.setter  # type: ignore[no-redef]
    def RequestedAccuracyLevel(self, value: DBusUInt32) -> None:  # noqa: N802
        self._level = value
        self._service.state.requested_levels.append(value)

    @dbus_property()
    def DistanceThreshold(self) -> DBusUInt32:  # noqa: N802
        return self._distance

    @DistanceThreshold.setter  # type: ignore[no-redef]
    def DistanceThreshold(self, value: DBusUInt32) -> None:  # noqa: N802
        self._distance = value

    @dbus_property()
    def TimeThreshold(self) -> DBusUInt32:  # noqa: N802
        return self._time

    @TimeThreshold.setter  # type: ignore[no-redef]
    def TimeThreshold(self, value: DBusUInt32) -> None:  # noqa: N802
        self._time = value

    @dbus_property(access=PropertyAccess.READ)
    def Active(self) -> DBusBool:  # noqa: N802
        return self._active

    @dbus_method()
    def Start(self) -> None:  # noqa: N802
        if not self._desktop_id:
            raise DBusError(ACCESS_DENIED, "'DesktopId' property must be set")
        self._active = True
        state = self._service.state
        if state.mode == "fix" and state.fix is not None:
            loop = asyncio.get_running_loop()
            self._pending = loop.call_later(state.delay, self._deliver, state.fix)

    @dbus_method()
    def Stop(self) -> None:  # noqa: N802
        self._active = False
        if self._pending is not None:
            self._pending.cancel()
        self._service.state.stopped.append(self._path)

    def _deliver(self, fix: Fix) -> None:
        new = self._service.export_location(fix)
        old, self._location = self._location, new
        self.LocationUpdated(old, new)

    @dbus_signal()
    def LocationUpdated(self, old: DBusObjectPath, new: DBusObjectPath) -> _Paths:  # noqa: N802
        return [old, new]


class _Manager(ServiceInterface):
    def __init__(self, service: "GeoClueService") -> None:
        super().__init__("org.freedesktop.GeoClue2.Manager")
        self._service = service

    @dbus_method()
    def GetClient(self) -> DBusObjectPath:  # noqa: N802
        return self._service.new_client()

    @dbus_method()
    def CreateClient(self) -> DBusObjectPath:  # noqa: N802
        return self._service.new_client()

    @dbus_method()
    def DeleteClient(self, client: DBusObjectPath) -> None:  # noqa: N802
        self._service.state.deleted.append(client)

    @dbus_property(access=PropertyAccess.READ)
    def InUse(self) -> DBusBool:  # noqa: N802
        return False

    @dbus_property(access=PropertyAccess.READ)
    def AvailableAccuracyLevel(self) -> DBusUInt32:  # noqa: N802
        return 8


class GeoClueService:
    """The service; :meth:`running` starts and stops it.

    Attributes:
        state: what clients asked for (``desktop_ids``, ``requested_levels``, ``clients``,
            ``stopped``, ``deleted``) and how the service answers (``mode``, ``fix``).
    """

    def __init__(self, address: str, *, mode: str = "fix", fix: Fix | None = None) -> None:
        if mode not in ("fix", "no_fix", "disabled"):
            raise ValueError(f"unknown mode {mode!r}")
        self.address = address
        self.state = _State(mode=mode, fix=fix)
        self._bus: MessageBus | None = None

    def new_client(self) -> str:
        """A new client object (or GeoClue's refusal in ``disabled`` mode)."""
        if self.state.mode == "disabled":
            raise DBusError(ACCESS_DENIED, "Geolocation disabled for UID 1000")
        assert self._bus is not None
        path = f"/org/freedesktop/GeoClue2/Client/{len(self.state.clients) + 1}"
        self.state.clients.append(path)
        self._bus.export(path, _Client(self, path))
        return path

    def export_location(self, fix: Fix) -> str:
        """A new Location object for ``fix``; its path."""
        assert self._bus is not None
        self.state.locations += 1
        path = f"/org/freedesktop/GeoClue2/Location/{self.state.locations}"
        self._bus.export(path, _Location(fix))
        return path

    async def start(self) -> None:
        """Connect and own :data:`NAME`."""
        self._bus = await own_name(self.address, NAME, {MANAGER_PATH: _Manager(self)})

    async def stop(self) -> None:
        """Release the name and disconnect (bounded)."""
        bus, self._bus = self._bus, None
        if bus is not None:
            await release(bus, NAME)

    @classmethod
    @contextlib.asynccontextmanager
    async def running(
        cls, address: str, *, mode: str = "fix", fix: Fix | None = None
    ) -> "AsyncIterator[GeoClueService]":
        """Run a service on the bus at ``address`` for the ``async with`` block."""
        service = cls(address, mode=mode, fix=fix)
        await service.start()
        try:
            yield service
        finally:
            await service.stop()
