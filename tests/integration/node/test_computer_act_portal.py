"""``computer.act`` and ``screen.snapshot`` on a Wayland session, through the desktop portal.

A private ``dbus-daemon --session`` carries a portal service of our own
(:mod:`tests.helpers.portal_service`: the real interface names, object path and bus name,
the Request/Response pattern, a PNG for Screenshot). The session looks like pure Wayland
(``WAYLAND_DISPLAY`` and ``XDG_SESSION_TYPE=wayland``, no ``DISPLAY``). Our node's real
handlers are driven through the real connection and session stack behind a scripted gateway,
and once through the bundled gateway's ``node.invoke`` over loopback.

What this proves: our calls, their arguments and our handling of the portal's answers
(success, the user refusing, interfaces missing), against the interface as specified. It
does not prove a real compositor reacts: none can run here.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.config.paths import HOME_ENV
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.node import NodeContext, build_dispatcher
from openclaw_desktop.node.computer_control import descriptor
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.approved_node import approved_node
from tests.helpers.bundled_gateway import bundled_gateway, operator_options, wait_for
from tests.helpers.desktop_session import (
    dbus_session_fixture,  # noqa: F401 - provides the dbus_session fixture
)
from tests.helpers.portal_service import PortalService, StreamSpec, png_image
from tests.helpers.scripted_gateway import ScriptedPeer, node_behind_script

pytestmark = pytest.mark.timeout(60)

BTN_LEFT, BTN_RIGHT, BTN_MIDDLE = 0x110, 0x111, 0x112
MOTION, BUTTON = "NotifyPointerMotionAbsolute", "NotifyPointerButton"
KEYSYM, AXIS = "NotifyKeyboardKeysym", "NotifyPointerAxisDiscrete"


@pytest.fixture
def wayland(dbus_session: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A pure Wayland session on the private bus; the app's folders under ``tmp_path``."""
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    monkeypatch.setenv("XDG_SESSION_TYPE", "wayland")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    (tmp_path / "shots").mkdir()
    return dbus_session


@dataclass
class Node:
    """Our node behind a scripted gateway peer, with one execution."""

    peer: ScriptedPeer
    ctx: NodeContext
    execution: str = field(default_factory=lambda: str(uuid.uuid4()))
    counter: int = 0

    async def send(self, command: str, params: Any) -> str:
        self.counter += 1
        invoke_id = f"inv-{self.counter}"
        payload = {
            "id": invoke_id,
            "nodeId": "node-1",
            "command": command,
            "paramsJSON": json.dumps(params),
            "timeoutMs": 30_000,
        }
        await self.peer.send({"type": "event", "event": "node.invoke.request", "payload": payload})
        return invoke_id

    async def invoke(self, command: str, params: Any) -> dict[str, Any]:
        return await self.peer.invoke_result(await self.send(command, params))

    async def snapshot(self, max_width: int = 400) -> dict[str, Any]:
        params = {"executionId": self.execution, "maxWidth": max_width, "format": "png"}
        return dict(ok(await self.invoke("screen.snapshot", params)))

    async def act(self, action: str, frame: dict[str, Any] | None = None, **fields: Any) -> Any:
        params: dict[str, Any] = {"action": action, "executionId": self.execution, **fields}
        if frame is not None:
            params["displayFrameId"] = frame["displayFrameId"]
            params["refWidth"] = frame["width"]
        return await self.invoke("computer.act", params)


@pytest.fixture
async def node(wayland: str) -> AsyncIterator[Node]:
    ctx = NodeContext(settings=lambda: NodeSettings(screen=True, computer=True))
    commands, caps = ("screen.snapshot", "computer.act"), ("screen", "computer")
    async with node_behind_script(ctx, commands, caps) as (peer, _session):
        yield Node(peer, ctx)
        await ctx.computer.close(None)


def ok(result: dict[str, Any]) -> Any:
    assert result["ok"] is True, result
    return result["payload"]


def error_of(result: dict[str, Any]) -> tuple[str, str]:
    assert result["ok"] is False, result
    return str(result["error"]["code"]), str(result["error"]["message"])


