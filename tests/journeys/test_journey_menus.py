"""Journey: the menus, with the mouse. The Activity panel is closed from its title bar and
brought back from View; View > Theme > Dark turns the window dark (seen in the screenshot);
Help > About names the version; File > Quit quits."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from openclaw_desktop import __version__
from tests.helpers.atspi import Node
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney
from tests.journeys.test_journey_sessions import wait_sessions

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


async def test_new_session_doctor_and_logs_folder_from_the_menus(
    open_journey: OpenJourney,
    model: FakeLLM,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """File > New session adds a sidebar row and moves the chat to it; Help > Doctor shows
    the doctor's own report (run as its own process); Help > Open the logs folder asks the
    desktop's opener (``xdg-open``, here one that writes down what it was asked) for the
    folder the window logs to."""
    opener_bin = tmp_path / "bin"
    opener_bin.mkdir()
    asked = tmp_path / "xdg-open-asked.txt"
    opener = opener_bin / "xdg-open"
    opener.write_text(f'#!/bin/sh\nprintf "%s\\n" "$1" >> "{asked}"\n')
    opener.chmod(0o755)
    monkeypatch.setenv("PATH", f"{opener_bin}{os.pathsep}{os.environ.get('PATH', '')}")

    async with open_journey(model=model) as j:
        await j.control("text", "Message")
        rows = await wait_sessions(j, lambda r: r == ["Main"], "the main session")
        await pick(j, "File", "New session")
        rows = await wait_sessions(j, lambda r: len(r) == 2, "a second session row")
        assert any(r.startswith("New session") for r in rows), rows
        await j.desktop.screenshot("new-session-from-file-menu")

        await pick(j, "Help", "Doctor: what works here")
        report = await j.control("text", "Report", timeout=60)
        deadline = time.monotonic() + 60
        text = ""
        while time.monotonic() < deadline:
            text = await j.atspi.text(report)
            if text.strip():
                break
            await asyncio.sleep(0.2)
        # The doctor's own words: what it checked here (not a canned message).
        assert "identity:" in text and "device.info" in text, text[:2000]
        assert " WARNING " not in text, text[:2000]  # findings, not the doctor's log lines
        assert "could not start" not in text and "did not finish" not in text, text[:2000]
        await j.desktop.screenshot("doctor-report")
        [dialog, *_] = await j.atspi.find(
            await j.root(),
            lambda n: n.role == "dialog" and n.name == "Doctor: what works here",
            "the doctor's window",
        )
        await j.click(await j.atspi.find_one(dialog.node, "push button", "Close"))
        deadline = time.monotonic() + 10
        while await j.showing("text", "Report"):
            assert time.monotonic() < deadline, "the doctor's window stayed open"
            await asyncio.sleep(0.1)

        await pick(j, "Help", "Open the logs folder")
        deadline = time.monotonic() + 20
        while not asked.exists():
            assert time.monotonic() < deadline, "the desktop's opener was never asked"
            await asyncio.sleep(0.1)
        folder = Path(asked.read_text().strip().splitlines()[-1].removeprefix("file://"))
        # The folder the window writes its log to, inside this launch's own home.
        assert folder.name == "logs" and folder.is_relative_to(j.app.home), folder
        assert (folder / "desktop.log").is_file(), folder
