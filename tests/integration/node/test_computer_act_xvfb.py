"""``computer.act`` against a real X client under Xvfb, through our node over loopback.

The real stack (``GatewayConnection`` + ``NodeSession`` + the spec table) behind a scripted
gateway that sends ``node.invoke.request`` as a gateway does; input goes through XTest into a
private Xvfb where a Tk text window (:mod:`tests.helpers.x_text_window`) runs as its own
process. Every check reads what that window reports about itself: its text, insert cursor,
selection, scroll position and the button and key events it received.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openclaw_desktop.config import NodeSettings, SettingsStore
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.node import NodeContext, NodeSession, build_dispatcher
from openclaw_desktop.node.computer_control import descriptor
from openclaw_desktop.node.host import NodeHost
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.approved_node import approved_node
from tests.helpers.bundled_gateway import bundled_gateway, node_options, operator_options
from tests.helpers.desktop_session import (
    XServer,
    xvfb_fixture,  # noqa: F401 - provides the x_server fixture
)
from tests.helpers.scripted_gateway import ScriptedPeer, node_behind_script
from tests.helpers.x_text_window import TextWindow, text_window

pytestmark = pytest.mark.timeout(120)

EXECUTION = str(uuid.uuid4())


@dataclass
class Node:
    """Our node behind a scripted gateway peer, with one execution."""

    peer: ScriptedPeer
    session: NodeSession
    ctx: NodeContext
    settings: dict[str, Any]
    execution: str = field(default_factory=lambda: str(uuid.uuid4()))
    counter: int = 0

    async def send(self, command: str, params: Any) -> str:
        self.counter += 1
        invoke_id = f"inv-{self.counter}"
        payload = {
            "id": invoke_id,
            "nodeId": "node-1",
            "command": command,
            "paramsJSON": params if isinstance(params, str) else json.dumps(params),
            "timeoutMs": 60_000,
        }
        await self.peer.send({"type": "event", "event": "node.invoke.request", "payload": payload})
        return invoke_id

    async def invoke(self, command: str, params: Any) -> dict[str, Any]:
        return await self.peer.invoke_result(await self.send(command, params))

    async def snapshot(self, max_width: int = 320, **extra: Any) -> dict[str, Any]:
        params = {"executionId": self.execution, "maxWidth": max_width, "format": "png", **extra}
        result = await self.invoke("screen.snapshot", params)
        assert result["ok"] is True, result
        return dict(result["payload"])

    async def act(self, action: str, frame: dict[str, Any] | None = None, **fields: Any) -> Any:
        params: dict[str, Any] = {"action": action, "executionId": self.execution, **fields}
        if frame is not None:
            params["displayFrameId"] = frame["displayFrameId"]
            params["refWidth"] = frame["width"]
        return await self.invoke("computer.act", params)


@pytest.fixture
async def node(x_server: XServer) -> AsyncIterator[Node]:
    settings: dict[str, Any] = {"screen": True, "computer": True}
    ctx = NodeContext(settings=lambda: NodeSettings(**settings))
    commands, caps = ("screen.snapshot", "computer.act"), ("screen", "computer")
    async with node_behind_script(ctx, commands, caps) as (peer, session):
        node = Node(peer, session, ctx, settings)
        yield node
        await ctx.computer.close(None)


@pytest.fixture
async def window(x_server: XServer, tmp_path: Path) -> AsyncIterator[TextWindow]:
    async with text_window(x_server.display, tmp_path) as win:
        yield win


def ok(result: dict[str, Any]) -> Any:
    assert result["ok"] is True, result
    return result["payload"]


def error_code(result: dict[str, Any]) -> str:
    assert result["ok"] is False, result
    return str(result["error"]["code"])


async def test_snapshot_issues_a_frame_bound_to_the_execution(
    node: Node, window: TextWindow
) -> None:
    """The v2 snapshot: scaled to maxWidth (half the 640x480 screen), with a frame id, the
    screen index and the capture time; the execution is live (the indicator shows it)."""
    frame = await node.snapshot(320)
    assert (frame["width"], frame["height"], frame["screenIndex"]) == (320, 240, 0)
    assert frame["displayFrameId"].startswith("frame-") and frame["capturedAtMs"] > 0
    assert node.ctx.computer.execution_id == node.execution
    assert "computer" in node.ctx.activity.active
    closed = ok(await node.act("__close_execution", reason="completion"))
    assert closed == {"ok": True}
    assert "computer" not in node.ctx.activity.active


async def test_click_type_keys_drag_and_scroll_change_the_window(
    node: Node, window: TextWindow
) -> None:
    """Coordinates are pixels of the half-size screenshot, mapped onto the screen; each
    action changes the Tk window's own state."""
    frame = await node.snapshot(320)
    # click at image (100, 50) -> screen (200, 100): Tk receives button 1 there
    ok(await node.act("left_click", frame, x=100, y=50))
    clicked = await window.until(lambda s: [1, 200, 100] in s["presses"])
    line = int(clicked["insert"].split(".")[0])
    assert line > 1, clicked  # the insert cursor moved to the clicked line

    ok(await node.act("type", text="Grüße €!"))
    typed = await window.until(lambda s: "Grüße €!" in s["text"])
    assert typed["text"].splitlines()[line - 1].endswith("Grüße €!")

    ok(await node.act("key", keys="Return"))
    ok(await node.act("type", text="next"))
    ok(await node.act("key", keys="BackSpace"))
    await window.until(lambda s: "Grüße €!\nnex\nline" in s["text"])

    ok(await node.act("key", keys="ctrl+shift+t"))
    await window.until(lambda s: s["combos"] == 1)

    # drag across "line 01" from its start: Tk selects what the pointer swept
    ok(await node.act("left_click_drag", frame, fromX=1, fromY=4, x=40, y=4, durationMs=120))
    dragged = await window.until(lambda s: s["selection"].startswith("line"))
    assert 2 <= len(dragged["selection"]) <= 12 and "\n" not in dragged["selection"]

    before = window.state()["top"]
    ok(await node.act("scroll", frame, x=100, y=100, scrollDirection="down", scrollAmount=5))
    scrolled = await window.until(lambda s: s["top"] > before)
    assert sum(1 for p in scrolled["presses"] if p[0] == 5) == 5


