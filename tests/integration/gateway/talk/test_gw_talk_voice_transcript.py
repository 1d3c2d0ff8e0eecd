"""``node.event voice.transcript`` from a phone starts an agent run in its session, over real
loopback WebSockets (a raw node as the phone, a raw operator watching the chat events)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from gateway.server import GatewayServer
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import RawClient, raw_node, raw_operator

pytestmark = pytest.mark.timeout(60)


@asynccontextmanager
async def approved_phone(url: str) -> AsyncIterator[RawClient]:
    """A raw node whose surface an operator approved: the real gateway takes node events
    only from an approved node (PAIRING_CHANGED before)."""
    ident = DeviceIdentity.generate()
    async with raw_operator(url) as admin, raw_node(url, ["system.notify"], ident) as phone:
        requested = await admin.wait_event(
            "node.pair.requested", lambda e: e["payload"]["nodeId"] == ident.device_id
        )
        await admin.ok("node.pair.approve", {"requestId": requested["payload"]["requestId"]})
        await phone.wait_event("node.pair.resolved")
        yield phone


def event(payload: dict[str, Any], *, as_json: bool = False) -> dict[str, Any]:
    if as_json:
        return {"event": "voice.transcript", "payloadJSON": json.dumps(payload)}
    return {"event": "voice.transcript", "payload": payload}


async def test_a_transcript_starts_a_run_and_a_duplicate_does_not(gw: GatewayServer) -> None:
    """The run is in the named session with the text as the user's message; the same text
    again is dropped; another text starts another run."""
    async with raw_operator(gw.url) as op, approved_phone(gw.url) as phone:
        first = await phone.ok(
            "node.event", event({"text": "what is on my calendar", "sessionKey": "phone"})
        )
        assert first["handled"] is True and first["reason"] == "agent_run_started"
        assert first["sessionKey"] == "agent:main:phone"
        final = await op.wait_event(
            "chat",
            lambda e: (
                e["payload"]["runId"] == first["runId"]
                and e["payload"]["state"] in ("final", "error")
            ),
            timeout=30,
        )
        assert final["payload"]["sessionKey"] == "agent:main:phone"
        again = await phone.ok(
            "node.event",
            event({"text": "what is on my calendar", "sessionKey": "phone"}, as_json=True),
        )
        assert again == {
            "ok": True,
            "event": "voice.transcript",
            "handled": True,
            "reason": "duplicate",
        }
        other = await phone.ok("node.event", event({"text": "and tomorrow?"}))
        assert other["sessionKey"] == "agent:main:main"
        history = await op.ok("chat.history", {"sessionKey": "phone"})
    users = [m for m in history["messages"] if m["role"] == "user"]
    assert [m["content"] for m in users] == ["what is on my calendar"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"event": "voice.transcript", "payload": {}}, "voice.transcript: text is required"),
        ({"event": "voice.transcript", "payload": {"text": "   "}}, "text is required"),
        ({"event": "voice.transcript", "payload": {"text": "x" * 20_001}}, "longer than 20000"),
        ({"event": "voice.transcript", "payloadJSON": "{"}, "payloadJSON is not valid JSON"),
        (
            {"event": "voice.transcript", "payload": {"text": "hi", "sessionKey": 5}},
            "sessionKey must be a non-empty string",
        ),
    ],
)
async def test_bad_transcripts_are_refused(
    gw: GatewayServer, params: dict[str, Any], message: str
) -> None:
    """Missing, blank or oversized text and a bad session key: INVALID_REQUEST, no run."""
    async with approved_phone(gw.url) as phone:
        error = await phone.error("node.event", params)
    assert error["code"] == "INVALID_REQUEST"
    assert message in error["message"]
    assert gw.app.chat is not None and not gw.app.chat.active_run_ids("agent:main:main")


async def test_operators_cannot_send_node_events(gw: GatewayServer) -> None:
    """node.event is a node's method: an operator is refused before any run starts."""
    async with raw_operator(gw.url) as op:
        error = await op.error("node.event", event({"text": "hello"}))
    assert error["message"] == "unauthorized role: operator"
