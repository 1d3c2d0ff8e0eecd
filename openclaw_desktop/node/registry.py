"""The node's command table: one spec per command, from which both the advertised surface
(``caps``, ``commands``, ``permissions``) and the invoke-time gates are derived, so the two
can never disagree.

Three narrowings, in order: what this machine can do (each spec's availability probe), what
the user enabled (its setting), and both again at invoke time (the dispatcher re-probes).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "Availability",
    "CommandRegistry",
    "CommandSpec",
    "Probe",
    "Surface",
    "SurfaceEntry",
    "always_available",
]


@dataclass(frozen=True, slots=True)
class Availability:
    """Whether this machine can run a command, and why not."""

    available: bool
    reason: str = ""

    @classmethod
    def yes(cls) -> Availability:
        """Available."""
        return cls(True)

    @classmethod
    def no(cls, reason: str) -> Availability:
        """Not available, with the reason shown by ``doctor``."""
        return cls(False, reason)


#: An availability check. Probes are async because some ask a service (D-Bus) and must not
#: block the loop; several specs usually share one probe, which is then run once per check.
Probe = Callable[[], Awaitable[Availability]]

#: How long one availability check may take before its commands count as unavailable: a
#: device layer that hangs (a wedged sound server) must not keep the node from connecting.
PROBE_TIMEOUT_S = 8.0

log = logging.getLogger("openclaw.node")


async def _bounded_probe(probe: Probe) -> Availability:
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            return await probe()
    except TimeoutError:
        name = getattr(probe, "__qualname__", repr(probe))
        log.warning("availability check %s did not answer in %g s", name, PROBE_TIMEOUT_S)
        return Availability.no(f"the check did not answer within {PROBE_TIMEOUT_S:g} s")


async def always_available() -> Availability:
    """The probe of commands that need nothing but this process."""
    return Availability.yes()


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One node command.

    Attributes:
        name: the wire command (``device.info``).
        capability: the ``caps`` category it belongs to (``device``).
        availability: what this machine can do (camera present, D-Bus answers, ...).
        setting: the user setting that enables it, or None when always on.
        permission: the ``permissions`` key advertised for it, if any.
        needs_presence: it only runs while the user is at the computer (session unlocked):
            a camera or screen capture of an unattended machine is refused.
        disabled_code: the error code when the setting is off (``CAMERA_DISABLED``); the
            default is ``NOT_AUTHORIZED``.
        disabled_message: the text after the code when the setting is off.
        unavailable_code: the error code when this machine cannot run it at invoke time
            (``LOCATION_UNAVAILABLE``); the default is ``UNAVAILABLE``.
    """

    name: str
    capability: str
    availability: Probe = always_available
    setting: str | None = None
    permission: str | None = None
    needs_presence: bool = False
    disabled_code: str = "NOT_AUTHORIZED"
    disabled_message: str = ""
    unavailable_code: str = "UNAVAILABLE"


@dataclass(frozen=True, slots=True)
class SurfaceEntry:
    """One command as ``doctor`` reports it."""

    spec: CommandSpec
    availability: Availability
    enabled: bool

    @property
    def advertised(self) -> bool:
        """Available here and enabled by the user."""
        return self.enabled and self.availability.available


class CommandRegistry:
    """The command table, narrowed by availability and by the user's settings."""

    def __init__(self, specs: Iterable[CommandSpec]) -> None:
        self._specs: dict[str, CommandSpec] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"duplicate command spec {spec.name!r}")
            self._specs[spec.name] = spec

    def spec(self, name: str) -> CommandSpec | None:
        """The spec of a command, or None when unknown."""
        return self._specs.get(name)

    @property
    def specs(self) -> list[CommandSpec]:
        """All specs, in declaration order."""
        return list(self._specs.values())

    def enabled(self, spec: CommandSpec, settings: Mapping[str, bool]) -> bool:
        """Whether the user's settings allow the command."""
        return spec.setting is None or bool(settings.get(spec.setting, False))

    async def survey(self, settings: Mapping[str, bool]) -> list[SurfaceEntry]:
        """Probe every distinct availability check once (concurrently) and combine it with
        the settings: the whole surface, advertised or not."""
        probes: dict[Probe, Availability] = {}
        distinct = list(dict.fromkeys(spec.availability for spec in self._specs.values()))
        results = await asyncio.gather(
            *(_bounded_probe(probe) for probe in distinct), return_exceptions=True
        )
        for probe, result in zip(distinct, results, strict=True):
            if isinstance(result, BaseException):
                result = Availability.no(f"the check failed: {type(result).__name__}: {result}")
            probes[probe] = result
        return [
            SurfaceEntry(spec, probes[spec.availability], self.enabled(spec, settings))
            for spec in self._specs.values()
        ]

    async def surface(self, settings: Mapping[str, bool]) -> Surface:
        """What to advertise in ``connect``."""
        return Surface.from_entries(await self.survey(settings))


@dataclass(frozen=True, slots=True)
class Surface:
    """``connect.caps``, ``connect.commands`` and ``connect.permissions``."""

    caps: tuple[str, ...]
    commands: tuple[str, ...]
    permissions: dict[str, bool]

    @classmethod
    def from_entries(cls, entries: Iterable[SurfaceEntry]) -> Surface:
        """Derive the advertised surface from a survey."""
        caps: list[str] = []
        commands: list[str] = []
        permissions: dict[str, bool] = {}
        for entry in entries:
            spec = entry.spec
            if entry.advertised:
                commands.append(spec.name)
                if spec.capability not in caps:
                    caps.append(spec.capability)
            if spec.permission is not None:
                permissions[spec.permission] = (
                    permissions.get(spec.permission, False) or entry.advertised
                )
        return cls(tuple(caps), tuple(commands), permissions)
