"""Unit tests for the node command registry and the default node surface."""

from __future__ import annotations

import pytest

from openclaw_desktop.node import (
    Availability,
    CommandRegistry,
    CommandSpec,
    default_handlers,
    default_registry,
)

pytestmark = pytest.mark.unit


class Switch:
    """An availability probe the test can flip."""

    def __init__(self, available: bool, reason: str = "no camera found") -> None:
        self.available = available
        self.reason = reason
        self.calls = 0

    def __call__(self) -> Availability:
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


def test_only_available_and_enabled_commands_are_advertised() -> None:
    """Settings and availability narrow the advertised commands."""
    reg = registry()
    assert reg.advertised_commands({}) == ["device.info", "device.status"]
    assert reg.advertised_commands({"notifications": True}) == [
        "device.info",
        "system.notify",
        "device.status",
    ]
    assert reg.advertised_commands({"notifications": False, "camera": True}) == [
        "device.info",
        "device.status",
    ]


def test_available_camera_widens_the_surface() -> None:
    """When the device shows up, its commands are advertised (the setting still applies)."""
    reg = registry(Switch(True))
    assert reg.advertised_commands({}) == ["device.info", "camera.snap", "device.status"]
    assert reg.advertised_commands({"camera": True}) == [
        "device.info",
        "camera.snap",
        "camera.list",
        "device.status",
    ]


def test_caps_are_the_categories_of_advertised_commands() -> None:
    """caps list each category once, in first-seen order, and only for advertised commands."""
    assert registry().advertised_caps({}) == ["device"]
    assert registry(Switch(True)).advertised_caps({"notifications": True}) == [
        "device",
        "system",
        "camera",
    ]


def test_permissions_report_granted_state() -> None:
    """Every declared permission is listed, granted only when a command using it is advertised."""
    assert registry().advertised_permissions({"notifications": True}) == {
        "notify": True,
        "camera.capture": False,
    }
    assert registry(Switch(True)).advertised_permissions({}) == {
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


def test_availability_is_probed_each_time() -> None:
    """Availability is re-read on every query, so hot-plugged hardware is seen."""
    camera = Switch(False)
    reg = registry(camera)
    assert "camera.snap" not in reg.advertised_commands({})
    camera.available = True
    assert "camera.snap" in reg.advertised_commands({})
    assert camera.calls >= 2


def test_default_surface_commands() -> None:
    """The headless node offers device.info, device.status and (opt-in) system.notify."""
    reg = default_registry()
    assert reg.advertised_commands({}) == ["device.info", "device.status"]
    assert reg.advertised_commands({"notifications": True}) == [
        "device.info",
        "device.status",
        "system.notify",
    ]
    assert reg.advertised_caps({"notifications": True}) == ["device", "system"]


def test_every_default_spec_has_a_handler() -> None:
    """Each command in the default registry is handled, and nothing else is."""
    names = {s.name for s in default_registry().specs}
    assert set(default_handlers()) == names
