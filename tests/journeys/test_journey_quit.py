"""Journey: quitting like a desktop app, on a desktop with a system tray (a status-notifier
host on the session bus, as KDE's panel is). Closing the window hides it and says where it
went, once; the tray icon brings it back; Ctrl+Q really quits, the bundled gateway with it.
Quitting while a reply streams asks first: Cancel keeps the reply streaming, Quit (from the
tray's menu this time) ends the app."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.helpers.dbus_notifications import NotificationServer
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney
from ui.quitting import CLOSED_TO_TRAY

pytestmark = [pytest.mark.journey, pytest.mark.timeout(300)]


async def until_windows(j: Journey, shown: bool, timeout: float = 20.0) -> None:
    """Wait until the main window is (or is no longer) on the screen."""
    deadline = time.monotonic() + timeout
    while bool(await j.main_windows()) != shown:
        assert j.app.running(), j.app.output()[-3000:]
        assert time.monotonic() < deadline, f"the window is {'not ' * shown}shown"
        await asyncio.sleep(0.1)


async def test_close_to_the_tray_then_quit_with_ctrl_q(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model, tray=True) as j:
        assert j.desktop.tray is not None
        async with NotificationServer.running(j.desktop.bus_address) as notices:
            await j.control("text", "Message")
            await j.desktop.tray.item()
            await j.desktop.screenshot("with-a-tray")

            [window] = await j.main_windows()
            await j.desktop.close_window(window)
            await until_windows(j, shown=False)
            [notice] = await notices.wait_for(1, timeout=10)
            assert (notice.summary, notice.body) == CLOSED_TO_TRAY
            assert j.app.running() and j.app.gateway_listening()
            await j.desktop.screenshot("closed-to-the-tray")

            await j.desktop.tray.activate()  # a click on the tray icon
            await until_windows(j, shown=True)
            await j.desktop.screenshot("back-from-the-tray")
            [window] = await j.main_windows()
            await j.desktop.close_window(window)
            await until_windows(j, shown=False)
            await asyncio.sleep(1.0)  # a second notice would have arrived by now
            assert len(notices.received) == 1, "the closed-to-tray notice shows once"

            await j.desktop.tray.activate()
            await until_windows(j, shown=True)
            await j.click(await j.control("text", "Message"))
            await j.desktop.key("ctrl+q")
            assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
            j.app.wait_gateway_gone()


async def question(j: Journey) -> None:
    """Wait for the "Quit OpenClaw?" question."""
    await j.atspi.find(
        await j.root(),
        lambda n: n.name == "Quit OpenClaw?" and n.role in ("alert", "alert message", "dialog"),
        "the quit question",
        timeout=20,
        alive=j.alive,
    )


async def test_quitting_while_a_reply_streams_asks_first(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model, tray=True) as j:
        assert j.desktop.tray is not None
        await j.send("SLOW:400 first")
        await j.wait_messages(
            lambda rows: any(r.startswith("slow0") for r in rows), "the reply streaming"
        )
        await j.desktop.key("ctrl+q")
        await question(j)
        await j.desktop.screenshot("asked-before-quitting")
        await j.click(await j.control("push button", "Cancel"))
        rows = await j.wait_messages(
            lambda rows: any("slow19" in r for r in rows), "the reply going on to its end"
        )
        assert j.app.running()
        assert not await j.showing("alert message", "Quit OpenClaw?")
        await j.desktop.screenshot("cancelled-and-the-reply-finished")
        assert rows[0] == "SLOW:400 first"

        await j.send("SLOW:400 second")
        await j.wait_messages(
            lambda rows: sum(r.startswith("slow0") for r in rows) == 2, "the second reply"
        )
        await j.desktop.tray.click_menu("Quit")
        await question(j)
        await j.desktop.screenshot("asked-again-from-the-tray")
        await j.click(await j.control("push button", "Quit"))
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
        j.app.wait_gateway_gone()
