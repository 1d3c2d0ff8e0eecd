"""``sessions.patch`` archive / pin / unread / colour / category, ``sessions.list``'s archive
and pin filters and ``sessions.delete {archivedOnly}``: the same story on the real gateway
and on ours, the same answers and error words (issue #17 item 2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.helpers.bundled_gateway import BundledGateway, RawClient, raw_operator
from tests.helpers.real_openclaw import RealGateway

pytestmark = pytest.mark.timeout(300)

KEY = "agent:main:display-probe"
#: The row fields of the display metadata, by JSON kind (their values are times).
ROW_FIELDS = ("pinned", "pinnedAt", "unread", "markedUnreadAt", "archived", "archivedAt")


def _kinds(row: dict[str, Any]) -> dict[str, str]:
    return {name: type(row.get(name)).__name__ for name in ROW_FIELDS}


async def _answer(op: RawClient, method: str, params: dict[str, Any]) -> str:
    res = await op.call(method, params, timeout=20)
    if res["ok"]:
        return "ok"
    assert res["error"]["code"] == "INVALID_REQUEST", res
    message: str = res["error"]["message"]
    return message


async def _story(url: str, token: str) -> list[Any]:
    """Create, pin and mark unread, archive (without, with a wrong, with the right session
    id), list, try to pin, refuse bad values, delete only once archived."""
    async with raw_operator(url, auth={"token": token}) as op:
        created = await op.ok("sessions.create", {"key": KEY})
        session_id = created["sessionId"]
        out: list[Any] = [await _answer(op, "sessions.delete", {"key": KEY, "archivedOnly": True})]
        out.append(
            await _answer(op, "sessions.patch", {"key": KEY, "pinned": True, "unread": True})
        )
        pinned = await op.ok("sessions.list", {"pinned": True})
        out.append([_kinds(row) for row in pinned["sessions"]])
        archive = {"key": KEY, "archived": True}
        out.append(await _answer(op, "sessions.patch", archive))
        out.append(await _answer(op, "sessions.patch", archive | {"expectedSessionId": "nope"}))
        out.append(await _answer(op, "sessions.patch", archive | {"expectedSessionId": session_id}))
        out.append([r["key"] for r in (await op.ok("sessions.list", {}))["sessions"]])
        archived = (await op.ok("sessions.list", {"archived": True}))["sessions"]
        out.append([(r["key"], r["pinned"], r["archiveReason"]) for r in archived])
        out.append(await _answer(op, "sessions.patch", {"key": KEY, "pinned": True}))
        out.append(await _answer(op, "sessions.patch", {"key": KEY, "color": "mauve"}))
        out.append(await _answer(op, "sessions.patch", {"key": KEY, "category": "  "}))
        out.append(await _answer(op, "sessions.patch", {"key": KEY, "icon": "rocket"}))
        out.append(await _answer(op, "sessions.delete", {"key": KEY, "archivedOnly": True}))
        return out


def test_session_display_story_answers_alike(real: RealGateway, ours: BundledGateway) -> None:
    """Every step answers the same on both gateways."""
    theirs = asyncio.run(_story(real.url, real.token))
    mine = asyncio.run(_story(ours.url, ours.token))
    assert mine == theirs
    assert theirs[0] == f"Session {KEY} is not archived. Archive it first, then delete it."
    assert theirs[-1] == "ok"
