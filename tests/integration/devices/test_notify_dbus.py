"""system.notify through a real private dbus-daemon and a real notification server."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from dbus_fast.aio import MessageBus

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.notify import Notice, Notifier, Urgency
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.system import notify_area
from openclaw_desktop.node.registry import CommandRegistry
from tests.helpers.dbus_notifications import CAPABILITIES, NAME, PATH, NotificationServer
from tests.helpers.desktop_session import (
    MissingBinary,
    dbus_session_fixture,  # noqa: F401 - provides the dbus_session fixture
    session_bus,
)


def dispatcher_for(notifier: Notifier, enabled: bool = True) -> InvokeDispatcher:
    """A dispatcher over the notify area alone."""
    area = notify_area(NodeContext(), notifier)
    return InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: {"notifications": enabled}
    )


@pytest.mark.parametrize(
    ("priority", "urgency"), [("passive", 0), ("active", 1), ("timeSensitive", 2), (None, 1)]
)
async def test_notification_arrives_with_every_field(
    dbus_session: str, priority: str | None, urgency: int
) -> None:
    """Title, body with the subtitle line, urgency byte and app name reach the server."""
    params: dict[str, Any] = {"title": "Build done", "subtitle": "main", "body": "All green"}
    if priority is not None:
        params["priority"] = priority
    async with NotificationServer.running(dbus_session) as server:
        result = await dispatcher_for(Notifier()).dispatch("system.notify", params)
        assert (result.ok, result.payload) == (True, {"sent": True})
        (got,) = await server.wait_for(1)
    assert got.app_name == "OpenClaw"
    assert got.summary == "Build done"
    assert got.body == "main\nAll green"
    assert got.urgency == urgency
    assert got.expire_timeout == -1
    assert "suppress-sound" not in got.hints
    assert got.app_icon == "openclaw-desktop"  # the installed icon and desktop entry
    assert got.hints.get("desktop-entry") == "openclaw-desktop"


@pytest.mark.parametrize(("sound", "silent"), [(False, True), ("none", True), (True, False)])
async def test_sound_choice_reaches_the_server(dbus_session: str, sound: Any, silent: bool) -> None:
    """Silent notifications carry suppress-sound; others leave the sound to the server."""
    async with NotificationServer.running(dbus_session) as server:
        params = {"title": "T", "body": "", "sound": sound}
        assert (await dispatcher_for(Notifier()).dispatch("system.notify", params)).ok
        (got,) = await server.wait_for(1)
    assert got.hints.get("suppress-sound", False) is silent


async def test_long_text_arrives_cut(dbus_session: str) -> None:
    """Over-long fields are cut before they are sent."""
    async with NotificationServer.running(dbus_session) as server:
        params = {"title": "t" * 5000, "body": "b" * 50_000}
        assert (await dispatcher_for(Notifier()).dispatch("system.notify", params)).ok
        (got,) = await server.wait_for(1)
    assert got.summary == "t" * 199 + "…"
    assert got.body == "b" * 3999 + "…"


async def test_bad_params_never_reach_the_server(dbus_session: str) -> None:
    """INVALID_REQUEST is answered locally."""
    async with NotificationServer.running(dbus_session) as server:
        dispatcher = dispatcher_for(Notifier())
        for params in (
            {"body": "B"},
            {"title": "T", "body": 1},
            {"title": "T", "body": "", "priority": "x"},
        ):
            result = await dispatcher.dispatch("system.notify", params)
            assert result.error_code == "INVALID_REQUEST"
        assert (await dispatcher.dispatch("system.notify", {"title": "ok", "body": ""})).ok
        received = await server.wait_for(1)
    assert [r.summary for r in received] == ["ok"]


async def test_hanging_server_is_bounded_and_the_node_recovers(dbus_session: str) -> None:
    """A Notify that is never answered ends in UNAVAILABLE in bounded time; the next works."""
    notifier = Notifier(send_timeout=1.0)
    async with NotificationServer.running(dbus_session, hang=True) as server:
        started = time.monotonic()
        with pytest.raises(DeviceError) as info:
            await notifier.send(Notice("stuck"))
        elapsed = time.monotonic() - started
        assert (info.value.code, info.value.message) == (
            "UNAVAILABLE",
            "the notification service did not answer in 1 s",
        )
        assert 0.9 <= elapsed < 3.0
        server.hang = False
        await notifier.send(Notice("after", "fine", Urgency.LOW))
        received = await server.wait_for(2)
    assert [r.summary for r in received] == ["stuck", "after"]


async def test_hanging_server_default_timeout_through_the_dispatcher(dbus_session: str) -> None:
    """With the defaults the wire answer is the 5 s message, after about 5 s."""
    async with NotificationServer.running(dbus_session, hang=True):
        dispatcher = dispatcher_for(Notifier())
        started = time.monotonic()
        result = await dispatcher.dispatch("system.notify", {"title": "T", "body": "B"})
        elapsed = time.monotonic() - started
    assert result.error_message == "UNAVAILABLE: the notification service did not answer in 5 s"
    assert 4.9 <= elapsed < 8.0


async def test_no_server_on_the_bus(dbus_session: str) -> None:
    """A bus without a notification service: the probe and the dispatcher say why."""
    notifier = Notifier()
    status = await notifier.probe()
    assert status.available is False
    assert "no notification service on the D-Bus session bus" in status.reason
    assert NAME in status.reason
    result = await dispatcher_for(notifier).dispatch("system.notify", {"title": "T", "body": ""})
    assert result.error_message == f"UNAVAILABLE: {status.reason}"


async def test_unreachable_bus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An address whose socket does not exist is reported as unreachable, quickly."""
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path / 'missing'}")
    notifier = Notifier()
    started = time.monotonic()
    status = await notifier.probe()
    assert time.monotonic() - started < 2.0
    assert status.available is False
    assert status.reason.startswith("cannot reach the D-Bus session bus: FileNotFoundError")
    with pytest.raises(DeviceError) as info:
        await notifier.send(Notice("T"))
    assert info.value.message.startswith("cannot reach the D-Bus session bus")


