"""Desktop notifications: the freedesktop notification service on Linux (over D-Bus), the
native notification center on macOS and Windows (through desktop-notifier).

Why Linux talks to ``org.freedesktop.Notifications`` directly with dbus-fast instead of going
through desktop-notifier: desktop-notifier catches every send failure and only logs a warning
(the caller cannot tell "shown" from "no daemon"), it keeps one bus connection forever (a new
session bus, or a restarted daemon, is never seen again) and it sets no timeout anywhere (a
hung notification daemon hangs the caller). Here every send opens a short-lived connection to
the bus named by ``DBUS_SESSION_BUS_ADDRESS``, is bounded in time, and fails with a typed
:class:`DeviceError`. On macOS and Windows desktop-notifier is the only practical route to the
native centers, so it is used there, with the same time bound.
"""

from __future__ import annotations

import asyncio
import enum
import html
import logging
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_desktop.devices.dbus_calls import BusError, call, connected
from openclaw_desktop.devices.errors import DeviceError

if TYPE_CHECKING:
    from dbus_fast.aio import MessageBus
    from desktop_notifier import DesktopNotifier

__all__ = [
    "APP_NAME",
    "NOTIFICATIONS_NAME",
    "NOTIFICATIONS_PATH",
    "Notice",
    "Notifier",
    "ServiceStatus",
    "Urgency",
    "session_bus_address",
]

log = logging.getLogger("openclaw.devices.notify")

APP_NAME = "OpenClaw"
NOTIFICATIONS_NAME = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
_DBUS = ("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus")
_GONE_ERRORS = frozenset(
    {"org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner"}
)


#: The installed desktop entry and icon name (``openclaw-desktop desktop install``).
DESKTOP_ENTRY = "openclaw-desktop"


class Urgency(enum.IntEnum):
    """The freedesktop urgency levels (the byte sent in the ``urgency`` hint)."""

    LOW = 0
    NORMAL = 1
    CRITICAL = 2


@dataclass(frozen=True, slots=True)
class Notice:
    """One notification, already validated and cut to size.

    Attributes:
        title: the summary line (non-empty).
        body: the text under it (may be empty).
        urgency: how insistent the notification is.
        silent: ask the service not to play a sound.
    """

    title: str
    body: str = ""
    urgency: Urgency = Urgency.NORMAL
    silent: bool = False


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    """Whether notifications can be shown here, and why not."""

    available: bool
    reason: str = ""


_YES = ServiceStatus(True)


def session_bus_address(environ: Mapping[str, str] | None = None) -> str | None:
    """The D-Bus session bus address: ``DBUS_SESSION_BUS_ADDRESS``, else the systemd default
    ``$XDG_RUNTIME_DIR/bus`` when that socket exists, else None."""
    env = os.environ if environ is None else environ
    address = env.get("DBUS_SESSION_BUS_ADDRESS", "").strip()
    if address:
        return address
    runtime = env.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and Path(runtime, "bus").is_socket():
        return f"unix:path={Path(runtime, 'bus')}"
    return None


def _uses_freedesktop(system: str) -> bool:
    return system not in ("darwin", "win32", "cygwin")


async def _body_is_markup(bus: MessageBus, target: tuple[str, str, str]) -> bool:
    """Whether the service reads the body as markup (capability ``body-markup``). Such a
    service would render an agent's or a model's ``<img src=…>`` or ``<a href=…>`` and may
    fetch it, so the body is escaped for it and sent as it is to every other service."""
    try:
        (capabilities,) = await call(bus, target, "GetCapabilities")
    except BusError:
        return True  # cannot tell: escaping is safe on a markup service, harmless elsewhere
    return isinstance(capabilities, list) and "body-markup" in capabilities


