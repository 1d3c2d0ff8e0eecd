"""``sessions.patch`` display metadata over loopback WebSockets: archive, pin, unread, icon,
colour and category are stored in SQLite, shown and filtered by ``sessions.list``, refused
in the real gateway's words when invalid, and ``sessions.delete {archivedOnly}`` deletes only
an archived session (issue #17 item 2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.gateway.chat.test_gw_chat_runs import Chat, chat_gateway

pytestmark = pytest.mark.timeout(60)


async def _keys(chat: Chat, **params: Any) -> list[str]:
    listed = await chat.op.ok("sessions.list", params)
    return [row["key"] for row in listed["sessions"]]


async def _row(chat: Chat, key: str) -> dict[str, Any]:
    described = await chat.op.ok("sessions.describe", {"key": key})
    row: dict[str, Any] = described["session"]
    return row


async def test_pin_icon_colour_category_and_unread_are_stored_and_filtered(
    tmp_path: Path,
) -> None:
    """Each field is stored, listed under the real names, filterable (pinned, group) and
    cleared by null / false; bad values are refused and change nothing."""
    async with chat_gateway(tmp_path) as chat:
        a = (await chat.op.ok("sessions.create", {"key": "agent:main:a"}))["key"]
        b = (await chat.op.ok("sessions.create", {"key": "agent:main:b"}))["key"]
        fresh = await _row(chat, a)
        assert (fresh["pinned"], fresh["archived"], fresh["unread"]) == (False, False, False)
        assert "icon" not in fresh and "color" not in fresh and "category" not in fresh

        patched = await chat.op.ok(
            "sessions.patch",
            {
                "key": a,
                "pinned": True,
                "unread": True,
                "icon": "bot",
                "color": " Blue ",
                "category": " Work ",
            },
        )
        entry = patched["entry"]
        assert entry["pinned"] is True and isinstance(entry["pinnedAt"], int)
        assert entry["unread"] is True and isinstance(entry["markedUnreadAt"], int)
        assert (entry["icon"], entry["color"], entry["category"]) == ("bot", "blue", "Work")
        stored = await _row(chat, a)
        assert {k: stored[k] for k in ("pinnedAt", "markedUnreadAt", "icon", "color")} == {
            k: entry[k] for k in ("pinnedAt", "markedUnreadAt", "icon", "color")
        }

        assert await _keys(chat, pinned=True) == [a]
        assert await _keys(chat, pinned=False) == [b]
        assert await _keys(chat, group="Work") == [a]
        assert await _keys(chat, group="Home") == []

        emoji = await chat.op.ok("sessions.patch", {"key": b, "icon": "🚀"})
        assert emoji["entry"]["icon"] == "🚀"

        for bad, words in (
            ({"icon": "<svg xmlns='http://www.w3.org/2000/svg'/>"}, "icon must be a single emoji"),
            ({"icon": "rocket"}, "icon must be a single emoji"),
            ({"color": "mauve"}, "color must be one of: red, blue, green"),
            ({"category": "   "}, "invalid category: empty"),
        ):
            error = await chat.op.error("sessions.patch", {"key": a, **bad})
            assert error["code"] == "INVALID_REQUEST" and words in error["message"], error
        typed = await chat.op.error("sessions.patch", {"key": a, "pinned": "yes"})
        assert typed["code"] == "INVALID_REQUEST"
        assert (await _row(chat, a))["icon"] == "bot", "a refused patch changes nothing"

        cleared = await chat.op.ok(
            "sessions.patch",
            {
                "key": a,
                "pinned": False,
                "unread": False,
                "icon": None,
                "color": "",
                "category": None,
            },
        )
        entry = cleared["entry"]
        assert entry["pinned"] is False and "pinnedAt" not in entry
        assert entry["unread"] is False and "markedUnreadAt" not in entry
        assert isinstance(entry["lastReadAt"], int)
        assert not {"icon", "color", "category"} & set(entry)
        assert await _keys(chat, pinned=True) == []


async def test_archive_hides_unpins_and_gates_delete(tmp_path: Path) -> None:
    """Archiving needs the session id (as the real one), hides the session from the default
    list, unpins it and forbids pinning; ``delete {archivedOnly}`` refuses an unarchived
    session and keeps it, then deletes it once archived. The main session is not archivable."""
    async with chat_gateway(tmp_path) as chat:
        created = await chat.op.ok("sessions.create", {"key": "agent:main:old"})
        key, session_id = created["key"], created["sessionId"]
        await chat.op.ok("sessions.patch", {"key": key, "pinned": True})

        refused = await chat.op.error("sessions.delete", {"key": key, "archivedOnly": True})
        assert refused["code"] == "INVALID_REQUEST"
        assert refused["message"] == (
            f"Session {key} is not archived. Archive it first, then delete it."
        )
        assert key in await _keys(chat), "a refused delete loses nothing"

        missing_id = await chat.op.error("sessions.patch", {"key": key, "archived": True})
        assert missing_id["message"] == (
            f"expectedSessionId required for session lifecycle patch: {key}"
        )
        stale = await chat.op.error(
            "sessions.patch", {"key": key, "archived": True, "expectedSessionId": "other"}
        )
        assert stale["message"] == f"Session {key} changed before patch. Retry."
        assert (await _row(chat, key))["archived"] is False

        archived = await chat.op.ok(
            "sessions.patch", {"key": key, "archived": True, "expectedSessionId": session_id}
        )
        entry = archived["entry"]
        assert entry["archived"] is True and entry["archiveReason"] == "manual"
        assert entry["pinned"] is False, "archiving unpins"
        assert key not in await _keys(chat)
        assert await _keys(chat, archived=True) == [key]
        assert key in await _keys(chat, archived="all")

        no_pin = await chat.op.error("sessions.patch", {"key": key, "pinned": True})
        assert no_pin["message"] == "cannot pin an archived session; restore it first"

        restored = await chat.op.ok(
            "sessions.patch", {"key": key, "archived": False, "expectedSessionId": session_id}
        )
        assert restored["entry"]["archived"] is False and "archivedAt" not in restored["entry"]
        assert key in await _keys(chat)
        await chat.op.ok(
            "sessions.patch", {"key": key, "archived": True, "expectedSessionId": session_id}
        )
        deleted = await chat.op.ok("sessions.delete", {"key": key, "archivedOnly": True})
        assert deleted["deleted"] is True
        assert key not in await _keys(chat, archived="all")

        main = await chat.op.ok("sessions.create", {"key": "agent:main:main"})
        no_main = await chat.op.error(
            "sessions.patch",
            {"key": main["key"], "archived": True, "expectedSessionId": main["sessionId"]},
        )
        assert no_main["message"] == "Cannot archive an agent's main session."
