"""A tool's picture on its card: the live tool event carries no image data on either
gateway, so the run's end asks for ``chat.history``, whose ``toolResult`` has it.

Shapes as the gateways send them: the real OpenClaw gateway's live ``tool`` result keeps the
image block without its data (``{type: image, mimeType, bytes, omitted: true}``); ours
leaves the block out (only the text blocks). Both store the whole result in the history.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.chat.items import tool_images
from openclaw_desktop.sdk.normalize import Normalizer

#: A 1x1 PNG, base64.
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
META = {"type": "text", "text": '{"format": "png", "width": 1, "height": 1}'}
REAL_LIVE = [{"type": "image", "mimeType": "image/png", "bytes": 68, "omitted": True}, META]
OURS_LIVE = [META]


def frames(run: str, live: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    def agent(seq: int, stream: str, data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        payload = {"runId": run, "sessionKey": "agent:main:main", "seq": seq, "stream": stream}
        return "agent", {**payload, "data": data, "ts": seq}

    call = {"name": "node_invoke", "toolCallId": "c1"}
    return [
        agent(1, "lifecycle", {"phase": "start"}),
        agent(2, "tool", {"phase": "start", **call, "args": {"command": "screen.snapshot"}}),
        agent(
            3, "tool", {"phase": "result", **call, "isError": False, "result": {"content": live}}
        ),
    ]


def history(run: str) -> list[dict[str, Any]]:
    meta = {"__openclaw": {"runId": run}}
    call = {"type": "toolCall", "id": "c1", "name": "node_invoke", "arguments": {}}
    return [
        {"role": "user", "content": "shoot", "idempotencyKey": f"{run}:user", "timestamp": 1},
        {"role": "assistant", "content": [call], "stopReason": "toolUse", **meta},
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "node_invoke",
            "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}, META],
            "isError": False,
            **meta,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "done"}], **meta},
    ]


@pytest.mark.parametrize("live", [REAL_LIVE, OURS_LIVE], ids=["real-gateway", "ours"])
def test_a_pictureless_live_result_asks_for_the_history_which_has_the_picture(
    live: list[dict[str, Any]],
) -> None:
    timeline = ChatTimeline("agent:main:main")
    timeline.send("r", "shoot")
    normalizer = Normalizer()
    assert not timeline.results_in_history("r"), "no tool has answered yet"
    for name, payload in frames("r", live):
        for event in normalizer.feed(name, payload, 0):
            timeline.apply(event)
    card = timeline.get("r:tool:c1")
    assert card is not None and card.tool is not None and card.tool.status == "completed"
    assert card.images == [], "an image block without data is not a picture"
    assert timeline.results_in_history("r")
    assert not timeline.results_in_history("other")

    timeline.merge_history(history("r"))
    card = timeline.get("r:tool:c1")
    assert card is not None
    assert card.images == [{"mimeType": "image/png", "data": PNG}]
    assert not timeline.results_in_history("r"), "once shown, not asked for again"


def tool_search_answer(image: dict[str, Any]) -> list[dict[str, Any]]:
    """The real gateway's ``tool_call`` result (Tool Search ran ``nodes``): one text block,
    the nested tool and its result as JSON."""
    nested = {
        "tool": {"id": "openclaw:core:nodes", "name": "nodes", "source": "openclaw"},
        "result": {"content": [image]},
    }
    return [{"type": "text", "text": json.dumps(nested, indent=2)}]


def test_the_picture_of_a_tool_that_tool_search_ran_is_on_the_tool_call_card() -> None:
    """Live and from the history, as the real gateway records them; an image that is only a
    URL (the gateway's injected media message) is not shown, so nothing is fetched."""
    image = {"type": "image", "data": PNG, "mimeType": "image/jpeg"}
    assert tool_images(tool_search_answer(image)) == [{"mimeType": "image/jpeg", "data": PNG}]
    by_url = {"type": "image", "url": "/api/chat/media/outgoing/x/full", "mimeType": "image/jpeg"}
    assert tool_images(tool_search_answer(by_url)) == []
    assert tool_images([{"type": "text", "text": '{"image": 1'}]) == [], "not JSON: no picture"
    assert tool_images([{"type": "text", "text": '{"result": {"content": []}}'}]) == []

    timeline = ChatTimeline("agent:main:main")
    timeline.send("r", "shoot")
    normalizer = Normalizer()
    live = tool_search_answer(image)
    for name, payload in frames("r", live):
        for event in normalizer.feed(name, payload, 0):
            timeline.apply(event)
    card = timeline.get("r:tool:c1")
    assert card is not None and card.images == [{"mimeType": "image/jpeg", "data": PNG}]
    assert not timeline.results_in_history("r"), "shown live: no second look"

    stored = history("r")
    stored[2]["content"] = live
    view = ChatTimeline("agent:main:main")
    view.merge_history(stored)
    card = view.get("r:tool:c1")
    assert card is not None and card.images == [{"mimeType": "image/jpeg", "data": PNG}]
