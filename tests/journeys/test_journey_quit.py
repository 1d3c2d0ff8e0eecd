"""Journey: quitting like a desktop app, on a desktop with a system tray (a status-notifier
host on the session bus, as KDE's panel is). Closing the window hides it and says where it
went, once; the tray icon brings it back; Ctrl+Q really quits, the bundled gateway with it.
Quitting while a reply streams asks first: Cancel keeps the reply streaming, Quit (from the
tray's menu this time) ends the app. Quitting while only a message waits (its gateway gone, no
reply streaming) asks too, naming the message in words: Cancel keeps the app and the message,
Quit ends the app and the message is never sent, not even by the next launch."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.dbus_notifications import NotificationServer
from tests.helpers.fake_llm import FakeLLM, find_prompt
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney
from ui.quitting import CLOSED_TO_TRAY

pytestmark = pytest.mark.timeout(300)


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


async def question(j: Journey) -> str:
    """Wait for the "Quit OpenClaw?" question; what it says."""
    [box, *_] = await j.atspi.find(
        await j.root(),
        lambda n: n.name == "Quit OpenClaw?" and n.role in ("alert", "alert message", "dialog"),
        "the quit question",
        timeout=20,
        alive=j.alive,
    )
    labels = [s.name for s in await j.atspi.walk(box.node) if s.role == "label"]
    return next(
        (text for text in labels if text.endswith("Quit anyway? What has not arrived is lost.")), ""
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


@pytest.fixture
def remote_gateway(model: FakeLLM) -> Iterator[BundledGateway]:
    """Our gateway in a process of its own (not the app's bundled one, which the app would
    restart): stopping it leaves a message waiting."""
    env = {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_MODEL": "fake-model"}
    gateway = BundledGateway.start(env=env)
    try:
        yield gateway
    finally:
        gateway.cleanup()


def prompts(llm: FakeLLM) -> list[str]:
    """The user prompts the fake model was asked."""
    return [find_prompt(body.get("messages", []))[0] for body in llm.bodies("/chat/completions")]


async def test_quitting_with_only_a_waiting_message_asks_first(
    open_journey: OpenJourney, model: FakeLLM, remote_gateway: BundledGateway
) -> None:
    waiting = "typed while the gateway was away"
    remote = (remote_gateway.url, remote_gateway.token)
    async with open_journey(model=model, remote=remote) as j:
        await j.send("hello")
        await j.wait_messages(
            lambda rows: "FAKE-LLM reply #1: hello" in rows, "the whole reply (none streams)"
        )
        remote_gateway.stop()
        deadline = time.monotonic() + 60
        while await j.showing("label", f"chat: connected to 127.0.0.1:{remote_gateway.port}"):
            j.alive()
            assert time.monotonic() < deadline, "the status bar still says connected"
            await asyncio.sleep(0.3)
        await j.send(waiting)
        await j.wait_messages(
            lambda rows: any(r.startswith(waiting) and "waiting" in r for r in rows),
            "the message waiting for the gateway",
        )

        await j.desktop.key("ctrl+q")
        said = await question(j)
        assert said.startswith("1 message has not reached the gateway yet. Quit anyway?"), said
        await j.desktop.screenshot("asked-about-the-waiting-message")
        await j.click(await j.control("push button", "Cancel"))
        deadline = time.monotonic() + 5
        while await j.showing("alert message", "Quit OpenClaw?") or await j.showing(
            "dialog", "Quit OpenClaw?"
        ):
            assert time.monotonic() < deadline, "the question stays after Cancel"
            await asyncio.sleep(0.2)
        assert j.app.running()
        rows = await j.messages()
        assert any(r.startswith(waiting) and "waiting" in r for r in rows), rows
        await j.desktop.screenshot("cancelled-the-message-still-waits")

        await j.click(await j.control("text", "Message"))
        await j.desktop.key("ctrl+q")
        await question(j)
        await j.click(await j.control("push button", "Quit"))
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
        assert waiting not in prompts(model) and "hello" in prompts(model)

        # Lost means lost: with the gateway back and the app launched again, the message
        # is not sent after all (nothing kept it to send later).
        remote_gateway.restart()
        j.app.start()
        j.relaunched()
        rows = await j.wait_messages(
            lambda rows: "FAKE-LLM reply #1: hello" in rows, "the history after relaunch", 90
        )
        await j.control("text", "Message")
        await asyncio.sleep(2.0)  # a message sent on reconnect would be out by now
        rows = await j.messages()
        assert not any(waiting in r for r in rows), rows
        assert waiting not in prompts(model)
        await j.desktop.screenshot("relaunched-the-message-is-gone")