async def test_the_other_buttons_holds_and_their_release(node: Node, window: TextWindow) -> None:
    """Right, middle, double and triple clicks, mouse down/up across invokes, a held key:
    all reach the window, and everything pressed is released."""
    frame = await node.snapshot(640)
    ok(await node.act("right_click", frame, x=300, y=200))
    ok(await node.act("middle_click", frame, x=300, y=210))
    ok(await node.act("double_click", frame, x=20, y=8))
    await window.until(lambda s: s["selection"] == "line")  # a double click selects a word
    ok(await node.act("triple_click", frame, x=20, y=8))
    await window.until(lambda s: s["selection"].startswith("line 01"))  # a line
    ok(await node.act("left_mouse_down", frame, x=10, y=30))
    await window.until(lambda s: [1, 10, 30] in s["presses"])
    ok(await node.act("mouse_move", frame, x=60, y=30))
    ok(await node.act("left_mouse_up", frame, x=60, y=30))
    state = await window.until(lambda s: [1, 60, 30] in s["releases"])
    assert [3, 300, 200] in state["presses"] and [2, 300, 210] in state["presses"]
    up_again = await node.act("left_mouse_up")
    assert error_code(up_again) == "COMPUTER_INVALID_REQUEST"
    assert "left button is not held by computer control" in up_again["error"]["message"]

    ok(await node.act("hold_key", keys="shift", durationMs=300))
    held = await window.until(lambda s: "Shift_L" in s["key_releases"])
    assert held["keys"].count("Shift_L") == 1
    final = window.state()
    assert sorted(p[0] for p in final["presses"]) == sorted(r[0] for r in final["releases"])


async def test_cancel_stops_typing_and_releases(node: Node, window: TextWindow) -> None:
    """node.invoke.cancel stops a long type before the next character: CANCELLED, only part
    of the text arrived, no key stays down, and the node answers the next action."""
    await node.snapshot(320)
    text = "x" * 2000
    invoke_id = await node.send(
        "computer.act", {"action": "type", "executionId": node.execution, "text": text}
    )
    await window.until(lambda s: s["text"].count("x") >= 20)
    cancel = {"invokeId": invoke_id, "nodeId": "node-1"}
    await node.peer.send({"type": "event", "event": "node.invoke.cancel", "payload": cancel})
    result = await node.peer.invoke_result(invoke_id)
    assert error_code(result) == "CANCELLED"
    await asyncio.sleep(0.5)
    count = window.state()["text"].count("x")
    assert 20 <= count < len(text)
    await asyncio.sleep(0.3)
    assert window.state()["text"].count("x") == count  # nothing typed after the cancel
    state = window.state()
    assert len(state["keys"]) == len(state["key_releases"])
    ok(await node.act("key", keys="Return"))


