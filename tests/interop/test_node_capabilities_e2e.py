"""Our headless node's whole command surface, end to end through the real OpenClaw gateway
(invoked with its own CLI, ``openclaw nodes invoke``) and through our bundled gateway
(``openclaw-desktop nodes invoke``): every command with real parts behind it, the gate
errors, and the advertised surface as settings are toggled while the node runs.

Real parts: a private D-Bus session bus with a recording notification server, an Xvfb
display painted a known colour, a video file as the camera source (the code path of an IP
camera), and an ALSA capture device fed from a file as the microphone.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np
import pytest

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from openclaw_desktop.embedded import EMBEDDED_ALLOW
from tests.helpers.bundled_gateway import BundledGateway, DesktopNode, run_desktop_cli
from tests.helpers.dbus_notifications import NotificationServer
from tests.helpers.desktop_session import XPainter, session_bus, xvfb
from tests.helpers.real_openclaw import GatewayFactory, RealGateway, parse_json_output
from tests.helpers.video_sources import write_video

pytestmark = pytest.mark.timeout(420)

#: Every command this node can offer (the list the app allows on its own bundled gateway),
#: allowed on both gateways (``--allow``), as a user of the real gateway does with
#: ``gateway.nodes.commands.allow``.
ALLOW = EMBEDDED_ALLOW
BASE = {"device.info", "device.status", "system.notify"}
WIDE = (
    BASE
    | {"camera.list", "camera.snap", "camera.clip", "screen.snapshot", "screen.record"}
    | {
        "talk.ptt.start",
        "talk.ptt.stop",
        "talk.ptt.cancel",
        "talk.ptt.once",
    }
)
ROOT_RGB = (30, 144, 255)


@dataclass
class Outcome:
    """One ``nodes invoke`` as the operator's CLI reports it."""

    ok: bool
    payload: Any
    message: str


class Target(Protocol):
    """A gateway under test, driven through its own operator CLI."""

    name: str
    url: str
    token: str

    def invoke(self, node_id: str, command: str, params: Any) -> Outcome: ...
    def pending(self, node_id: str) -> list[dict[str, Any]]: ...
    def approve(self, request_id: str) -> None: ...
    def node(self, node_id: str) -> dict[str, Any] | None: ...


class RealTarget:
    """The real gateway and ``openclaw nodes ...``."""

    name = "real"

    def __init__(self, gw: RealGateway) -> None:
        self.gw, self.url, self.token = gw, gw.url, gw.token

    def invoke(self, node_id: str, command: str, params: Any) -> Outcome:
        argv = ["nodes", "invoke", "--node", node_id, "--command", command]
        result = self.gw.cli(*argv, "--params", json.dumps(params), "--json", check=False)
        data = parse_json_output(result.stdout)
        if data.get("ok"):
            return Outcome(True, data.get("payload"), "")
        return Outcome(False, None, str(data["error"]["message"]))

    def pending(self, node_id: str) -> list[dict[str, Any]]:
        rows = self.gw.cli_json("nodes", "pending")
        return [r for r in rows if r["nodeId"] == node_id]

    def approve(self, request_id: str) -> None:
        self.gw.cli_json("nodes", "approve", request_id)

    def node(self, node_id: str) -> dict[str, Any] | None:
        nodes = self.gw.cli_json("nodes", "status")["nodes"]
        return next((n for n in nodes if n["nodeId"] == node_id), None)


class OurTarget:
    """Our bundled gateway and ``openclaw-desktop nodes ...``."""

    name = "ours"

    def __init__(self, gw: BundledGateway) -> None:
        self.gw, self.url, self.token = gw, gw.url, gw.token

    def invoke(self, node_id: str, command: str, params: Any) -> Outcome:
        argv = ["nodes", "invoke", "--node", node_id, "--command", command]
        result = self.gw.cli(*argv, "--params", json.dumps(params), "--json", check=False)
        data = json.loads(result.stdout)
        if result.returncode == 0:
            return Outcome(True, data.get("payload"), "")
        return Outcome(False, None, str(data["error"]["message"]))

    def pending(self, node_id: str) -> list[dict[str, Any]]:
        rows = self.gw.cli_json("nodes", "pending")["pending"]
        return [r for r in rows if r["nodeId"] == node_id]

    def approve(self, request_id: str) -> None:
        self.gw.cli("nodes", "approve", request_id)

    def node(self, node_id: str) -> dict[str, Any] | None:
        nodes = self.gw.cli_json("nodes", "list")["nodes"]
        return next((n for n in nodes if n["nodeId"] == node_id), None)


