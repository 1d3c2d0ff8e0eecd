"""``OpenClaw.approvals.follow()``: the pending approvals first (``exec.approval.list``), then
each new request as the gateway sends it, as :class:`Approval` objects. The client never
connects: the list answer is stubbed and events go in through its event listener."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import pytest

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.sdk.normalize import APPROVAL_EVENTS, EXEC_APPROVAL_REQUESTED
from openclaw_desktop.session import EventReceived

BOUND_S = 5.0


def request(approval_id: str) -> dict[str, Any]:
    """An exec approval shaped like the real gateway's (list rows and events alike)."""
    return {
        "approvalKind": "exec",
        "id": approval_id,
        "request": {"command": "ls", "sessionKey": "agent:main:main", "runId": "r1"},
        "createdAtMs": 1,
        "expiresAtMs": 1_800_001,
    }


def send(oc: OpenClaw, approval_id: str) -> None:
    oc._on_event(EventReceived(EXEC_APPROVAL_REQUESTED, request(approval_id), None, None))


async def test_pending_approvals_come_first_then_new_ones(
    oc: OpenClaw, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    async def call(method: str, params: Any = None, *, timeout: float = 30) -> Any:
        calls.append(method)
        return [request("pending-1"), request("pending-2")]

    monkeypatch.setattr(oc, "call", call)
    follow = oc.approvals.follow()
    async with asyncio.timeout(BOUND_S):
        seen = [await anext(follow), await anext(follow)]
        following = asyncio.ensure_future(anext(follow))
        await asyncio.sleep(0.05)  # subscribed to the events by now
        send(oc, "live-1")
        seen.append(await following)
    await follow.aclose()
    assert calls == ["exec.approval.list"]
    assert [a.id for a in seen] == ["pending-1", "pending-2", "live-1"]
    assert all(a.kind == "exec" and a.command == "ls" for a in seen)


async def test_a_request_sent_while_the_list_is_answered_is_asked_once(
    oc: OpenClaw, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway sends one request's event before its list answer (which holds it too) and
    another's, which the list does not hold: each is asked once, none is missed."""

    async def call(method: str, params: Any = None, *, timeout: float = 30) -> Any:
        await asyncio.sleep(0)  # the answer comes after the events below
        send(oc, "both")
        send(oc, "event-only")
        return [request("both")]

    monkeypatch.setattr(oc, "call", call)
    follow = oc.approvals.follow()
    async with asyncio.timeout(BOUND_S):
        seen = [await anext(follow), await anext(follow)]
        following = asyncio.ensure_future(anext(follow))
        send(oc, "live-1")
        seen.append(await following)
    await follow.aclose()
    assert [a.id for a in seen] == ["both", "event-only", "live-1"]


async def test_closing_before_anything_came_stops_following(
    oc: OpenClaw, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A consumer that stops while the list is still unanswered leaves no listener behind."""

    async def call(method: str, params: Any = None, *, timeout: float = 30) -> Any:
        await asyncio.Event().wait()  # never answered

    monkeypatch.setattr(oc, "call", call)
    follow = oc.approvals.follow()
    first = asyncio.ensure_future(anext(follow))
    await asyncio.sleep(0.05)
    assert len(oc._listeners) == 1
    first.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await first
    await follow.aclose()
    assert oc._listeners == []


async def test_a_failed_list_is_logged_and_new_ones_still_come(
    oc: OpenClaw, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def call(method: str, params: Any = None, *, timeout: float = 30) -> Any:
        raise OpenClawError("not now")

    monkeypatch.setattr(oc, "call", call)
    follow = oc.approvals.follow()
    with caplog.at_level(logging.WARNING, logger="openclaw.sdk"):
        first = asyncio.ensure_future(anext(follow))
        async with asyncio.timeout(BOUND_S):
            while not any("could not backfill" in r.getMessage() for r in caplog.records):
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # subscribed to the events by now
            send(oc, "live-1")
            approval = await first
    await follow.aclose()
    assert approval.id == "live-1"


def test_the_approval_event_names_are_the_real_gateways() -> None:
    assert {
        "exec.approval.requested",
        "exec.approval.resolved",
        "plugin.approval.requested",
        "plugin.approval.resolved",
    } == APPROVAL_EVENTS
