"""Journey: File > Pair a phone…, with the mouse. On the bundled gateway the window shows the
setup code to scan; on the real OpenClaw gateway (which serves setup codes without
advertising them, and refuses on a loopback-only bind) it shows the gateway's reason, whole.
Both dialogs are read through AT-SPI and seen in the screenshots."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney, OpenRealJourney
from tests.journeys.test_journey_menus import pick

pytestmark = pytest.mark.timeout(300)


async def _closes(j: Journey, role: str, name: str) -> None:
    deadline = time.monotonic() + 10
    while await j.showing(role, name):
        assert time.monotonic() < deadline, f"{name!r} stayed open"
        await asyncio.sleep(0.1)


async def test_pair_a_phone_shows_the_setup_code(open_journey: OpenJourney, model: FakeLLM) -> None:
    async with open_journey(model=model) as j:
        await j.control("text", "Message")
        await pick(j, "File", "Pair a phone…")
        code = await j.control("text", "Setup code", timeout=30)
        assert len((await j.atspi.text(code)).strip()) > 20
        await j.desktop.screenshot("pair-phone-setup-code")
        dialog = await j.atspi.find_one(await j.root(), "dialog", "Pair a phone")
        close = next(
            s.node
            for s in await j.atspi.walk(dialog)
            if s.role == "push button" and s.name == "Close"  # not the Activity panel's
        )
        await j.click(close)
        await _closes(j, "text", "Setup code")


@pytest.mark.interop
async def test_pair_a_phone_on_the_real_gateway_says_why_not(
    open_on_real_gateway: OpenRealJourney,
) -> None:
    async with open_on_real_gateway() as j:
        await pick(j, "File", "Pair a phone…")
        [reason, *_] = await j.atspi.find(
            await j.root(),
            lambda n: n.role == "label" and n.name.startswith("Gateway is only bound to loopback"),
            "the real gateway's reason",
            30,
        )
        assert "publicUrl" in reason.name
        await j.desktop.screenshot("pair-phone-refused-real-gateway")
        await j.click(await j.control("push button", "OK"))
        await _closes(j, "push button", "OK")
