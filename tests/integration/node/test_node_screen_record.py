"""``screen.record`` through our bundled gateway over loopback: an operator's node.invoke
reaches our node (the spec table as the running node builds it) recording a real X server
(Xvfb); the mp4 comes back whole; every malformed request gets one typed error and the
node stays connected; a recording the gateway gives up on (its timeout sends
``node.invoke.cancel``) is stopped and the next one runs straight away."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

import av
import pytest

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.errors import GatewayError
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.node import NodeContext, build_dispatcher
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.approved_node import approved_node
from tests.helpers.bundled_gateway import (
    bundled_gateway,
    operator_options,
)
from tests.helpers.desktop_session import (
    XPainter,
    XServer,
    xvfb_fixture,  # noqa: F401 - provides the x_server fixture
)

pytestmark = pytest.mark.timeout(90)

MALFORMED: list[tuple[Any, str]] = [
    ({"durationMs": 60_001}, "durationMs must be an integer from 100 to 60000"),
    ({"durationMs": "10s"}, "durationMs must be an integer from 100 to 60000"),
    ({"fps": 0}, "fps must be a number from 1 to 60"),
    ({"fps": 120}, "fps must be a number from 1 to 60"),
    ({"format": "webm"}, "format must be mp4"),
    ({"includeAudio": "no"}, "includeAudio must be true or false"),
    ({"screenIndex": -1}, "screenIndex must be an integer from 0 to 32"),
    ({"screenIndex": 4, "durationMs": 200}, "no screen 4, there is 1"),
    ([1, 2], "params must be an object"),
]


async def test_screen_record_through_the_bundled_gateway(tmp_path: Path, x_server: XServer) -> None:
    """Advertised once Screen is on and approved; a recording comes back as the reference's
    payload; malformed requests are INVALID_REQUEST naming the field, the node stays."""
    settings = NodeSettings(screen=True)
    dispatcher = build_dispatcher(NodeContext(settings=lambda: settings))
    with XPainter(x_server.display) as paint:
        paint.fill_root((200, 30, 40))
        async with (
            bundled_gateway(tmp_path / "gw", nodes_allow=list(EMBEDDED_ALLOW)) as gw,
            GatewayConnection(operator_options(gw.url)) as operator,
            approved_node(gw.url, operator, dispatcher, settings) as node,
        ):
            assert {"screen.snapshot", "screen.record"} <= set(node.surface.commands)
            assert "screen" in node.surface.caps
            assert node.surface.permissions["screenRecording"] is True
            assert "screen.record" in node.requested["commands"]

            def invoke(key: str, params: Any, **extra: Any) -> Any:
                return node.invoke("screen.record", params, **extra)

            # What the reference CLI sends (`openclaw nodes screen record`).
            recorded = await invoke(
                "rec-1",
                {
                    "durationMs": 500,
                    "screenIndex": 0,
                    "fps": 10,
                    "format": "mp4",
                    "includeAudio": True,
                },
            )
            payload = recorded["payload"]
            assert {k: v for k, v in payload.items() if k != "base64"} == {
                "format": "mp4",
                "durationMs": 500,
                "fps": 10,
                "screenIndex": 0,
                "hasAudio": False,  # Microphone is off
            }
            data = base64.b64decode(payload["base64"])
            with av.open(io.BytesIO(data), mode="r") as container:
                frames = list(container.decode(video=0))
                assert container.streams.audio == ()
            assert 4 <= len(frames) <= 5
            assert (frames[0].width, frames[0].height) == (640, 480)

            for n, (params, message) in enumerate(MALFORMED):
                with pytest.raises(GatewayError) as caught:
                    await invoke(f"bad-{n}", params)
                # The gateway's node-failure shape: UNAVAILABLE, the node's error inside.
                error = caught.value
                assert (error.code, error.message) == (
                    "UNAVAILABLE",
                    f"INVALID_REQUEST: {message}",
                ), params
                assert error.details["nodeError"] == {
                    "code": "INVALID_REQUEST",
                    "message": message,
                }

            with pytest.raises(GatewayError) as late:
                await invoke("long-1", {"durationMs": 20_000}, timeoutMs=1500)
            assert late.value.message == "TIMEOUT: node invoke timed out"
            # Recordings are serialised: this one only fits in its 5 s because the 20 s
            # recording was stopped when its invoke ended.
            again = await invoke(
                "rec-2", {"durationMs": 200, "includeAudio": False}, timeoutMs=5000
            )
            assert again["payload"]["durationMs"] == 200
            info = await node.invoke("device.info", {})
            assert info["payload"]["deviceName"]
            assert node.session.surface == "approved"
