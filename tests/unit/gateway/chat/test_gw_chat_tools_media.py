"""What the model hears of a node's media: a picture as an image block, a clip or a
recording as what was recorded (never its base64 as text, cut at the text bound)."""

from __future__ import annotations

import base64
import json
from typing import Any

from gateway.chat.tools import AgentTools

NODE = {"nodeId": "n1", "displayName": "laptop", "platform": "linux", "commands": []}


class Node:
    """A connected node answering every invoke with ``payload``."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload

    def list_nodes(self) -> list[dict[str, Any]]:
        return [NODE]

    async def invoke(
        self, node_id: str, command: str, params: Any, timeout_ms: int
    ) -> dict[str, Any]:
        return {"ok": True, "nodeId": node_id, "command": command, "payload": self.payload}


async def _nothing() -> list[dict[str, Any]]:
    return []


async def test_a_recording_reaches_the_model_as_what_was_recorded() -> None:
    mp4 = base64.b64encode(b"\x00" * 300_000).decode()
    payload = {"format": "mp4", "base64": mp4, "durationMs": 1000, "fps": 10, "hasAudio": False}
    tools = AgentTools(Node(payload), _nothing)
    outcome = await tools.run("node_invoke", {"node": "laptop", "command": "screen.record"})
    assert not outcome.is_error
    [block] = outcome.content
    assert block["type"] == "text" and mp4[:100] not in block["text"]
    heard = json.loads(block["text"])
    assert heard["mediaBytes"] == 300_000
    assert heard["durationMs"] == 1000 and heard["format"] == "mp4" and "base64" not in heard


async def test_a_snapshot_is_still_an_image_block() -> None:
    jpeg = base64.b64encode(b"\xff\xd8jpeg").decode()
    tools = AgentTools(Node({"format": "jpeg", "base64": jpeg, "width": 2}), _nothing)
    outcome = await tools.run("node_invoke", {"node": "n1", "command": "camera.snap"})
    image, meta = outcome.content
    assert image == {"type": "image", "data": jpeg, "mimeType": "image/jpeg"}
    assert json.loads(meta["text"]) == {"format": "jpeg", "width": 2}


class Timed(Node):
    """Writes down the timeout each invoke was given."""

    def __init__(self) -> None:
        super().__init__({"ok": True})
        self.timeouts: list[int] = []

    async def invoke(
        self, node_id: str, command: str, params: Any, timeout_ms: int
    ) -> dict[str, Any]:
        self.timeouts.append(timeout_ms)
        return await super().invoke(node_id, command, params, timeout_ms)


async def test_a_long_recording_gets_the_time_it_needs_within_the_tools_bound() -> None:
    node = Timed()
    tools = AgentTools(node, _nothing)
    asks: list[dict[str, Any]] = [{}, {"durationMs": 5_000}, {"durationMs": 60_000}]
    asks += [{"durationMs": 300_000}, {"durationMs": "long"}, {"durationMs": True}]
    for params in asks:
        await tools.run("node_invoke", {"node": "n1", "command": "screen.record", "params": params})
    assert node.timeouts == [60_000, 60_000, 80_000, 85_000, 60_000, 60_000]
