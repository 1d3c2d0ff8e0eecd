"""What this computer can offer the agent, one row per capability: the table from which the
settings toggles, the tray menu, the Settings dialog and the bundled gateway's allowlist are
derived, and against which the command registry is checked (every registered command belongs
to exactly one capability; every capability's commands are registered).

Adding a capability: a row here, its handler area (``node/handlers/``, listed in
``node/surface.py``) and its on/off field in :class:`~openclaw_desktop.config.NodeSettings`
(the schema that reads ``settings.json``; the config layer sits below the node, so the
schema cannot import this table, and ``tests/unit/node/test_capabilities.py`` checks that
the two agree, defaults included).

This module imports nothing of the project: the UI reads it at start-up without loading the
command handlers and the device libraries behind them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CAPABILITIES",
    "Capability",
    "embedded_allow",
    "toggleable",
]


@dataclass(frozen=True, slots=True)
class Capability:
    """One thing the user lets the agent use (or that is always on).

    Attributes:
        setting: its on/off field in ``NodeSettings`` (``camera``), or None when always on.
        label: the Settings dialog's text for it.
        help: what turning it on lets the agent do (the toggles' tooltip).
        default: on or off in a new installation (privacy-sensitive sources are off).
        commands: the node commands it gates, in the order they are advertised.
        embedded_allow: list its commands in the bundled gateway's ``--allow`` (beyond the
            gateway's platform defaults). Commands the defaults already carry once the node's
            surface is approved (``system.run*``, ``system.which``, ``system.execApprovals.*``
            on a desktop) need not be.
        menu_label: the tray menu's shorter text; empty means ``label``.
    """

    setting: str | None
    label: str
    help: str
    default: bool
    commands: tuple[str, ...]
    embedded_allow: bool = True
    menu_label: str = ""

    @property
    def key(self) -> str | None:
        """The setting's full key (``node.camera``), as ``openclaw-desktop config`` names it."""
        return None if self.setting is None else f"node.{self.setting}"

    @property
    def command_prefix(self) -> str:
        """The namespace its commands share, up to and with its last dot (``camera.``,
        ``talk.ptt.``, ``computer.`` for ``computer.act``): what cancels its running
        commands."""
        namespaces = [command.split(".")[:-1] for command in self.commands]
        shared: list[str] = []
        for parts in zip(*namespaces, strict=False):
            if len(set(parts)) > 1:
                break
            shared.append(parts[0])
        return "".join(f"{part}." for part in shared)

    @property
    def menu_text(self) -> str:
        """The tray menu's text."""
        return self.menu_label or self.label


CAPABILITIES: tuple[Capability, ...] = (
    Capability(
        None,
        "Device info and status",
        "The agent can read this computer's name, platform and battery or power state",
        True,
        ("device.info", "device.status"),
    ),
    Capability(
        "notifications",
        "Notifications",
        "The agent can show desktop notifications on this computer (system.notify)",
        True,
        ("system.notify",),
    ),
    Capability(
        "camera",
        "Camera",
        "The agent can list the cameras, take photos and record short clips "
        "(camera.*; only while you are at the computer)",
        False,
        ("camera.list", "camera.snap", "camera.clip"),
    ),
    Capability(
        "screen",
        "Screen",
        "The agent can take screenshots and record the screen (screen.snapshot, "
        "screen.record; only while you are at the computer; a recording has sound only "
        "when Microphone is on too)",
        False,
        ("screen.snapshot", "screen.record"),
    ),
    Capability(
        "microphone",
        "Microphone (push-to-talk)",
        "The agent can record from the microphone while push-to-talk is held (talk.ptt.*)",
        False,
        ("talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once"),
        menu_label="Microphone",
    ),
    Capability(
        "exec",
        "Run commands (as exec approvals allow)",
        "The agent can run programs on this computer (system.run, system.which) as this "
        "computer's exec approvals allow: their allowlist, and whether to ask you first",
        False,
        (
            "system.run.prepare",
            "system.run",
            "system.which",
            "system.execApprovals.get",
            "system.execApprovals.set",
        ),
        embedded_allow=False,
        menu_label="Run commands",
    ),
    Capability(
        "location",
        "Location",
        "The agent can read this computer's location from GeoClue (location.get)",
        False,
        ("location.get",),
    ),
    Capability(
        "installed_apps",
        "Installed applications",
        "The agent can list the applications installed on this computer (device.apps)",
        False,
        ("device.apps",),
        menu_label="Installed apps",
    ),
    Capability(
        "computer",
        "Computer control (pointer and keyboard)",
        "The agent can click, type, scroll and press keys on this computer (computer.act; "
        "X11 only, only while you are at the computer; its screenshots need Screen too). "
        "While it does, the window shows it with a Stop that takes control back at once",
        False,
        ("computer.act",),
        embedded_allow=False,  # a desktop platform default of the gateway
        menu_label="Computer control",
    ),
)


def toggleable(table: Iterable[Capability] = CAPABILITIES) -> list[Capability]:
    """The capabilities the user turns on and off (Settings, the tray), in table order."""
    return [cap for cap in table if cap.setting is not None]


def embedded_allow(table: Iterable[Capability] = CAPABILITIES) -> tuple[str, ...]:
    """The commands the bundled gateway is started to allow beyond its defaults: every
    command of this app it would otherwise drop. The gate that matters on the user's own
    gateway is the user's settings (camera, screen and microphone are off until enabled)."""
    return tuple(cmd for cap in table if cap.embedded_allow for cmd in cap.commands)