async def test_service_vanishing_after_the_probe(dbus_session: str) -> None:
    """The probe saw a server; it left before the send: UNAVAILABLE with the reason."""
    notifier = Notifier(probe_ttl=60.0)
    dispatcher = dispatcher_for(notifier)
    async with NotificationServer.running(dbus_session):
        assert (await notifier.probe()).available is True
    # The cached probe still says yes, so the dispatcher reaches the send.
    result = await dispatcher.dispatch("system.notify", {"title": "T", "body": "B"})
    assert result.error_message == (
        f"UNAVAILABLE: the notification service went away ({NAME} has no owner any more)"
    )
    # The failure dropped the cached answer: the next probe asks the bus again.
    assert (await notifier.probe()).available is False


async def test_probe_is_cached_per_bus_address(
    dbus_session: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answers are reused for probe_ttl, but a new bus address is asked afresh."""
    notifier = Notifier(probe_ttl=60.0)
    async with NotificationServer.running(dbus_session):
        assert (await notifier.probe()).available is True
        try:
            with session_bus() as other:
                monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", other)
                assert (await notifier.probe()).available is False
                monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", dbus_session)
        except MissingBinary as exc:  # pragma: no cover - the fixture skipped already
            pytest.skip(str(exc))
        assert (await notifier.probe()).available is True
    assert (await notifier.probe()).available is True  # cached
    notifier.forget()
    assert (await notifier.probe()).available is False


async def test_activatable_service_that_fails_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """A service the bus can start counts as available; a failed start is UNAVAILABLE."""
    with contextlib.ExitStack() as stack:
        try:
            address = stack.enter_context(session_bus({NAME: "/bin/false"}))
        except MissingBinary as exc:
            pytest.skip(str(exc))
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        notifier = Notifier()
        assert (await notifier.probe()).available is True
        result = await dispatcher_for(notifier).dispatch(
            "system.notify", {"title": "T", "body": ""}
        )
    assert result.error_code == "UNAVAILABLE"
    assert result.error_message is not None
    assert "the notification service could not be started" in result.error_message


async def test_disabled_setting_wins_over_a_working_server(dbus_session: str) -> None:
    """notifications off: NOT_AUTHORIZED and nothing is sent."""
    async with NotificationServer.running(dbus_session) as server:
        result = await dispatcher_for(Notifier(), enabled=False).dispatch(
            "system.notify", {"title": "T", "body": "B"}
        )
        assert result.error_message == "NOT_AUTHORIZED: notifications"
        assert server.received == []


async def test_helper_server_answers_the_spec_methods(dbus_session: str) -> None:
    """The test server speaks the parts of the spec clients use besides Notify."""
    async with NotificationServer.running(dbus_session) as server:
        bus = await MessageBus(bus_address=dbus_session).connect()
        try:
            introspection = await bus.introspect(NAME, PATH)
            proxy = bus.get_proxy_object(NAME, PATH, introspection).get_interface(NAME)
            info = await proxy.call_get_server_information()  # type: ignore[attr-defined]
            caps = await proxy.call_get_capabilities()  # type: ignore[attr-defined]
            await proxy.call_close_notification(7)  # type: ignore[attr-defined]
        finally:
            bus.disconnect()
            await bus.wait_for_disconnect()  # type: ignore[no-untyped-call]
    assert info[0] == "openclaw-test-notifyd"
    assert caps == CAPABILITIES
    assert server.closed == [7]


@pytest.mark.parametrize(
    ("capabilities", "expected"),
    [
        (
            ["body", "body-markup"],
            'see &lt;img src="http://127.0.0.1:9/p.png"&gt; &amp; &lt;b&gt;x&lt;/b&gt;',
        ),
        (["body"], 'see <img src="http://127.0.0.1:9/p.png"> & <b>x</b>'),
    ],
)
async def test_markup_in_the_body_reaches_a_markup_server_escaped(
    dbus_session: str, capabilities: list[str], expected: str
) -> None:
    """An agent's or a model's markup is never rendered (nor fetched) by a notification
    service that reads bodies as markup; a plain-text service gets the text unchanged."""
    text = 'see <img src="http://127.0.0.1:9/p.png"> & <b>x</b>'
    async with NotificationServer.running(dbus_session, capabilities=capabilities) as server:
        await Notifier().send(Notice("Reply", text))
        (got,) = await server.wait_for(1)
    assert got.body == expected
    assert got.summary == "Reply"