def token_file(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state" / "portal-remote-desktop.token"


async def test_snapshot_comes_from_the_screenshot_portal(node: Node, tmp_path: Path) -> None:
    """Screenshot(interactive=false) with a handle_token; the portal's PNG (800x600, red
    then blue) comes back scaled to maxWidth with a frame; its file is deleted."""
    async with PortalService.running(node_bus(), tmp_path / "shots") as portal:
        frame = await node.snapshot(400)
        plain = ok(await node.invoke("screen.snapshot", {"format": "jpeg", "maxWidth": 100}))
    assert (frame["width"], frame["height"], frame["screenIndex"]) == (400, 300, 0)
    assert frame["displayFrameId"].startswith("frame-")
    assert (plain["format"], plain["width"], plain["height"]) == ("jpeg", 100, 75)
    assert portal.members("Screenshot") == ["Screenshot", "Screenshot"]
    options = portal.options_of("Screenshot")
    assert options["interactive"] is False and options["handle_token"].startswith("openclaw_")
    assert len(portal.files) == 2 and not any(path.exists() for path in portal.files)
    image = cv2.imdecode(np.frombuffer(base64.b64decode(frame["base64"]), np.uint8), 1)
    assert image is not None and image.shape == (300, 400, 3)
    assert tuple(image[150, 50]) == (0, 0, 255) and tuple(image[150, 350]) == (255, 0, 0)
    assert portal.members("RemoteDesktop") == []  # a screenshot asks for no input session


async def test_actions_go_through_one_remote_desktop_session(node: Node, tmp_path: Path) -> None:
    """The session is set up once (keyboard|pointer, persisted; monitors), every action
    becomes the portal's Notify calls (stream-relative logical pixels, evdev buttons,
    keysyms, discrete wheel steps); closing the execution closes the session and keeps the
    restore token (0600) for the next one, which sends it back."""
    async with PortalService.running(node_bus(), tmp_path / "shots") as portal:
        frame = await node.snapshot(400)  # image pixel (100, 50) = desktop (200, 100)
        ok(await node.act("left_click", frame, x=100, y=50))
        ok(await node.act("right_click", frame, x=10, y=10))
        ok(await node.act("middle_click", frame, x=10, y=10))
        ok(await node.act("type", text="Aé"))
        ok(await node.act("key", keys="ctrl+shift+t"))
        ok(await node.act("scroll", frame, x=100, y=50, scrollDirection="down", scrollAmount=3))
        ok(await node.act("scroll", frame, x=100, y=50, scrollDirection="left", scrollAmount=1))
        assert portal.members("RemoteDesktop")[:3] == ["CreateSession", "SelectDevices", "Start"]
        assert portal.members("ScreenCast") == ["SelectSources"]
        devices = portal.options_of("SelectDevices")
        assert devices["types"] == 3 and devices["persist_mode"] == 2
        assert "restore_token" not in devices
        assert portal.options_of("SelectSources")["types"] == 1
        session = next(body[0] for _, member, body in portal.calls if member == "Start")
        assert session.startswith("/org/freedesktop/portal/desktop/session/")
        assert portal.events == [
            (MOTION, 44, 100.0, 50.0),  # the 800x600 desktop is a 400x300 logical stream
            (BUTTON, BTN_LEFT, 1),
            (BUTTON, BTN_LEFT, 0),
            (MOTION, 44, 10.0, 10.0),
            (BUTTON, BTN_RIGHT, 1),
            (BUTTON, BTN_RIGHT, 0),
            (MOTION, 44, 10.0, 10.0),
            (BUTTON, BTN_MIDDLE, 1),
            (BUTTON, BTN_MIDDLE, 0),
            (KEYSYM, 0x41, 1),
            (KEYSYM, 0x41, 0),
            (KEYSYM, 0xE9, 1),
            (KEYSYM, 0xE9, 0),
            (KEYSYM, 0xFFE3, 1),
            (KEYSYM, 0xFFE1, 1),
            (KEYSYM, 0x74, 1),
            (KEYSYM, 0x74, 0),
            (KEYSYM, 0xFFE1, 0),
            (KEYSYM, 0xFFE3, 0),
            (MOTION, 44, 100.0, 50.0),
            (AXIS, 0, 3),
            (MOTION, 44, 100.0, 50.0),
            (AXIS, 1, -1),
        ]
        assert ok(await node.act("__close_execution", reason="completion")) == {"ok": True}
        assert portal.closed == [session]
        stored = token_file(tmp_path)
        assert stored.read_text() == portal.tokens[0]
        assert stat.S_IMODE(os.stat(stored).st_mode) == 0o600

        node.execution = str(uuid.uuid4())
        frame = await node.snapshot(400)
        ok(await node.act("mouse_move", frame, x=0, y=0))
        assert portal.options_of("SelectDevices")["restore_token"] == portal.tokens[0]
        assert stored.read_text() == portal.tokens[1]


async def test_several_monitors_map_onto_their_streams(node: Node, tmp_path: Path) -> None:
    """Two 400x300 streams side by side and a 1600x600 screenshot (scale 2): a point in
    the right half goes to the second stream, relative to its position."""
    streams = (StreamSpec(51, (0, 0), (400, 300)), StreamSpec(52, (400, 0), (400, 300)))
    image = png_image(1600, 600)
    async with PortalService.running(
        node_bus(), tmp_path / "shots", streams=streams, image=image
    ) as portal:
        frame = await node.snapshot(800)  # half size: image (500, 100) = desktop (1000, 200)
        ok(await node.act("mouse_move", frame, x=500, y=100))
        ok(await node.act("mouse_move", frame, x=100, y=100))
    assert portal.events == [(MOTION, 52, 100.0, 100.0), (MOTION, 51, 100.0, 100.0)]


async def test_held_button_is_released_by_stop(node: Node, tmp_path: Path) -> None:
    """left_mouse_down holds across invokes; the user's Stop releases it, closes the
    session and refuses further control."""
    async with PortalService.running(node_bus(), tmp_path / "shots") as portal:
        frame = await node.snapshot(400)
        ok(await node.act("left_mouse_down", frame, x=20, y=20))
        ok(await node.act("mouse_move", frame, x=40, y=20))
        assert portal.events[-2:] == [(BUTTON, BTN_LEFT, 1), (MOTION, 44, 40.0, 20.0)]
        await node.ctx.computer.stop()
        assert portal.events[-1] == (BUTTON, BTN_LEFT, 0)
        assert len(portal.closed) == 1
        code, message = error_of(await node.act("mouse_move", frame, x=1, y=1))
    assert code == "COMPUTER_DRIVER_UNAVAILABLE" and "Stop" in message


async def test_a_session_the_desktop_ended_is_started_again(node: Node, tmp_path: Path) -> None:
    """The compositor ends the session (its Notify calls are refused): that action is
    COMPUTER_DRIVER_UNAVAILABLE naming the refusal, and the next one starts a new session."""
    async with PortalService.running(node_bus(), tmp_path / "shots") as portal:
        frame = await node.snapshot(400)
        ok(await node.act("mouse_move", frame, x=2, y=2))
        portal.revoke()
        code, message = error_of(await node.act("mouse_move", frame, x=4, y=4))
        assert code == "COMPUTER_DRIVER_UNAVAILABLE"
        assert "refused NotifyPointerMotionAbsolute" in message
        ok(await node.act("mouse_move", frame, x=6, y=6))
    assert portal.members("RemoteDesktop").count("Start") == 2
    assert len(portal.closed) == 1  # the ended session was closed on our side too
    moves = [event for event in portal.events if event[0] == MOTION]
    assert moves == [(MOTION, 44, 2.0, 2.0), (MOTION, 44, 6.0, 6.0)]


async def test_a_frame_of_another_size_is_stale(node: Node, tmp_path: Path) -> None:
    """The desktop changed size between two screenshots: the older frame is refused, the
    newer one works."""
    async with PortalService.running(node_bus(), tmp_path / "shots") as portal:
        old = await node.snapshot(400)
        portal.image = png_image(1000, 500)
        new = await node.snapshot(400)
        code, message = error_of(await node.act("left_click", old, x=10, y=10))
        assert code == "COMPUTER_STALE_FRAME" and "geometry changed" in message
        assert portal.events == []
        ok(await node.act("left_click", new, x=10, y=10))
        second = await node.invoke(
            "screen.snapshot", {"executionId": node.execution, "screenIndex": 1}
        )
    assert error_of(second)[0] == "INVALID_REQUEST"  # as the X11 path answers it
    assert "there is 1" in error_of(second)[1]


async def test_the_user_refusing_is_a_typed_error(node: Node, tmp_path: Path) -> None:
    """Response 1 to Start (the user said no in the dialog): COMPUTER_DRIVER_UNAVAILABLE
    naming it, the half-made session closed, no input sent; the next action asks again.
    Response 1 to Screenshot: UNAVAILABLE naming it, no file left behind."""
    async with PortalService.running(node_bus(), tmp_path / "shots", start_response=1) as portal:
        frame = await node.snapshot(400)
        code, message = error_of(await node.act("left_click", frame, x=10, y=10))
        assert code == "COMPUTER_DRIVER_UNAVAILABLE"
        assert "user refused remote control" in message
        assert portal.events == [] and len(portal.closed) == 1
        portal.start_response = 0
        ok(await node.act("left_click", frame, x=10, y=10))
        assert portal.members("RemoteDesktop").count("Start") == 2
        portal.screenshot_response = 1
        code, message = error_of(await node.invoke("screen.snapshot", {}))
    assert code == "UNAVAILABLE" and "user refused the screenshot" in message
    assert len(portal.files) == 1 and not portal.files[0].exists()
    assert portal.tokens == [token_file(tmp_path).read_text()]  # the refusal kept none


async def test_a_dialog_left_open_is_bounded(
    node: Node, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No answer to Start within the grant time: the request is closed (the dialog goes),
    the session too, and the action is COMPUTER_DRIVER_UNAVAILABLE."""
    from openclaw_desktop.devices import portal_input

    original = portal_input.PortalInput.__init__

    def short(self: portal_input.PortalInput, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self.grant_timeout = 0.5

    monkeypatch.setattr(portal_input.PortalInput, "__init__", short)
    async with PortalService.running(node_bus(), tmp_path / "shots", start_hangs=True) as portal:
        frame = await node.snapshot(400)
        code, message = error_of(await node.act("left_click", frame, x=10, y=10))
    assert code == "COMPUTER_DRIVER_UNAVAILABLE" and "did not answer Start" in message
    assert len(portal.requests_closed) == 1 and len(portal.closed) == 1


async def test_a_cancel_during_the_dialog_closes_it(node: Node, tmp_path: Path) -> None:
    """node.invoke.cancel while the user has not answered yet: CANCELLED, the request is
    closed (the dialog goes) and so is the half-made session; the node answers on."""
    async with PortalService.running(node_bus(), tmp_path / "shots", start_hangs=True) as portal:
        frame = await node.snapshot(400)
        params = {
            "action": "left_click",
            "executionId": node.execution,
            "displayFrameId": frame["displayFrameId"],
            "refWidth": frame["width"],
            "x": 10,
            "y": 10,
        }
        invoke_id = await node.send("computer.act", params)
        await wait_for(lambda: "Start" in portal.members("RemoteDesktop"), 10)
        cancel = {"invokeId": invoke_id, "nodeId": "node-1"}
        await node.peer.send({"type": "event", "event": "node.invoke.cancel", "payload": cancel})
        assert error_of(await node.peer.invoke_result(invoke_id))[0] == "CANCELLED"
        await wait_for(lambda: portal.requests_closed and portal.closed, 10)
        assert portal.events == []
        assert ok(await node.invoke("screen.snapshot", {}))["width"] == 800


async def test_a_portal_without_remote_desktop(node: Node, tmp_path: Path) -> None:
    """Only Screenshot on the portal: screenshots work, computer.act is unavailable naming
    the missing interface, and nothing was asked of RemoteDesktop."""
    async with PortalService.running(
        node_bus(), tmp_path / "shots", interfaces=frozenset({"Screenshot"})
    ) as portal:
        frame = await node.snapshot(400)
        code, message = error_of(await node.act("left_click", frame, x=10, y=10))
        toggles = node.ctx.settings().toggles()
        surface = await build_dispatcher(node.ctx).registry.surface(toggles)
    assert code == "COMPUTER_DRIVER_UNAVAILABLE"
    assert "does not offer org.freedesktop.portal.RemoteDesktop" in message
    assert portal.members("RemoteDesktop") == []
    assert "screen.snapshot" in surface.commands and "computer.act" not in surface.commands


async def test_a_version_1_portal_is_asked_for_no_persistence(node: Node, tmp_path: Path) -> None:
    """RemoteDesktop version 1 has no persist_mode/restore_token: neither is sent, even
    with a stored token."""
    stored = token_file(tmp_path)
    stored.parent.mkdir(parents=True)
    stored.write_text("old-token")
    async with PortalService.running(
        node_bus(), tmp_path / "shots", remote_desktop_version=1
    ) as portal:
        frame = await node.snapshot(400)
        ok(await node.act("mouse_move", frame, x=1, y=1))
    devices = portal.options_of("SelectDevices")
    assert devices["types"] == 3
    assert "persist_mode" not in devices and "restore_token" not in devices


async def test_no_portal_at_all(node: Node, tmp_path: Path) -> None:
    """Nothing owns the portal name: both commands are unavailable with the reason."""
    code, message = error_of(await node.invoke("screen.snapshot", {}))
    assert code == "UNAVAILABLE" and "org.freedesktop.portal.Screenshot" in message
    code, message = error_of(await node.act("left_click", x=1, y=1))
    assert code == "COMPUTER_DRIVER_UNAVAILABLE"
    assert "org.freedesktop.portal.RemoteDesktop" in message


async def test_through_the_bundled_gateway(wayland: str, tmp_path: Path) -> None:
    """An operator's node.invoke over loopback through our gateway: the node advertises
    the portal provider, a snapshot comes from the portal and a click through the remote
    desktop session; a refused session is the typed node error."""
    settings = NodeSettings(screen=True, computer=True)
    dispatcher = build_dispatcher(NodeContext(settings=lambda: settings))
    computer_use = descriptor()
    assert computer_use["provider"]["id"] == "openclaw-desktop-portal"
    execution = str(uuid.uuid4())
    async with (
        PortalService.running(wayland, tmp_path / "shots") as portal,
        bundled_gateway(tmp_path / "gw", nodes_allow=list(EMBEDDED_ALLOW)) as gw,
        GatewayConnection(operator_options(gw.url)) as operator,
        approved_node(gw.url, operator, dispatcher, settings, computer_use=computer_use) as node,
    ):
        assert {"screen.snapshot", "computer.act"} <= set(node.surface.commands)
        assert "computer.act" in node.requested["commands"]
        frame = (
            await node.invoke(
                "screen.snapshot", {"executionId": execution, "maxWidth": 800, "format": "png"}
            )
        )["payload"]
        assert (frame["width"], frame["height"]) == (800, 600) and frame["displayFrameId"]
        clicked = await node.invoke(
            "computer.act",
            {
                "action": "left_click",
                "executionId": execution,
                "displayFrameId": frame["displayFrameId"],
                "refWidth": 800,
                "x": 300,
                "y": 200,
            },
        )
        assert clicked["payload"] == {"ok": True, "details": {"action": "left_click"}}
        assert portal.events[:3] == [
            (MOTION, 44, 150.0, 100.0),
            (BUTTON, BTN_LEFT, 1),
            (BUTTON, BTN_LEFT, 0),
        ]
        await node.invoke("computer.act", {"action": "__close_execution", "executionId": execution})
        assert len(portal.closed) == 1
        portal.start_response = 1
        with pytest.raises(GatewayError) as caught:
            await node.invoke(
                "computer.act", {"action": "type", "executionId": execution, "text": "x"}
            )
        assert caught.value.details["nodeError"]["code"] == "COMPUTER_DRIVER_UNAVAILABLE"
        assert "user refused remote control" in caught.value.message


def node_bus() -> str:
    """The private session bus the ``wayland`` fixture exported."""
    return os.environ["DBUS_SESSION_BUS_ADDRESS"]