@pytest.fixture(params=["real", "ours"])
def target(request: pytest.FixtureRequest, real_gateway: GatewayFactory) -> Iterator[Target]:
    """Each gateway in turn, with every command of this node allowed."""
    if request.param == "real":
        yield RealTarget(real_gateway(allow=ALLOW))
        return
    with BundledGateway.start(args=["--allow", ",".join(ALLOW)]) as gw:
        yield OurTarget(gw)


@dataclass
class Desk:
    """The desktop the node runs on."""

    env: dict[str, str]
    notifications: NotificationServer
    video: Path


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    """Session bus + notification server, a painted Xvfb, a camera file and a microphone."""
    video = write_video(tmp_path / "camera.mp4", width=640, height=480, frames=90)
    raw = tmp_path / "mic.raw"
    t = np.arange(16_000 * 30) / 16_000
    raw.write_bytes((np.sin(2 * np.pi * 440 * t) * 8000).astype("<i2").tobytes())
    alsa = tmp_path / "asound.conf"
    alsa.write_text(
        f'pcm.testmic {{ type file  slave.pcm {{ type null }}  infile "{raw}"  '
        'file "/dev/null"  format "raw" }\npcm.!default { type plug  slave.pcm "testmic" }\n',
        encoding="utf-8",
    )
    with session_bus() as address, xvfb() as screen:
        with XPainter(screen.display) as painter:
            painter.fill_root(ROOT_RGB)
        async with NotificationServer.running(address) as server:
            env = {
                "DBUS_SESSION_BUS_ADDRESS": address,
                "DISPLAY": screen.display,
                "ALSA_CONFIG_PATH": str(alsa),
            }
            yield Desk(env, server, video)