async def test_frames_are_refused_when_stale(node: Node, window: TextWindow) -> None:
    """An unknown frame, a frame of an ended execution, another reference width, a
    mismatched screenIndex, coordinates outside the image, another execution: typed
    refusals that touch nothing."""
    frame = await node.snapshot(320)
    presses = len(window.state()["presses"])
    bogus = dict(frame, displayFrameId="frame-guessed")
    assert error_code(await node.act("left_click", bogus, x=1, y=1)) == "COMPUTER_STALE_FRAME"
    assert error_code(await node.act("left_click", x=1, y=1)) == "COMPUTER_STALE_FRAME"
    other_width = dict(frame, width=500)
    stale = await node.act("left_click", other_width, x=1, y=1)
    assert stale["error"]["message"] == (
        "the coordinate reference width changed; take a new screenshot"
    )
    wrong_screen = await node.act("left_click", frame, x=1, y=1, screenIndex=1)
    assert error_code(wrong_screen) == "COMPUTER_STALE_FRAME"
    outside = await node.act("left_click", frame, x=320, y=10)
    assert error_code(outside) == "COMPUTER_INVALID_REQUEST"
    busy = await node.invoke(
        "computer.act", {"action": "key", "keys": "a", "executionId": str(uuid.uuid4())}
    )
    assert busy["error"] == {
        "code": "COMPUTER_HOST_BUSY",
        "message": "another provider execution owns this computer",
    }
    ok(await node.act("__close_execution"))
    ended = await node.act("left_click", frame, x=1, y=1)
    assert error_code(ended) == "COMPUTER_STALE_FRAME"
    await asyncio.sleep(0.3)
    assert len(window.state()["presses"]) == presses


async def test_stop_takes_control_back(node: Node, window: TextWindow) -> None:
    """The user's Stop (the indicator's, through the session) ends the execution at once,
    releases a held button and refuses more input until control is switched off and on."""
    frame = await node.snapshot(640)
    ok(await node.act("left_mouse_down", frame, x=50, y=50))
    await window.until(lambda s: [1, 50, 50] in s["presses"])
    await node.ctx.computer.stop()
    await window.until(lambda s: [1, 50, 50] in s["releases"])
    assert "computer" not in node.ctx.activity.active
    refused = await node.act("key", keys="a")
    assert error_code(refused) == "COMPUTER_DRIVER_UNAVAILABLE"
    assert "Stop" in refused["error"]["message"]
    node.settings["computer"] = False
    off = await node.act("key", keys="a")
    assert error_code(off) == "COMPUTER_DRIVER_UNAVAILABLE"
    node.ctx.computer.resume()  # the node host does this when the setting goes off
    node.settings["computer"] = True
    ok(await node.act("key", keys="a"))
    await window.until(lambda s: "a" in s["keys"])


# ---------------------------------------------------------------- through our gateway

#: Not v2 computer actions: the gateway's cua-computer policy refuses them before dispatch.
UNCLASSIFIABLE: list[Any] = [
    {"action": "left_click", "executionId": "nope", "x": 1, "y": 1},
    {"action": "teleport", "executionId": EXECUTION},
    {"action": "left_click", "executionId": EXECUTION, "x": "ten", "y": 1},
    {"action": "left_click", "executionId": EXECUTION, "x": 1, "y": 1, "extra": True},
    {"action": "scroll", "executionId": EXECUTION, "scrollDirection": "diagonal"},
    {"action": "type", "executionId": EXECUTION, "text": 5},
    {"action": "hold_key", "executionId": EXECUTION, "keys": "a", "durationMs": -1},
    [1, 2],
    "text",
]
#: Well-formed v2 actions this node still refuses (typed COMPUTER_* from the node).
REFUSED_BY_THE_NODE: list[Any] = [
    {"action": "left_click"},  # no executionId
    {"action": "key", "executionId": EXECUTION, "keys": "hyper+q"},
    {"action": "left_click", "executionId": EXECUTION, "x": 1, "y": 1},  # no frame
    {"action": "list_windows", "executionId": EXECUTION},
]
CLASSIFICATION_FAILED = {
    "nodeCommandDispatched": False,
    "code": "PLUGIN_POLICY_RISK_CLASSIFICATION_FAILED",
}


