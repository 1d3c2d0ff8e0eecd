"""Journey: a gateway on another computer (ours, in its own process) and a wrong token. The
window shows a card in plain words with Edit token (never the raw protocol text, never wider
than the screen); the person types the right token there and chats; the next launch connects
at once with it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney

pytestmark = [pytest.mark.journey, pytest.mark.timeout(300)]


@pytest.fixture
def other_gateway(model: FakeLLM) -> Iterator[BundledGateway]:
    """Our gateway as another computer's: its own process, state and token."""
    env = {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_MODEL": "fake-model"}
    gateway = BundledGateway.start(env=env)
    try:
        yield gateway
    finally:
        gateway.stop()
        gateway.cleanup()


async def chat_once(j: Journey, text: str) -> None:
    await j.send(text)
    answer = re.compile(rf"^FAKE-LLM reply #\d+: {re.escape(text)}$")
    await j.wait_messages(lambda rows: any(answer.match(r) for r in rows), "the answer", 60)


async def test_a_wrong_token_is_fixed_from_the_card(
    open_journey: OpenJourney, model: FakeLLM, other_gateway: BundledGateway
) -> None:
    remote = (other_gateway.url, "not-the-token")
    async with open_journey(model=model, remote=remote) as j:
        edit = await j.control("push button", "Edit token", timeout=60)
        await j.desktop.screenshot("the-card")
        names = [s.name for s in await j.atspi.walk(await j.root())]
        assert not any("AUTH_TOKEN_MISMATCH" in n or "INVALID_REQUEST" in n for n in names)
        frame = await j.control("frame", "OpenClaw")
        assert (await j.atspi.extents(frame)).width <= j.desktop.width

        await j.click(edit)
        field = await j.control("text", "Gateway token", timeout=10)
        await j.click(field)
        await j.desktop.type(other_gateway.token)
        await j.desktop.key("Return")
        await chat_once(j, "the token works")
        await j.desktop.screenshot("chatting")
        await j.click(await j.control("text", "Message"))
        await j.desktop.key("ctrl+q")
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]

        j.app.start()
        j.relaunched()
        await chat_once(j, "still the right token")
        await j.desktop.screenshot("the-next-launch")
        assert other_gateway.token not in j.app.output()
