"""The node's command table: one spec per command, from which both the advertised surface
(``caps``, ``commands``, ``permissions``) and the invoke-time gates are derived, so the two
can never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

__all__ = ["Availability", "CommandRegistry", "CommandSpec"]


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


def _always() -> Availability:
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
    """

    name: str
    capability: str
    availability: Callable[[], Availability] = _always
    setting: str | None = None
    permission: str | None = None


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

    def advertised(self, settings: Mapping[str, bool]) -> list[CommandSpec]:
        """Commands that are both available here and enabled."""
        return [
            s
            for s in self._specs.values()
            if self.enabled(s, settings) and s.availability().available
        ]

    def advertised_commands(self, settings: Mapping[str, bool]) -> list[str]:
        """``connect.commands``."""
        return [s.name for s in self.advertised(settings)]

    def advertised_caps(self, settings: Mapping[str, bool]) -> list[str]:
        """``connect.caps``: the categories of the advertised commands."""
        caps: list[str] = []
        for spec in self.advertised(settings):
            if spec.capability not in caps:
                caps.append(spec.capability)
        return caps

    def advertised_permissions(self, settings: Mapping[str, bool]) -> dict[str, bool]:
        """``connect.permissions``: each declared permission and whether it is granted."""
        perms: dict[str, bool] = {}
        for spec in self._specs.values():
            if spec.permission is not None:
                granted = self.enabled(spec, settings) and spec.availability().available
                perms[spec.permission] = perms.get(spec.permission, False) or granted
        return perms
