"""Journey: switching gateways. The app starts on its bundled gateway and the person chats
there; then *File → Connect to another gateway…*, the second gateway's URL and token typed
into the connect screen (discovery browses loopback only), and the chat goes on there: the
reply comes from the second gateway's model, the first gateway's messages are gone from view,
there is still one Activity panel and the status bar names the new gateway, and the model
picker lists the second gateway's models (another model id than the first's). Ctrl+Q and a new
launch: the app comes back on the second gateway, with its history. Messages still waiting
for a gateway that went away are asked about: Send them there, or Discard them (then they
reach no model and their rows are gone)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dbus_fast.errors import DBusError

from tests.helpers.atspi import AtspiError
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.fake_llm import FakeLLM, find_prompt
from tests.helpers.journey_app import Journey
from tests.journeys.conftest import OpenJourney
from tests.journeys.test_journey_menus import pick

pytestmark = pytest.mark.timeout(360)

FIRST = "hello from the bundled gateway"
SECOND = "hello from the second gateway"
AFTER = "and after the relaunch"
#: The model of the app's bundled gateway (``$OPENAI_MODEL`` of the journey app) and the
#: second gateway's (its ``providers.json``): other ids, so the picker says whose list it shows.
FIRST_MODEL = "openai/fake-model"
SECOND_MODEL = "elsewhere/second-model"


@pytest.fixture
def second_model() -> Iterator[FakeLLM]:
    """The second gateway's own fake model (which model got a prompt says which gateway)."""
    with FakeLLM(chunk_delay_s=0.02) as llm:
        yield llm


def write_providers(state_dir: Path, llm: FakeLLM, ref: str) -> None:
    """``providers.json`` naming ``llm`` as the one model ``ref`` ("provider/id"); read by our
    gateway at start, so written before it starts."""
    provider, model_id = ref.split("/", 1)
    config = {
        "defaultModel": ref,
        "providers": {
            provider: {
                "api": "openai-completions",
                "baseUrl": llm.openai_base_url,
                "models": [{"id": model_id, "name": "Second model", "contextWindow": 128000}],
            }
        },
    }
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "providers.json").write_text(json.dumps(config), "utf-8")


@pytest.fixture
def second_gateway(second_model: FakeLLM) -> Iterator[BundledGateway]:
    """Our gateway as another computer's: its own process, port, state, token and model
    (another id than the first gateway's)."""
    root = Path(tempfile.mkdtemp(prefix="openclaw-second-"))
    write_providers(root / "state", second_model, SECOND_MODEL)
    try:
        gateway = BundledGateway.start(root=root)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    try:
        yield gateway
    finally:
        gateway.stop()
        shutil.rmtree(root, ignore_errors=True)


def answer(text: str) -> re.Pattern[str]:
    return re.compile(rf"^FAKE-LLM reply #\d+: {re.escape(text)}$")


def prompts(llm: FakeLLM) -> list[str]:
    """The user prompts a fake model was asked."""
    return [find_prompt(body.get("messages", []))[0] for body in llm.bodies("/chat/completions")]


async def chat_status(j: Journey, description: str = "Chat connection") -> str:
    """What the status bar says about one connection (the label described so)."""
    for seen in await j.atspi.walk(await j.root()):
        if seen.role == "label":
            with contextlib.suppress(AtspiError, DBusError):
                if await j.atspi.description(seen.node) == description:
                    return seen.name
    raise AssertionError(f"no {description.lower()} status in the window")


