"""Journey: a first message. The app starts on its bundled gateway; the person clicks into
the composer (found by its accessible name), types, presses Enter, and watches the fake
model's reply stream in; with no tray on this desktop, closing the window quits the app and
its gateway."""

from __future__ import annotations

import re

import pytest

from tests.helpers.fake_llm import FakeLLM
from tests.journeys.conftest import OpenJourney

pytestmark = pytest.mark.timeout(240)

PROMPT = "Hello from the journey: please answer with a sentence long enough to stream in pieces"
REPLY = re.compile(r"^FAKE-LLM reply #\d+: " + re.escape(PROMPT) + "$")


async def test_type_a_message_and_watch_the_reply_stream(
    open_journey: OpenJourney, model: FakeLLM
) -> None:
    async with open_journey(model=model) as j:
        await j.control("text", "Message")  # the chat is up once connected
        await j.desktop.screenshot("connected")
        await j.send(PROMPT)

        def streaming(rows: list[str]) -> bool:
            return any(r.startswith("FAKE-LLM reply") and not REPLY.match(r) for r in rows)

        partial = await j.wait_messages(streaming, "part of the reply", timeout=60)
        await j.desktop.screenshot("streaming")
        done = await j.wait_messages(
            lambda rows: any(REPLY.match(r) for r in rows), "the whole reply", timeout=60
        )
        await j.desktop.screenshot("replied")
        assert done.index(PROMPT) < next(i for i, r in enumerate(done) if REPLY.match(r))
        cut = next(r for r in partial if r.startswith("FAKE-LLM reply"))
        full = next(r for r in done if REPLY.match(r))
        assert full.startswith(cut) and cut != full
        assert await j.atspi.text(await j.control("text", "Message")) == ""

        # No tray here: the window's close button quits, and the gateway goes with it.
        [window] = await j.main_windows()
        await j.desktop.close_window(window)
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]
        j.app.wait_gateway_gone()
