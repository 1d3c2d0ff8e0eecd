"""Unit tests for the node command registry and the default node surface."""

from __future__ import annotations

import asyncio

import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.node import (
    Availability,
    CommandRegistry,
    CommandSpec,
    NodeContext,
    Surface,
    build_surface,
)


class Switch:
    """An availability probe the test can flip."""

    def __init__(self, available: bool, reason: str = "no camera found") -> None:
        self.available = available
        self.reason = reason
        self.calls = 0

    async def __call__(self) -> Availability:
        self.calls += 1
        return Availability.yes() if self.available else Availability.no(self.reason)


def registry(camera: Switch | None = None) -> CommandRegistry:
    """A registry with always-on, setting-gated and availability-gated commands."""
    camera = camera or Switch(False)
    return CommandRegistry(
        [
            CommandSpec("device.info", "device"),
            CommandSpec("system.notify", "system", setting="notifications", permission="notify"),
            CommandSpec("camera.snap", "camera", availability=camera, permission="camera.capture"),
            CommandSpec(
                "camera.list",
                "camera",
                availability=camera,
                setting="camera",
                permission="camera.capture",
            ),
            CommandSpec("device.status", "device"),
        ]
    )


async def commands(reg: CommandRegistry, settings: dict[str, bool]) -> list[str]:
    """The advertised command names."""
    return list((await reg.surface(settings)).commands)


def test_availability_constructors() -> None:
    """Availability.yes/no carry the flag and the reason."""
    assert Availability.yes() == Availability(True, "")
    assert Availability.no("no D-Bus") == Availability(False, "no D-Bus")


def test_duplicate_spec_is_rejected() -> None:
    """Two specs with one name is a programming error."""
    with pytest.raises(ValueError, match=r"duplicate command spec 'device\.info'"):
        CommandRegistry([CommandSpec("device.info", "device"), CommandSpec("device.info", "x")])


def test_spec_lookup_and_order() -> None:
    """Specs are found by name and listed in declaration order."""
    reg = registry()
    spec = reg.spec("system.notify")
    assert spec is not None
    assert spec.setting == "notifications"
    assert reg.spec("nope") is None
    assert [s.name for s in reg.specs] == [
        "device.info",
        "system.notify",
        "camera.snap",
        "camera.list",
        "device.status",
    ]


async def test_only_available_and_enabled_commands_are_advertised() -> None:
    """Settings and availability narrow the advertised commands."""
    reg = registry()
    assert await commands(reg, {}) == ["device.info", "device.status"]
    assert await commands(reg, {"notifications": True}) == [
        "device.info",
        "system.notify",
        "device.status",
    ]
    assert await commands(reg, {"notifications": False, "camera": True}) == [
        "device.info",
        "device.status",
    ]


async def test_available_camera_widens_the_surface() -> None:
    """When the device shows up, its commands are advertised (the setting still applies)."""
    reg = registry(Switch(True))
    assert await commands(reg, {}) == ["device.info", "camera.snap", "device.status"]
    assert await commands(reg, {"camera": True}) == [
        "device.info",
        "camera.snap",
        "camera.list",
        "device.status",
    ]


async def test_caps_are_the_categories_of_advertised_commands() -> None:
    """caps list each category once, in first-seen order, and only for advertised commands."""
    assert (await registry().surface({})).caps == ("device",)
    surface = await registry(Switch(True)).surface({"notifications": True})
    assert surface.caps == ("device", "system", "camera")


async def test_permissions_report_granted_state() -> None:
    """Every declared permission is listed, granted only when a command using it is advertised."""
    assert (await registry().surface({"notifications": True})).permissions == {
        "notify": True,
        "camera.capture": False,
    }
    assert (await registry(Switch(True)).surface({})).permissions == {
        "notify": False,
        "camera.capture": True,
    }


def test_enabled_reads_settings_strictly() -> None:
    """A gated command is enabled only by a true setting; ungated ones always are."""
    reg = registry()
    notify = reg.spec("system.notify")
    info = reg.spec("device.info")
    assert notify is not None
    assert info is not None
    assert reg.enabled(info, {}) is True
    assert reg.enabled(notify, {}) is False
    assert reg.enabled(notify, {"notifications": False}) is False
    assert reg.enabled(notify, {"notifications": True}) is True


async def test_availability_is_probed_each_survey_and_once_per_probe() -> None:
    """Availability is re-read on every survey (hot-plugged hardware is seen), and a probe
    shared by several specs runs once per survey."""
    camera = Switch(False)
    reg = registry(camera)
    assert "camera.snap" not in await commands(reg, {})
    assert camera.calls == 1
    camera.available = True
    assert "camera.snap" in await commands(reg, {})
    assert camera.calls == 2


async def test_a_failing_probe_reads_as_unavailable() -> None:
    """A probe that raises makes its commands unavailable with the error as the reason."""

    async def broken() -> Availability:
        raise OSError("bus gone")

    reg = CommandRegistry([CommandSpec("x.y", "x", availability=broken)])
    (entry,) = await reg.survey({})
    assert not entry.advertised
    assert "OSError: bus gone" in entry.availability.reason


def test_surface_from_entries_is_the_wire_shape() -> None:
    """Surface carries tuples for caps/commands and a dict for permissions."""
    assert Surface.from_entries([]) == Surface((), (), {})


async def test_default_surface_follows_settings() -> None:
    """The built-in areas: device.* always, notifications by their (default on) setting."""
    ctx = NodeContext()
    reg, handlers = build_surface(ctx)
    assert set(handlers) == {s.name for s in reg.specs}
    defaults = await reg.surface(NodeSettings().toggles())
    assert {"device.info", "device.status"} <= set(defaults.commands)
    off = await reg.surface(NodeSettings(notifications=False).toggles())
    assert "system.notify" not in off.commands
    for name in ("camera.snap", "screen.snapshot", "screen.record", "talk.ptt.start"):
        assert name not in defaults.commands, f"{name} must be off by default"


async def test_a_probe_that_never_answers_costs_its_commands_not_the_surface(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A device layer that hangs (a wedged sound server) must not keep the node from
    connecting: its commands count as unavailable, with the reason; the rest are offered."""
    from openclaw_desktop.node import registry as registry_module

    monkeypatch.setattr(registry_module, "PROBE_TIMEOUT_S", 0.2)

    async def never() -> Availability:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    reg = CommandRegistry(
        [
            CommandSpec("device.info", "device"),
            CommandSpec("talk.ptt.start", "talk", availability=never),
        ]
    )
    async with asyncio.timeout(5):
        entries = {e.spec.name: e for e in await reg.survey({})}
    assert entries["device.info"].availability.available
    hung = entries["talk.ptt.start"].availability
    assert (hung.available, hung.reason) == (False, "the check did not answer within 0.2 s")