class Notifier:
    """Shows notifications on this desktop.

    Args:
        app_name: the application name the notification service shows.
        send_timeout: seconds one notification may take, connection included.
        probe_timeout: seconds the availability check may take.
        probe_ttl: seconds an availability answer is reused (per bus address).
        system: ``sys.platform`` (tests pass another to exercise a branch).
    """

    def __init__(
        self,
        app_name: str = APP_NAME,
        *,
        send_timeout: float = 5.0,
        probe_timeout: float = 1.0,
        probe_ttl: float = 5.0,
        system: str = sys.platform,
    ) -> None:
        self.app_name = app_name
        self.send_timeout = send_timeout
        self.probe_timeout = probe_timeout
        self.probe_ttl = probe_ttl
        self.system = system
        self._cache: dict[str | None, tuple[float, ServiceStatus]] = {}
        self._native: DesktopNotifier | None = None

    def forget(self) -> None:
        """Drop cached availability answers (the next probe asks the bus again)."""
        self._cache.clear()

    async def probe(self) -> ServiceStatus:
        """Whether a notification service is there. Never raises.

        On Linux: the session bus answers and ``org.freedesktop.Notifications`` has an owner
        or can be started by the bus (activatable). On macOS and Windows: always available.
        """
        if not _uses_freedesktop(self.system):
            return _YES
        address = session_bus_address()
        now = time.monotonic()
        cached = self._cache.get(address)
        if cached is not None and cached[0] > now:
            return cached[1]
        status = await self._probe_bus(address)
        self._cache[address] = (time.monotonic() + self.probe_ttl, status)
        return status

    async def _probe_bus(self, address: str | None) -> ServiceStatus:
        if address is None:
            return ServiceStatus(False, "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set")
        try:
            async with asyncio.timeout(self.probe_timeout), connected(address) as bus:
                (owned,) = await call(bus, _DBUS, "NameHasOwner", "s", [NOTIFICATIONS_NAME])
                if owned:
                    return _YES
                (activatable,) = await call(bus, _DBUS, "ListActivatableNames")
                if NOTIFICATIONS_NAME in activatable:
                    return _YES
        except TimeoutError:
            return ServiceStatus(
                False, f"the D-Bus session bus did not answer in {self.probe_timeout:g} s"
            )
        except Exception as exc:
            return ServiceStatus(False, f"cannot reach the D-Bus session bus: {_describe(exc)}")
        return ServiceStatus(
            False,
            "no notification service on the D-Bus session bus (nothing owns or can start "
            f"{NOTIFICATIONS_NAME}; is a notification daemon such as dunst or mako running?)",
        )

    async def send(self, notice: Notice) -> None:
        """Show one notification.

        Raises:
            DeviceError: ``UNAVAILABLE`` with the reason: no bus, no service, the service
                went away, refused the notification, or did not answer in time.
        """
        if _uses_freedesktop(self.system):
            await self._send_freedesktop(notice)
        else:
            await self._send_native(notice)

    async def _send_freedesktop(self, notice: Notice) -> None:
        from dbus_fast import Variant

        address = session_bus_address()
        if address is None:
            raise DeviceError(
                "UNAVAILABLE", "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set"
            )
        hints = {"urgency": Variant("y", int(notice.urgency))}
        if notice.silent:
            hints["suppress-sound"] = Variant("b", True)
        hints["desktop-entry"] = Variant("s", DESKTOP_ENTRY)
        target = (NOTIFICATIONS_NAME, NOTIFICATIONS_PATH, NOTIFICATIONS_NAME)
        reached = False
        try:
            async with asyncio.timeout(self.send_timeout), connected(address) as bus:
                reached = True
                text = notice.body
                if text and await _body_is_markup(bus, target):
                    text = html.escape(text, quote=False)
                body = [self.app_name, 0, DESKTOP_ENTRY, notice.title, text, [], hints, -1]
                await call(bus, target, "Notify", "susssasa{sv}i", body)
        except TimeoutError:
            self.forget()
            who = "notification service" if reached else "D-Bus session bus"
            raise DeviceError(
                "UNAVAILABLE", f"the {who} did not answer in {self.send_timeout:g} s"
            ) from None
        except BusError as exc:
            self.forget()
            raise DeviceError("UNAVAILABLE", _refusal(exc)) from None
        except Exception as exc:
            self.forget()
            raise DeviceError(
                "UNAVAILABLE", f"cannot reach the D-Bus session bus: {_describe(exc)}"
            ) from None

    async def _send_native(self, notice: Notice) -> None:
        from desktop_notifier import DEFAULT_SOUND, DesktopNotifier
        from desktop_notifier import Urgency as NativeUrgency

        native = {
            Urgency.LOW: NativeUrgency.Low,
            Urgency.NORMAL: NativeUrgency.Normal,
            Urgency.CRITICAL: NativeUrgency.Critical,
        }[notice.urgency]
        if self._native is None:
            self._native = DesktopNotifier(app_name=self.app_name)
        try:
            async with asyncio.timeout(self.send_timeout):
                await self._native.send(
                    title=notice.title,
                    message=notice.body,
                    urgency=native,
                    sound=None if notice.silent else DEFAULT_SOUND,
                )
        except TimeoutError:
            raise DeviceError(
                "UNAVAILABLE",
                f"the notification center did not answer in {self.send_timeout:g} s",
            ) from None


def _refusal(exc: BusError) -> str:
    if exc.name in _GONE_ERRORS:
        return f"the notification service went away ({NOTIFICATIONS_NAME} has no owner any more)"
    if exc.name.startswith("org.freedesktop.DBus.Error.Spawn"):
        return f"the notification service could not be started: {exc}"
    return f"the notification service refused the notification: {exc}"


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
