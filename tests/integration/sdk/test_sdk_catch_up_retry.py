"""Catch-up after a reconnect, against a scripted gateway on loopback: while the gateway
answers ``chat.history`` with a retryable error (it is still starting), the SDK asks again
and then ends the run from the history; a final error is not retried."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openclaw_desktop.sdk import OpenClaw
from tests.helpers.scripted_gateway import ScriptedGateway, ScriptedPeer, hello_payload

pytestmark = pytest.mark.timeout(30)

STARTING = {"code": "UNAVAILABLE", "message": "chat is starting", "retryable": True}
FINAL = {
    "role": "assistant",
    "stopReason": "stop",
    "content": [{"type": "text", "text": "all done"}],
    "timestamp": 1_796_000_000_000,
    "__openclaw": {"runId": "run-1"},
}


def gateway_answering(errors: list[dict[str, Any]], history: list[str]) -> ScriptedGateway:
    """A gateway that answers the first ``chat.history`` calls with ``errors``, in order,
    then with the run's final message; each call's method is appended to ``history``."""

    async def handler(peer: ScriptedPeer) -> None:
        connect = await peer.challenge()
        hello = hello_payload(scopes=["operator.read", "operator.write"])
        hello["features"]["methods"] = ["health", "chat.history", "chat.send"]
        await peer.send({"type": "res", "id": connect["id"], "ok": True, "payload": hello})
        pending = list(errors)
        while True:
            frame = await peer.recv(timeout=20)
            if frame.get("type") != "req":
                continue
            history.append(frame["method"])
            reply: dict[str, Any] = {"type": "res", "id": frame["id"]}
            if pending:
                reply |= {"ok": False, "error": pending.pop(0)}
            else:
                reply |= {"ok": True, "payload": {"messages": [FINAL], "sessionKey": "main"}}
            await peer.send(reply)

    return ScriptedGateway(handler)


async def test_a_gateway_still_starting_is_asked_again() -> None:
    asked: list[str] = []
    async with gateway_answering([STARTING, STARTING], asked).running() as gw:
        oc = OpenClaw.connect(gw.url, token="t", identity="ephemeral")
        run = oc.run_book.track("run-1", "main")  # sent before the gateway went away
        async with oc:
            async with asyncio.timeout(10):
                await oc._catch_up()  # what a reconnect runs
            result = await run.wait(timeout=5)
    assert asked[:3] == ["chat.history"] * 3  # twice "starting", then the history
    assert (result.status, result.text) == ("completed", "all done")


async def test_an_error_that_is_not_retryable_is_not_asked_again() -> None:
    asked: list[str] = []
    refused = {"code": "INVALID_REQUEST", "message": "no such session", "retryable": False}
    async with gateway_answering([refused], asked).running() as gw:
        oc = OpenClaw.connect(gw.url, token="t", identity="ephemeral")
        run = oc.run_book.track("run-1", "main")
        async with oc:
            async with asyncio.timeout(10):
                await oc._catch_up()
    assert asked == ["chat.history"]
    assert not run.done  # left going (its stream marked reset): live events may still end it
