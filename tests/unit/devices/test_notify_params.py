"""system.notify params, limits and the no-bus answers (no sockets, no processes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.notify import Notice, Notifier, Urgency, session_bus_address
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.system import (
    BODY_MAX,
    TITLE_MAX,
    notify_area,
    parse_notice,
    system_notify,
)
from openclaw_desktop.node.registry import CommandRegistry


@pytest.fixture
def no_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No session bus anywhere: no address variable, an empty runtime folder."""
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))


@pytest.mark.parametrize(
    ("priority", "urgency"),
    [
        (None, Urgency.NORMAL),
        ("passive", Urgency.LOW),
        ("active", Urgency.NORMAL),
        ("timeSensitive", Urgency.CRITICAL),
    ],
)
def test_priority_maps_to_urgency(priority: str | None, urgency: Urgency) -> None:
    """passive/active/timeSensitive become low/normal/critical; absent or null is active."""
    params: dict[str, Any] = {"title": "T", "body": "B", "priority": priority}
    assert parse_notice(params) == Notice("T", "B", urgency, silent=False)


def test_subtitle_becomes_the_first_body_line() -> None:
    """Freedesktop has no subtitle, so it leads the body."""
    notice = parse_notice({"title": "Build", "subtitle": " main ", "body": "All green"})
    assert notice.body == "main\nAll green"
    assert parse_notice({"title": "T", "subtitle": "  ", "body": "B"}).body == "B"
    assert parse_notice({"title": "T", "subtitle": None, "body": ""}).body == ""


@pytest.mark.parametrize(
    ("sound", "silent"),
    [
        (None, False),
        (True, False),
        ("default", False),
        ("ping", False),
        ("", False),
        (False, True),
        ("none", True),
        ("Silent", True),
        (" off ", True),
        ("false", True),
        ("0", True),
    ],
)
def test_sound_values(sound: Any, silent: bool) -> None:
    """false and none/silent/off/false/0 (any case) are silent; anything else is the default."""
    assert parse_notice({"title": "T", "body": "", "sound": sound}).silent is silent


@pytest.mark.parametrize("delivery", [None, "system", "overlay", "auto"])
def test_every_delivery_is_accepted(delivery: str | None) -> None:
    """Each documented delivery is shown as a system notification."""
    assert parse_notice({"title": "T", "body": "", "delivery": delivery}).title == "T"


def test_long_text_is_cut_not_refused() -> None:
    """Titles and bodies past the limits are cut with an ellipsis."""
    notice = parse_notice({"title": "t" * 1000, "body": "b" * 10_000})
    assert len(notice.title) == TITLE_MAX
    assert notice.title.endswith("…")
    assert len(notice.body) == BODY_MAX
    assert notice.body.endswith("…")
    exact = parse_notice({"title": "t" * TITLE_MAX, "body": "b" * BODY_MAX})
    assert exact.title == "t" * TITLE_MAX
    assert exact.body == "b" * BODY_MAX


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (None, "params must be an object"),
        (["T", "B"], "params must be an object"),
        ({"body": "B"}, "title required"),
        ({"title": "", "body": "B"}, "title required"),
        ({"title": " \n", "body": "B"}, "title required"),
        ({"title": 5, "body": "B"}, "title required"),
        ({"title": "T"}, "body required"),
        ({"title": "T", "body": None}, "body required"),
        ({"title": "T", "body": 3}, "body required"),
        ({"title": "T", "body": "B", "subtitle": 1}, "subtitle must be a string"),
        ({"title": "T", "body": "B", "priority": "urgent"}, "priority must be one of"),
        ({"title": "T", "body": "B", "priority": ["active"]}, "priority must be one of"),
        ({"title": "T", "body": "B", "delivery": "popup"}, "delivery must be one of"),
        ({"title": "T", "body": "B", "delivery": 1}, "delivery must be one of"),
        ({"title": "T", "body": "B", "sound": 1}, "sound must be a string or a boolean"),
        ({"title": "T", "body": "B", "sound": ["x"]}, "sound must be a string or a boolean"),
    ],
)
async def test_bad_params_are_invalid_request(params: Any, message: str) -> None:
    """Malformed params are INVALID_REQUEST naming the field, before any bus is touched."""
    with pytest.raises(DeviceError) as info:
        parse_notice(params)
    assert info.value.code == "INVALID_REQUEST"
    assert info.value.message.startswith(message)
    result = await system_notify(params)
    assert result.ok is False
    assert result.error_message == f"INVALID_REQUEST: {info.value.message}"


def test_session_bus_address_sources(tmp_path: Path) -> None:
    """The variable wins; without it and without $XDG_RUNTIME_DIR/bus there is none."""
    env = {"DBUS_SESSION_BUS_ADDRESS": " unix:path=/x ", "XDG_RUNTIME_DIR": str(tmp_path)}
    assert session_bus_address(env) == "unix:path=/x"
    assert session_bus_address({"XDG_RUNTIME_DIR": str(tmp_path)}) is None
    assert session_bus_address({}) is None


@pytest.mark.usefixtures("no_bus")
async def test_without_a_bus_the_probe_and_send_say_why() -> None:
    """No bus: the probe says so, a send is UNAVAILABLE with the same reason."""
    notifier = Notifier()
    status = await notifier.probe()
    assert status.available is False
    assert status.reason == "no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set"
    with pytest.raises(DeviceError) as info:
        await notifier.send(Notice("T"))
    assert (info.value.code, info.value.message) == ("UNAVAILABLE", status.reason)


@pytest.mark.usefixtures("no_bus")
async def test_dispatcher_answers_unavailable_without_a_bus() -> None:
    """Through the dispatcher the probe's reason reaches the wire."""
    area = notify_area(NodeContext())
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: {"notifications": True}
    )
    result = await dispatcher.dispatch("system.notify", {"title": "T", "body": "B"})
    assert result.error_message == (
        "UNAVAILABLE: no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set"
    )


async def test_disabled_notifications_are_not_authorized() -> None:
    """The notifications setting off gives NOT_AUTHORIZED: notifications."""
    area = notify_area(NodeContext())
    (spec,) = area.specs
    assert (spec.name, spec.capability, spec.setting, spec.permission) == (
        "system.notify",
        "system",
        "notifications",
        "notifications",
    )
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: {"notifications": False}
    )
    result = await dispatcher.dispatch("system.notify", {"title": "T", "body": "B"})
    assert result.error_message == "NOT_AUTHORIZED: notifications"


async def test_native_platforms_are_available_without_probing() -> None:
    """macOS and Windows notification centers are assumed present."""
    for system in ("darwin", "win32"):
        assert (await Notifier(system=system).probe()).available is True