async def until(probe: Any, what: str, timeout: float = 60) -> Any:
    """Poll a blocking probe in a thread until it returns something truthy."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = await asyncio.to_thread(probe)
        if value:
            return value
        if loop.time() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.5)


async def approve_surface(target: Target, node_id: str, commands: set[str]) -> None:
    """Approve the node's pending surface once it asks for exactly ``commands`` (settings
    changed one by one may be advertised in steps: each re-advertisement replaces the
    pending request), then wait until exactly those are active."""
    seen: list[Any] = []

    def pending_with_all() -> Any:
        requests = target.pending(node_id)
        seen.append(requests)
        return next((r for r in requests if set(r["commands"]) == commands), None)

    try:
        request = await until(pending_with_all, f"a surface request for {sorted(commands)}")
    except TimeoutError:
        raise AssertionError(f"last pending requests: {seen[-1] if seen else None}") from None
    await asyncio.to_thread(target.approve, request["requestId"])

    def active() -> bool:
        entry = target.node(node_id)
        return bool(entry and entry.get("connected") and set(entry["commands"]) == commands)

    await until(active, f"{sorted(commands)} to be active")


def decode_image(payload: dict[str, Any]) -> Any:
    """The image in a snap/snapshot payload, decoded by OpenCV."""
    data = np.frombuffer(base64.b64decode(payload["base64"]), np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    assert image is not None
    assert image.shape[:2] == (payload["height"], payload["width"])
    return image


async def test_node_surface_and_commands_end_to_end(
    target: Target, desk: Desk, tmp_path: Path
) -> None:
    """Pair, invoke every command, widen and narrow the surface through settings."""
    home = tmp_path / "node"
    store = SettingsStore(home / "config" / "settings.json")
    store.save(Settings(node=NodeSettings(camera_source=str(desk.video))))
    node = DesktopNode.start(home, url=target.url, token=target.token, env=desk.env)
    try:
        node_id = await asyncio.to_thread(lambda: node.device_id)
        await asyncio.to_thread(node.wait_for_log, r"connected to .* as node", 60)
        await approve_surface(target, node_id, BASE)
        invoke = target.invoke

        # --- the default surface: device.*, notifications ---------------------------
        info = await asyncio.to_thread(invoke, node_id, "device.info", {})
        assert info.ok and info.payload["systemName"], info
        status = await asyncio.to_thread(invoke, node_id, "device.status", {"sections": ["x"]})
        assert not status.ok
        assert status.message.startswith("INVALID_REQUEST: unknown sections x"), status
        params = {"title": f"e2e {target.name}", "body": "hi", "priority": "timeSensitive"}
        sent = await asyncio.to_thread(invoke, node_id, "system.notify", params)
        assert sent.ok and sent.payload == {"sent": True}, sent
        (shown,) = await desk.notifications.wait_for(1)
        assert (shown.summary, shown.body, shown.urgency) == (f"e2e {target.name}", "hi", 2)
        bad = await asyncio.to_thread(invoke, node_id, "system.notify", {"body": "no title"})
        assert bad.message.startswith("INVALID_REQUEST: title required"), bad
        # Off by default: not advertised, so the gateway itself refuses.
        refused = await asyncio.to_thread(invoke, node_id, "camera.snap", {})
        assert not refused.ok
        assert "camera.snap" in refused.message and "not allowed" in refused.message, refused

        # --- the user enables camera, screen and microphone --------------------------
        for key in ("node.camera", "node.screen", "node.microphone"):
            await asyncio.to_thread(run_desktop_cli, home, "settings", "set", key, "on")
        await asyncio.to_thread(node.wait_for_log, "node surface changed", 30)
        await approve_surface(target, node_id, WIDE)

        listed = await asyncio.to_thread(invoke, node_id, "camera.list", {})
        assert listed.ok, listed
        (camera,) = listed.payload["devices"]
        snap = await asyncio.to_thread(
            invoke, node_id, "camera.snap", {"deviceId": camera["id"], "maxWidth": 320}
        )
        assert snap.ok and snap.payload["format"] == "jpg", snap
        assert decode_image(snap.payload).shape[:2] == (240, 320)
        clip = await asyncio.to_thread(invoke, node_id, "camera.clip", {"durationMs": 600})
        assert clip.ok and clip.payload["format"] == "mp4", clip
        assert clip.payload["hasAudio"] is False
        mp4 = tmp_path / "clip.mp4"
        mp4.write_bytes(base64.b64decode(clip.payload["base64"]))
        reader = cv2.VideoCapture(str(mp4))
        assert reader.read()[0], "the clip is a readable mp4"
        reader.release()
        # camera.* go through the real gateway's linux-node invoke policy, which passes the
        # node's message on bare (INVALID_REQUEST, details.code = the node's code).
        bad = await asyncio.to_thread(invoke, node_id, "camera.snap", {"maxWidth": -5})
        assert bad.message == "maxWidth must be a positive number of pixels", bad
        unknown = await asyncio.to_thread(invoke, node_id, "camera.snap", {"deviceId": "nope"})
        assert unknown.message.startswith("unknown camera deviceId"), unknown

        shot = await asyncio.to_thread(invoke, node_id, "screen.snapshot", {"format": "png"})
        assert shot.ok, shot
        image = decode_image(shot.payload)
        b, g, r = (int(v) for v in image[5, 5])
        assert (r, g, b) == ROOT_RGB
        recorded = await asyncio.to_thread(
            invoke,
            node_id,
            "screen.record",
            {"durationMs": 500, "fps": 10, "format": "mp4", "includeAudio": False},
        )
        assert recorded.ok, recorded
        fields = {k: v for k, v in recorded.payload.items() if k != "base64"}
        assert fields == {
            "format": "mp4",
            "durationMs": 500,
            "fps": 10,
            "screenIndex": 0,
            "hasAudio": False,
        }
        recording = tmp_path / "screen.mp4"
        recording.write_bytes(base64.b64decode(recorded.payload["base64"]))
        reader = cv2.VideoCapture(str(recording))
        first = reader.read()
        reader.release()
        assert first[0] and first[1].shape[:2] == (480, 640), "the recording is a readable mp4"
        # Both gateways hand the node's refusal back the same way.
        slow = await asyncio.to_thread(invoke, node_id, "screen.record", {"fps": 0})
        assert slow.message == "INVALID_REQUEST: fps must be a number from 1 to 60", slow

        started = await asyncio.to_thread(invoke, node_id, "talk.ptt.start", {})
        assert started.ok and started.payload["status"] == "recording", started
        capture = started.payload["captureId"]
        await asyncio.sleep(0.5)
        stopped = await asyncio.to_thread(invoke, node_id, "talk.ptt.stop", {"captureId": capture})
        assert not stopped.ok
        assert stopped.message.startswith("UNAVAILABLE: no speech-to-text"), stopped
        again = await asyncio.to_thread(invoke, node_id, "talk.ptt.stop", {"captureId": capture})
        assert again.message.startswith("INVALID_REQUEST"), again

        # --- the user turns the camera off again: the surface narrows ---------------
        await asyncio.to_thread(run_desktop_cli, home, "settings", "set", "node.camera", "off")
        narrow = WIDE - {"camera.list", "camera.snap", "camera.clip"}

        def narrowed() -> bool:
            entry = target.node(node_id)
            return bool(entry and entry.get("connected") and set(entry["commands"]) == narrow)

        await until(narrowed, "the narrowed surface")
        refused = await asyncio.to_thread(invoke, node_id, "camera.snap", {})
        assert not refused.ok and "not allowed" in refused.message, refused
        assert node.running
    finally:
        node.stop()