async def until_status(j: Journey, expected: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while (status := await chat_status(j)) != expected:
        j.alive()
        assert time.monotonic() < deadline, f"the status bar says {status!r}, not {expected!r}"
        await asyncio.sleep(0.3)


async def status_bar_text(j: Journey) -> str:
    """What a person reads in the status bar (its notes are painted, not labels: OCR)."""
    root = await j.root()
    [bar] = await j.atspi.find(root, lambda n: n.role == "status bar", "the status bar")
    box = await j.atspi.extents(bar.node)
    return await j.desktop.read("status-bar", box.x, box.y, box.width, box.height)


async def picker_models(j: Journey) -> list[str]:
    """The models the model picker offers (its list's items, as a screen reader reads them).
    Qt's bridge names a combo box by its current text, so the picker is the combo box that
    its tooltip describes."""
    for seen in await j.atspi.walk(await j.root()):
        if seen.role == "combo box":
            with contextlib.suppress(AtspiError, DBusError):
                if await j.atspi.description(seen.node) == "The model of this session":
                    items = await j.atspi.walk(seen.node)
                    return [s.name for s in items if s.role == "list item"]
    raise AssertionError("no model picker in the window")


async def until_models(j: Journey, expected: list[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while (offered := await picker_models(j)) != expected:
        j.alive()
        assert time.monotonic() < deadline, f"the model picker offers {offered}, not {expected}"
        await asyncio.sleep(0.3)


async def activity_panels(j: Journey) -> int:
    return sum(
        s.role == "panel" and s.name == "Activity" for s in await j.atspi.walk(await j.root())
    )


async def test_switch_gateway_chat_and_relaunch(
    open_journey: OpenJourney,
    model: FakeLLM,
    second_model: FakeLLM,
    second_gateway: BundledGateway,
) -> None:
    async with open_journey(model=model) as j:
        await j.send(FIRST)
        await j.wait_messages(lambda rows: any(answer(FIRST).match(r) for r in rows), "reply 1")
        await until_status(j, f"chat: connected to 127.0.0.1:{j.app.gateway_port}")
        assert await activity_panels(j) == 1
        await until_models(j, [FIRST_MODEL])
        await j.desktop.screenshot("on-the-bundled-gateway")

        await pick(j, "File", "Connect to another gateway…")
        token = await j.control("text", "Gateway token or password", timeout=20)
        await j.desktop.screenshot("the-connect-screen")
        await j.click(token)
        await j.desktop.type(second_gateway.token)
        url = await j.control("text", "Gateway URL")
        await j.click(url)
        await j.desktop.type(second_gateway.url)
        assert await j.atspi.text(url) == second_gateway.url
        await j.desktop.key("Return")

        await until_status(j, f"chat: connected to 127.0.0.1:{second_gateway.port}")
        await j.control("text", "Message", timeout=60)
        await until_models(j, [SECOND_MODEL])  # the second gateway's list, not the first's
        rows = await j.messages()
        assert not any(FIRST in r for r in rows), f"the old gateway's chat is still shown: {rows}"
        await j.send(SECOND)
        rows = await j.wait_messages(
            lambda rows: any(answer(SECOND).match(r) for r in rows), "the second gateway's reply"
        )
        assert not any(FIRST in r for r in rows), rows
        assert SECOND in prompts(second_model) and SECOND not in prompts(model)
        assert FIRST in prompts(model) and FIRST not in prompts(second_model)
        assert await activity_panels(j) == 1, "a switch must not add another Activity panel"
        assert (await chat_status(j)).endswith(f"127.0.0.1:{second_gateway.port}")
        node = await chat_status(j, "Node connection")
        assert node == f"node: connected to 127.0.0.1:{second_gateway.port}", node
        assert "browsing for _openclaw-gw._tcp.local. on 127.0.0.1" in j.app.output()
        await j.desktop.screenshot("chatting-on-the-second-gateway")

        await j.click(await j.control("text", "Message"))
        await j.desktop.key("ctrl+q")
        assert await j.wait_exit(30) == 0, j.app.output()[-3000:]

        j.app.start()
        j.relaunched()
        await until_status(j, f"chat: connected to 127.0.0.1:{second_gateway.port}", 90)
        rows = await j.wait_messages(
            lambda rows: any(answer(SECOND).match(r) for r in rows), "the history after relaunch"
        )
        assert not any(FIRST in r for r in rows), rows
        await j.desktop.screenshot("relaunched-on-the-second-gateway")
        await j.send(AFTER)
        await j.wait_messages(
            lambda rows: any(answer(AFTER).match(r) for r in rows), "a reply after relaunch"
        )
        assert AFTER in prompts(second_model) and AFTER not in prompts(model)
        assert await activity_panels(j) == 1
        await j.desktop.screenshot("answered-after-the-relaunch")
        assert second_gateway.token not in j.app.output()


@pytest.fixture
def first_gateway(model: FakeLLM) -> Iterator[BundledGateway]:
    """A gateway the app was connected to before (ours, another process), with ``model``."""
    env = {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_MODEL": "fake-model"}
    gateway = BundledGateway.start(env=env)
    try:
        yield gateway
    finally:
        gateway.stop()
        gateway.cleanup()


async def connect_to(j: Journey, gateway: BundledGateway) -> None:
    """*File → Connect to another gateway…*, the token and the URL typed, Enter."""
    await pick(j, "File", "Connect to another gateway…")
    token = await j.control("text", "Gateway token or password", timeout=20)
    await j.click(token)
    await j.desktop.type(gateway.token)
    url = await j.control("text", "Gateway URL")
    await j.click(url)
    await j.desktop.type(gateway.url)
    await j.desktop.key("Return")


async def test_messages_waiting_when_switching_are_asked_about_then_sent_there(
    open_journey: OpenJourney,
    model: FakeLLM,
    second_model: FakeLLM,
    first_gateway: BundledGateway,
    second_gateway: BundledGateway,
) -> None:
    waiting = "written while the gateway was away"
    async with open_journey(model=model, remote=(first_gateway.url, first_gateway.token)) as j:
        await j.send(FIRST)
        await j.wait_messages(lambda rows: any(answer(FIRST).match(r) for r in rows), "reply 1")
        first_gateway.stop()
        deadline = time.monotonic() + 60
        while (await chat_status(j)).startswith("chat: connected"):
            j.alive()
            assert time.monotonic() < deadline, "the status bar still says connected"
            await asyncio.sleep(0.3)
        await j.send(waiting)
        await j.wait_messages(
            lambda rows: any(r.startswith(waiting) and "waiting" in r for r in rows),
            "the message waiting for the gateway",
        )
        await j.desktop.screenshot("a-message-waiting")

        await connect_to(j, second_gateway)
        cancel = await j.control("push button", "Cancel", timeout=20)
        await j.control("push button", "Send them there")
        await j.desktop.screenshot("asked-about-the-waiting-message")
        await j.click(cancel)
        rows = await j.wait_messages(
            lambda rows: any(r.startswith(waiting) for r in rows), "back on the first chat"
        )
        assert any(r.startswith(FIRST) for r in rows), rows

        await connect_to(j, second_gateway)
        await j.click(await j.control("push button", "Send them there", timeout=20))
        await until_status(j, f"chat: connected to 127.0.0.1:{second_gateway.port}")
        rows = await j.wait_messages(
            lambda rows: any(answer(waiting).match(r) for r in rows),
            "the waiting message answered by the second gateway",
        )
        assert not any(FIRST in r for r in rows), rows
        assert prompts(second_model).count(waiting) == 1
        assert waiting not in prompts(model)
        assert await activity_panels(j) == 1
        await j.desktop.screenshot("sent-on-to-the-second-gateway")
        bar = await status_bar_text(j)
        assert "resumes" not in bar and "reconnecting" not in bar, bar


async def test_messages_waiting_when_switching_can_be_discarded(
    open_journey: OpenJourney,
    model: FakeLLM,
    second_model: FakeLLM,
    first_gateway: BundledGateway,
    second_gateway: BundledGateway,
) -> None:
    waiting = "nobody should ever read this"
    async with open_journey(model=model, remote=(first_gateway.url, first_gateway.token)) as j:
        await j.send(FIRST)
        await j.wait_messages(lambda rows: any(answer(FIRST).match(r) for r in rows), "reply 1")
        first_gateway.stop()
        deadline = time.monotonic() + 60
        while (await chat_status(j)).startswith("chat: connected"):
            j.alive()
            assert time.monotonic() < deadline, "the status bar still says connected"
            await asyncio.sleep(0.3)
        await j.send(waiting)
        await j.wait_messages(
            lambda rows: any(r.startswith(waiting) and "waiting" in r for r in rows),
            "the message waiting for the gateway",
        )

        await connect_to(j, second_gateway)
        discard = await j.control("push button", "Discard them", timeout=20)
        asked = await j.atspi.find(
            await j.root(),
            lambda n: n.role == "label" and "reached the current gateway" in n.name,
            "the question about the waiting message",
        )
        assert asked[0].name.startswith("1 message has not reached"), asked[0].name
        await j.desktop.screenshot("asked-about-the-waiting-message")
        await j.click(discard)

        await until_status(j, f"chat: connected to 127.0.0.1:{second_gateway.port}")
        await j.control("text", "Message", timeout=60)
        await until_models(j, [SECOND_MODEL])
        await j.send(SECOND)
        rows = await j.wait_messages(
            lambda rows: any(answer(SECOND).match(r) for r in rows), "the second gateway's reply"
        )
        assert not any(waiting in r for r in rows), f"a discarded message is shown: {rows}"
        assert not any(FIRST in r for r in rows), rows
        assert waiting not in prompts(second_model) and waiting not in prompts(model)
        assert prompts(second_model).count(SECOND) == 1 and FIRST in prompts(model)
        assert await activity_panels(j) == 1
        await j.desktop.screenshot("discarded-and-chatting-on-the-second-gateway")
