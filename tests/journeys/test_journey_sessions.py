"""Journeys: sessions by their names, and a draft kept across a restart. The person clicks
*New session* (found by its accessible name); the sidebar calls it "New session (<when>)",
never by its key; their first message names it; F2 renames it starting from that name;
Delete asks, Enter (Cancel, the default) keeps it, and the Delete button deletes it. The
sidebar is read the way a screen reader reads it (its rows' accessible names). Words typed
and not sent are in the composer again after Ctrl+Q and a new launch."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from dbus_fast.errors import DBusError

from tests.helpers.atspi import AtspiError
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney

pytestmark = pytest.mark.timeout(240)

FIRST = "Plan the garden party for Saturday"


async def sessions(j: Journey) -> list[str]:
    """The sidebar's rows as a screen reader reads them."""
    listing = await j.control("list", "Sessions")
    names = []
    for row in await j.atspi.children(listing):
        with contextlib.suppress(AtspiError, DBusError):
            if await j.atspi.role(row) == "list item":
                names.append(await j.atspi.name(row))
    return names


async def wait_sessions(j: Journey, check: object, what: str, timeout: float = 60) -> list[str]:
    """The rows once ``check(rows)`` holds."""
    assert callable(check)
    deadline = time.monotonic() + timeout
    rows: list[str] = []
    while time.monotonic() < deadline:
        rows = await sessions(j)
        if check(rows):
            return rows
        j.alive()
        await asyncio.sleep(0.2)
    raise AssertionError(f"{what}: not seen; rows: {rows}\n{j.app.output()[-3000:]}")


async def click_row(j: Journey, name: str) -> None:
    """Click the sidebar row called ``name``."""
    listing = await j.control("list", "Sessions")
    for row in await j.atspi.children(listing):
        with contextlib.suppress(AtspiError, DBusError):
            if await j.atspi.name(row) == name:
                await j.click(row)
                return
    raise AssertionError(f"no session row {name!r}")


async def texts_showing(j: Journey) -> list[str]:
    """The contents of every editable text on the screen."""
    root = await j.root()
    found = []
    for seen in await j.atspi.walk(root):
        if seen.role == "text":
            with contextlib.suppress(AtspiError, DBusError):
                found.append(await j.atspi.text(seen.node))
    return found


async def test_sessions_are_named_renamed_and_deleted_after_asking(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model) as j:
        await j.control("text", "Message")  # the chat is up once connected
        await wait_sessions(j, lambda rows: rows == ["Main"], "the main session")
        await j.click(await j.control("push button", "New session"))
        rows = await wait_sessions(j, lambda rows: len(rows) == 2, "the new session")
        new = next(r for r in rows if r != "Main")
        assert new.startswith("New session") and "dashboard" not in new, rows
        await j.desktop.screenshot("new-session")

        await j.send(FIRST)
        await j.wait_messages(
            lambda rows: any(r.startswith("FAKE-LLM reply") for r in rows), "the reply"
        )
        await wait_sessions(j, lambda rows: FIRST in rows, "the session named by its message")
        await j.desktop.screenshot("named-by-first-message")

        # F2 renames, starting from the name shown.
        await click_row(j, FIRST)
        await j.desktop.key("F2")
        await j.control("dialog", "Rename session", timeout=20)
        assert FIRST in await texts_showing(j)
        await j.desktop.screenshot("rename")
        await j.desktop.key("ctrl+a")
        await j.desktop.type("Garden party")
        await j.desktop.key("Return")
        await wait_sessions(j, lambda rows: "Garden party" in rows, "the new name")

        # Delete asks; Enter answers Cancel, the default.
        await click_row(j, "Garden party")
        await j.desktop.key("Delete")
        await j.control("alert message", "Delete session", timeout=20)
        await j.desktop.screenshot("delete-asks")
        await j.desktop.key("Return")
        deadline = time.monotonic() + 20
        while await j.showing("alert message", "Delete session"):
            assert time.monotonic() < deadline, "the question stayed open"
            await asyncio.sleep(0.2)
        await asyncio.sleep(1.0)  # a delete, had it been sent, would show by now
        assert "Garden party" in await sessions(j), "Enter on the question deleted it"

        await click_row(j, "Garden party")
        await j.desktop.key("Delete")
        await j.click(await j.control("push button", "Delete", timeout=20))
        await wait_sessions(j, lambda rows: rows == ["Main"], "the session deleted")
        await j.desktop.screenshot("deleted")


async def test_a_draft_survives_quitting_and_starting_again(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    """Typed, not sent, Ctrl+Q: the next launch shows the same words in the composer."""
    draft = "a half-written thought about the garden"
    async with open_journey(model=model) as j:
        composer = await j.control("text", "Message")
        await j.click(composer)
        await j.desktop.type(draft)
        assert await j.atspi.text(composer) == draft
        await j.desktop.screenshot("draft-typed")
        await j.desktop.key("ctrl+q")
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
        j.app.wait_gateway_gone()
        j.app.start()
        j.relaunched()
        composer = await j.control("text", "Message")
        deadline = time.monotonic() + 30
        while await j.atspi.text(composer) != draft:
            assert time.monotonic() < deadline, await j.atspi.text(composer)
            await asyncio.sleep(0.2)
        await j.desktop.screenshot("draft-after-a-restart")
