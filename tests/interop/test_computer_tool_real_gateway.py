"""The REAL OpenClaw gateway's AGENT drives our node through its built-in ``computer`` tool.

The real gateway (2026.9.6) runs the scripted fake model as a vision model (``input``
``["text", "image"]``: the tool is only offered to vision models). With no ``tools.profile``
configured its default tool policy already offers ``computer`` (seen in the fake model's
request). Our headless node runs with Screen and Computer control on a private Xvfb where the
Tk text window of :mod:`tests.helpers.x_text_window` runs, paired and its surface approved.

The tool keeps its frames per agent run (a new run has "no screenshot of this computer"), and
the fake model makes one tool call per user message, so the later messages are STEERED into
the running turn (``queueMode: "steer"``) while the fake streams its answer to the previous
tool result slowly: one run, one tool instance, like a model that screenshots then clicks.

1. ``screenshot`` with ``target: "node"``: the tool result the gateway hands the model names a
   ``frameId`` and an image follows it;
2. ``left_click`` at a coordinate of that frame, echoing its ``frameId``, then ``type``: the
   window's own state shows the click and the text, and both results say ``"ok": true``;
3. ``left_click`` with a guessed ``frameId``: the tool tells the model the frameId does not
   match the most recent screenshot and nothing reaches the window.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QImage

from tests.helpers.bundled_gateway import RawClient, raw_operator
from tests.helpers.computer_node import COMPUTER_COMMANDS, paired_computer_node
from tests.helpers.desktop_session import xvfb
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.real_openclaw import GatewayFactory, RealGateway
from tests.helpers.x_text_window import TextWindow, text_window

pytestmark = pytest.mark.timeout(420)

#: Seconds between the fake model's chunks: its answer to a tool result (~27 chunks) streams
#: long enough for the next message to be steered into the same run.
CHUNK_DELAY_S = 0.4
STEP_TIMEOUT_S = 150.0
FRAME_RE = re.compile(r"frameId ([0-9a-f-]{36})\)")


@dataclass
class ToolResult:
    """The computer tool's result as the fake model received it: its text and images."""

    text: str
    images: list[str]


@dataclass
class Agent:
    """The real gateway with the fake model, an operator on it, our node and the window."""

    gw: RealGateway
    llm: FakeLLM
    op: RawClient
    node_id: str
    window: TextWindow
    seen: int = 0

    async def say(self, message: str, *, steer: bool = False) -> ToolResult:
        """Send ``message`` (steered into the running turn) and wait for the next tool result
        in a request to the fake model."""
        params: dict[str, Any] = {
            "sessionKey": "main",
            "message": message,
            "idempotencyKey": f"k-{time.monotonic_ns()}",
        }
        if steer:
            params["queueMode"] = "steer"
        ack = await self.op.call("chat.send", params, timeout=30)
        assert ack["ok"] is True, ack
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while time.monotonic() < deadline:
            for body in self.llm.bodies("/chat/completions"):
                result = self._new_result(body.get("messages") or [])
                if result is not None:
                    return result
            await asyncio.sleep(0.2)
        raise AssertionError(f"no tool result for {message!r}: {self.gw.log_tail(40)}")

    def _new_result(self, messages: list[dict[str, Any]]) -> ToolResult | None:
        tools = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        if len(tools) <= self.seen:
            return None
        self.seen = len(tools)
        at = tools[-1]
        images: list[str] = []
        follow = messages[at + 1] if at + 1 < len(messages) else {}
        if follow.get("role") == "user" and isinstance(follow.get("content"), list):
            images = [
                p["image_url"]["url"] for p in follow["content"] if p.get("type") == "image_url"
            ]
        return ToolResult(str(messages[at].get("content")), images)

    async def finished(self) -> None:
        """Wait for the run's final chat event."""
        await self.op.wait_event(
            "chat", lambda e: e["payload"].get("state") == "final", timeout=STEP_TIMEOUT_S
        )


def call(args: dict[str, Any]) -> str:
    return "CALLTOOL:computer:" + json.dumps(args)


@pytest.fixture
async def agent(real_gateway: GatewayFactory, tmp_path: Path) -> AsyncIterator[Agent]:
    with FakeLLM(chunk_delay_s=CHUNK_DELAY_S) as llm, xvfb() as screen:
        gw = real_gateway(
            allow=tuple(sorted(COMPUTER_COMMANDS)), fake_llm_port=llm.port, fake_llm_vision=True
        )
        async with (
            text_window(screen.display, tmp_path) as window,
            paired_computer_node(gw, screen.display, tmp_path / "desktop") as node_id,
            raw_operator(
                gw.url, auth={"token": gw.token}, client_id="cli", client_mode="cli"
            ) as op,
        ):
            yield Agent(gw, llm, op, node_id, window)


async def test_the_agents_computer_tool_screenshots_clicks_and_types_on_our_node(
    agent: Agent, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Screenshot → frameId and image; click on that frame and type reach the Tk window;
    a guessed frameId is refused as not the most recent screenshot, nothing reaches it."""
    shot = await agent.say(call({"action": "screenshot", "target": "node", "node": agent.node_id}))
    shots = tmp_path_factory.mktemp("computer-tool-real-gateway")
    tools = [t["function"]["name"] for t in agent.llm.bodies("/chat/completions")[0]["tools"]]
    assert "computer" in tools, tools
    frame = FRAME_RE.search(shot.text)
    assert frame and shot.text.startswith("screenshot 640x480 (screen 0"), shot.text
    assert len(shot.images) == 1 and shot.images[0].startswith("data:image/jpeg;base64,")
    picture = QImage.fromData(base64.b64decode(shot.images[0].split(",", 1)[1]))
    assert (picture.width(), picture.height()) == (640, 480)
    picture.save(str(shots / "01-screenshot-the-model-got.png"))

    click = {"action": "left_click", "coordinate": [100, 60], "frameId": frame.group(1)}
    clicked = await agent.say(call(click), steer=True)
    assert json.loads(clicked.text.splitlines()[0])["ok"] is True, clicked.text
    clicked_state = await agent.window.until(lambda s: [1, 100, 60] in s["presses"])
    # Which line y=60 is depends on the font's line height: the window says where its
    # insert cursor went (past the end of that line, x=100).
    line = int(clicked_state["insert"].split(".")[0])
    assert line > 1, clicked_state

    typed = await agent.say(call({"action": "type", "text": "hello from the agent"}), steer=True)
    assert json.loads(typed.text.splitlines()[0]) == {
        "action": "type",
        "ok": True,
        "details": {"action": "type"},
    }, typed.text
    # clicked past the end of that line, so the text lands there
    await agent.window.until(lambda s: f"line {line:02d}hello from the agent\n" in s["text"])
    after_typing = base64.b64decode(typed.images[0].split(",", 1)[1])
    QImage.fromData(after_typing).save(str(shots / "02-after-typing.png"))
    assert FRAME_RE.search(typed.text), typed.text  # the tool looks again after input

    before = agent.window.state()
    guessed = dict(click, coordinate=[300, 300], frameId="frame-guessed")
    stale = await agent.say(call(guessed), steer=True)
    assert json.loads(stale.text) == {
        "status": "error",
        "tool": "computer",
        "error": "computer: frameId does not match the most recent screenshot result;"
        " take a new screenshot",
    }, stale.text
    await agent.finished()
    after = agent.window.state()
    assert (after["presses"], after["keys"]) == (before["presses"], before["keys"])
