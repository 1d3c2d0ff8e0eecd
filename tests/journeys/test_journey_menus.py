"""Journey: the menus, with the mouse. The Activity panel is closed from its title bar and
brought back from View; View > Theme > Dark turns the window dark (seen in the screenshot);
Help > About names the version; File > Quit quits."""

from __future__ import annotations

import asyncio
import time

import pytest
from PySide6.QtGui import QImage

from openclaw_desktop import __version__
from tests.helpers.atspi import Node
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney

pytestmark = pytest.mark.timeout(240)


async def menu_entry(j: Journey, name: str) -> Node:
    """A showing menu entry (a menu bar title, an item, a checkable item, a submenu)."""
    root = await j.root()
    deadline = time.monotonic() + 20
    while True:
        found = await j.atspi.find(
            root, lambda n: "menu" in n.role and n.name == name, f"menu entry {name!r}", 20
        )
        for seen in found:
            if (await j.atspi.extents(seen.node)).width > 0:
                return seen.node
        assert time.monotonic() < deadline, f"menu entry {name!r} is not on the screen"
        await asyncio.sleep(0.1)


async def pick(j: Journey, *path: str) -> None:
    """Click through a menu path, e.g. ``pick(j, "View", "Theme", "Dark")``."""
    for name in path:
        await j.click(await menu_entry(j, name))


def lightness(shot: str, x: int, y: int) -> int:
    return QImage(shot).pixelColor(x, y).lightness()


async def test_docks_theme_about_and_quit_from_the_menus(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model) as j:
        await j.control("text", "Message")
        assert await j.showing("panel", "Activity")
        activity = await j.control("panel", "Activity")
        close = next(
            s.node
            for s in await j.atspi.walk(activity)
            if s.role == "push button" and s.name == "Close"
        )
        await j.click(close)
        deadline = time.monotonic() + 10
        while await j.showing("panel", "Activity"):
            assert time.monotonic() < deadline, "the Activity panel did not close"
            await asyncio.sleep(0.1)
        await j.desktop.screenshot("activity-closed")
        await pick(j, "View", "Activity")
        await j.control("panel", "Activity", timeout=10)
        await j.desktop.screenshot("activity-back-from-view")

        light = str(await j.desktop.screenshot("light"))
        await pick(j, "View", "Theme", "Dark")
        deadline = time.monotonic() + 10
        while True:
            dark = str(await j.desktop.screenshot("dark"))
            if lightness(dark, 500, 300) < 100:
                break
            assert time.monotonic() < deadline, "the window did not turn dark"
            await asyncio.sleep(0.2)
        assert lightness(light, 500, 300) > 180

        await pick(j, "Help", "About OpenClaw Desktop")
        about = await j.atspi.find(
            await j.root(),
            lambda n: n.role == "label" and n.name.startswith(f"OpenClaw Desktop {__version__}"),
            "the About text with the version",
        )
        assert about
        await j.desktop.screenshot("about")
        await j.click(await j.control("push button", "OK"))

        await pick(j, "File", "Quit")
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
        j.app.wait_gateway_gone()