async def test_malformed_requests_through_the_bundled_gateway(
    tmp_path: Path, x_server: XServer, window: TextWindow
) -> None:
    """An operator's node.invoke computer.act through our gateway (started with the app's
    allowlist, the surface approved): a request that is no v2 computer action is refused by
    the gateway before dispatch (as the real gateway's cua-computer policy does: the node
    handles none of them), a well-formed one the node cannot perform gets one typed
    COMPUTER_* error from the node; nothing reaches the window, and the node stays
    connected and still acts."""
    settings = NodeSettings(screen=True, computer=True)
    dispatcher = build_dispatcher(NodeContext(settings=lambda: settings))
    async with (
        bundled_gateway(tmp_path / "gw", nodes_allow=list(EMBEDDED_ALLOW)) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
        # as the node host sends it with both commands
        approved_node(gw.url, operator, dispatcher, settings, computer_use=descriptor()) as node,
    ):
        assert {"screen.snapshot", "computer.act"} <= set(node.surface.commands)
        assert "computer" in node.surface.caps
        assert "computer.act" in node.requested["commands"]
        invoke = node.invoke
        for params in UNCLASSIFIABLE:
            with pytest.raises(GatewayError) as refused:
                await invoke("computer.act", params)
            assert (refused.value.code, refused.value.message) == (
                "INVALID_REQUEST",
                "node.invoke computer.act arguments could not be classified by plugin cua-computer",
            ), params
            assert refused.value.details == CLASSIFICATION_FAILED, params
        assert node.session.handled == 0
        for params in REFUSED_BY_THE_NODE:
            with pytest.raises(GatewayError) as caught:
                await invoke("computer.act", params)
            # relayed the policy's way: INVALID_REQUEST, the node's own message and code
            node_error = caught.value.details["nodeError"]
            assert node_error["code"].startswith("COMPUTER_"), (params, caught.value.details)
            assert caught.value.code == "INVALID_REQUEST", (params, caught.value)
            assert caught.value.message == node_error["message"], (params, caught.value)
            assert caught.value.details == {
                "nodeError": node_error,
                "nodeCommandDispatched": True,
                "code": node_error["code"],
            }
        assert node.session.handled == len(REFUSED_BY_THE_NODE)
        assert window.state()["presses"] == [] and window.state()["keys"] == []
        frame = (
            await invoke(
                "screen.snapshot",
                {"executionId": EXECUTION, "maxWidth": 640, "quality": 0.85, "format": "jpeg"},
            )
        )["payload"]
        assert frame["displayFrameId"] and frame["width"] == 640
        clicked = await invoke(
            "computer.act",
            {
                "action": "left_click",
                "executionId": EXECUTION,
                "displayFrameId": frame["displayFrameId"],
                "refWidth": 640,
                "x": 30,
                "y": 30,
            },
        )
        assert clicked["payload"]["ok"] is True
        await window.until(lambda s: [1, 30, 30] in s["presses"])
        typed = await invoke(
            "computer.act", {"action": "type", "executionId": EXECUTION, "text": "via gw"}
        )
        assert typed["payload"] == {"ok": True, "details": {"action": "type"}}
        await window.until(lambda s: "via gw" in s["text"])


async def test_the_hosts_stop_switches_computer_control_off(
    tmp_path: Path, x_server: XServer, window: TextWindow
) -> None:
    """The indicator's Stop reaches the node host as ``cancel_running("computer.")``: the
    execution ends (the held button is released in the window) and settings.json says
    Computer control is off; switching it off is what lifts the Stop."""
    store = SettingsStore(tmp_path / "settings.json")
    store.set("node.screen", "on")
    store.set("node.computer", "on")
    options = node_options(
        "ws://127.0.0.1:9",
        (),
        (),
        identity=DeviceIdentity.generate(),
        credentials=CredentialStore(MemorySecretStore()),
    )
    host = NodeHost(options, store)
    snap = await host.dispatcher.dispatch(
        "screen.snapshot", {"executionId": EXECUTION, "maxWidth": 640}
    )
    frame = snap.payload
    down = await host.dispatcher.dispatch(
        "computer.act",
        {
            "action": "left_mouse_down",
            "executionId": EXECUTION,
            "displayFrameId": frame["displayFrameId"],
            "x": 70,
            "y": 70,
        },
    )
    assert down.ok, down
    await window.until(lambda s: [1, 70, 70] in s["presses"])
    assert host.session.cancel_running("computer.") == 0  # nothing running, but stopped
    await window.until(lambda s: [1, 70, 70] in s["releases"])
    control = host.ctx.computer
    assert store.load().node.computer is False
    assert (control.stopped, control.execution_id) == (True, None)
    await host.apply(store.load())
    assert (control.stopped, control.execution_id) == (False, None)  # lifted
    await host.aclose()


async def test_an_idle_execution_ends_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """No snapshot or action for EXECUTION_IDLE_S: the execution closes (the indicator goes,
    its close hooks run) and another execution may take the computer."""
    from openclaw_desktop.node import computer_control

    monkeypatch.setattr(computer_control, "EXECUTION_IDLE_S", 0.2)
    heard: list[bool] = []
    control = computer_control.ComputerControl(live=heard.append)
    control.claim(EXECUTION)
    await asyncio.sleep(0.1)
    control.claim(EXECUTION)  # used again: the idle time starts over
    async with asyncio.timeout(5):
        while control.execution_id is not None:
            await asyncio.sleep(0.02)
    assert heard == [True, False]
    control.claim(str(uuid.uuid4()))
    await control.close(None)
