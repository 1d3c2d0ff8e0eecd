"""Journey: a gateway on another computer (ours in its own process, and the real OpenClaw
gateway) and a wrong token. The
window shows a card in plain words ("The gateway refused this token") with Edit token, Retry,
Choose another gateway and Show details, never the raw protocol text and never wider than the
screen, while the status bar says the chat is paused and needs action (not "connected").
Show details, clicked with the mouse, reveals the technical reason; the person types the
right token into the card and chats; the next launch connects at once with it."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.helpers.atspi import SHOWING
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.journey_app import Journey, approve_own_node, idle
from tests.helpers.real_openclaw import GatewayFactory
from tests.journeys.conftest import OpenJourney

pytestmark = pytest.mark.timeout(300)

TITLE = "The gateway refused this token"
BUTTONS = ("Edit token", "Retry", "Choose another gateway", "Show details")
#: Protocol words a person must never be shown outside the details.
RAW = ("INVALID_REQUEST", "AUTH_TOKEN_MISMATCH", "connect:", "[AUTH", "reconnect paused")


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


async def shown(j: Journey) -> list[tuple[str, str]]:
    """(role, name) of every node on the screen now, as a screen reader finds them."""
    out = []
    for seen in await j.atspi.walk(await j.root()):
        if SHOWING in await j.atspi.states(seen.node):
            out.append((seen.role, seen.name))
    return out


async def chat_status(j: Journey) -> str:
    """The status bar's chat connection text."""
    labels = [n for r, n in await shown(j) if r == "label" and n.startswith("chat: ")]
    assert len(labels) == 1, labels
    return labels[0]


async def assert_within_screen(j: Journey) -> None:
    frame = await j.atspi.extents(await j.control("frame", "OpenClaw"))
    assert frame.width <= j.desktop.width, f"the window is {frame.width} px wide"


async def chat_once(j: Journey, text: str) -> None:
    await j.send(text)
    # The real gateway stamps the message it hands the model (a time before, its runtime
    # line after), and the fake model echoes what it was given.
    answer = re.compile(rf"^FAKE-LLM reply #\d+: (\[[^]]+\] )?{re.escape(text)}(\n|$)")
    await j.wait_messages(lambda rows: any(answer.match(r) for r in rows), "the answer", 60)


async def test_a_wrong_token_is_fixed_from_the_card(
    open_journey: OpenJourney, model: FakeLLM, other_gateway: BundledGateway
) -> None:
    remote = (other_gateway.url, "not-the-token")
    async with open_journey(model=model, remote=remote) as j:
        await _fixed_from_the_card(j, other_gateway.token, real=False)


async def test_a_wrong_token_for_the_real_gateway_is_fixed_from_the_card(
    open_journey: OpenJourney, model: FakeLLM, real_gateway: GatewayFactory
) -> None:
    """The same story against the real OpenClaw gateway: its refusal reads the same in the
    window, and once the token is right its pairing asks are answered in the window."""
    gateway = real_gateway(fake_llm_port=model.port)
    async with open_journey(model=model, remote=(gateway.url, "not-the-token")) as j:
        await _fixed_from_the_card(j, gateway.token, real=True)


async def _fixed_from_the_card(j: Journey, token: str, *, real: bool) -> None:
    edit = await j.control("push button", "Edit token", timeout=60)
    await j.desktop.screenshot("the-card")
    nodes = await shown(j)
    labels = [name for role, name in nodes if role == "label"]
    assert TITLE in labels, labels
    assert any("did not accept the token" in n for n in labels), labels
    visible = [name for _role, name in nodes]
    assert not [n for n in visible if any(word in n for word in RAW)], visible
    for name in BUTTONS:
        assert ("push button", name) in nodes, f"no {name!r} button: {nodes}"
    status = await chat_status(j)
    assert status.startswith("chat: paused: needs action"), status
    assert "connected to" not in status, status
    await assert_within_screen(j)
    # What is painted is the same plain title (read off the screen).
    card = await j.atspi.extents(await j.control("label", TITLE))
    painted = await j.desktop.read("the-title", card.x, card.y, card.width, card.height)
    assert "gateway refused this token" in painted, painted

    await j.click(await j.control("push button", "Show details"))
    details = await j.control("text", "Error details", timeout=10)
    technical = await j.atspi.text(details)
    assert "AUTH_TOKEN_MISMATCH" in technical, technical
    assert "not-the-token" not in technical, "the details never show the token"
    await j.control("push button", "Hide details", timeout=10)
    await j.desktop.screenshot("the-details")
    await assert_within_screen(j)
    assert (await chat_status(j)).startswith("chat: paused: needs action")

    await j.click(edit)
    field = await j.control("text", "Gateway token", timeout=10)
    await j.click(field)
    await j.desktop.type(token)
    await j.desktop.key("Return")
    if real:  # the real gateway asks its owner about this computer's node
        await approve_own_node(j)
    await chat_once(j, "the token works")
    assert (await chat_status(j)).startswith("chat: connected to ")
    await j.desktop.screenshot("chatting")
    await idle(j)  # the real gateway ends its run a moment after the last words
    await j.click(await j.control("text", "Message"))
    await j.desktop.key("ctrl+q")
    assert await j.wait_exit(30) == 0, j.app.output()[-3000:]

    j.app.start()
    j.relaunched()
    await chat_once(j, "still the right token")
    await j.desktop.screenshot("the-next-launch")
    assert token not in j.app.output()
    assert "not-the-token" not in j.app.output()
