"""Session display metadata: archive, pin, unread marks, icon, colour and category.

``sessions.patch`` stores them (as the reference's session entry does), ``sessions.list``
filters by them (its rows show them: :func:`gateway.chat.session_rows.display_fields`),
``sessions.delete {archivedOnly}`` checks the archive mark. The rules and error wording are
the reference's; what this gateway cannot check (SVG icon markup) it refuses instead of
storing unchecked.
"""

from __future__ import annotations

from typing import Any

from gateway.errors import invalid_request
from gateway.state import ChatSession

__all__ = [
    "display_changes",
    "listed_by_display",
    "require_archived",
]

#: The reference's colour names.
COLOR_IDS = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")
#: The reference's named icons.
ICON_GLYPH_IDS = ("braces", "book", "monitor", "bot", "kanban", "coins")
#: Longest emoji sequence taken as one icon (flags, skin tones and ZWJ families included).
_EMOJI_MAX_CHARS = 16

_ICON_ERROR = (
    "icon must be a single emoji, a named icon ("
    + ", ".join(ICON_GLYPH_IDS)
    + "), or self-contained SVG markup/data URL up to 16 KiB"
)


def _icon(raw: str) -> str:
    """A named icon or one emoji. SVG markup is refused: this gateway does not sanitise it."""
    value = raw.strip()
    if value in ICON_GLYPH_IDS:
        return value
    emoji_like = (
        0 < len(value) <= _EMOJI_MAX_CHARS
        and not any(ch.isspace() or (ch.isascii() and ch.isalnum()) for ch in value)
        and any(ord(ch) >= 0x2000 for ch in value)
    )
    if not emoji_like:
        raise invalid_request(_ICON_ERROR)
    return value


def display_changes(
    p: dict[str, Any], row: ChatSession, *, is_main: bool, now: int
) -> dict[str, Any]:
    """The column changes ``p`` asks for on ``row``.

    Raises:
        GatewayError: ``INVALID_REQUEST`` in the reference's words (archive without
            ``expectedSessionId``, a changed session, the main session, pinning an archived
            one, a bad icon, colour or category).
    """
    changes: dict[str, Any] = {}
    key = row.key
    if "archived" in p:
        if "expectedSessionId" not in p:
            raise invalid_request(f"expectedSessionId required for session lifecycle patch: {key}")
        if p["expectedSessionId"] != row.session_id:
            raise invalid_request(f"Session {key} changed before patch. Retry.")
        if is_main:
            raise invalid_request("Cannot archive an agent's main session.")
    elif "expectedSessionId" in p and p["expectedSessionId"] != row.session_id:
        raise invalid_request(f"Session {key} changed before patch. Retry.")
    if "icon" in p:
        changes["icon"] = _icon(p["icon"]) if p["icon"] else None
    if "color" in p:
        color = (p["color"] or "").strip().lower()
        if p["color"] and color not in COLOR_IDS:
            raise invalid_request(f"color must be one of: {', '.join(COLOR_IDS)}")
        changes["color"] = color or None
    if "category" in p:
        if p["category"] is not None and not p["category"].strip():
            raise invalid_request("invalid category: empty")
        changes["category"] = p["category"].strip() if p["category"] is not None else None
    archived_at = row.archived_at_ms
    if p.get("archived") is True:
        if archived_at is None:
            archived_at = now
            changes |= {"archived_at_ms": now, "archive_reason": "manual"}
        changes["pinned_at_ms"] = None
    elif p.get("archived") is False:
        archived_at = None
        changes |= {"archived_at_ms": None, "archive_reason": None}
    if p.get("pinned") is True:
        if archived_at is not None:
            raise invalid_request("cannot pin an archived session; restore it first")
        changes["pinned_at_ms"] = row.pinned_at_ms or now
    elif p.get("pinned") is False:
        changes["pinned_at_ms"] = None
    if p.get("unread") is True:
        changes["marked_unread_at_ms"] = max(now, (row.marked_unread_at_ms or 0) + 1)
    elif p.get("unread") is False:
        changes |= {"last_read_at_ms": now, "marked_unread_at_ms": None}
    return changes


def listed_by_display(rows: list[ChatSession], given: dict[str, Any]) -> list[ChatSession]:
    """``sessions.list``'s ``archived`` (default: unarchived only; ``true``: archived only;
    ``"all"``), ``pinned`` and ``group`` (the category) filters."""
    archived = given.get("archived")
    if archived != "all":
        only = archived is True
        rows = [r for r in rows if (r.archived_at_ms is not None) == only]
    if isinstance(given.get("pinned"), bool):
        rows = [r for r in rows if (r.pinned_at_ms is not None) == given["pinned"]]
    if given.get("group") is not None:
        rows = [r for r in rows if (r.category or "") == given["group"]]
    return rows


def require_archived(row: ChatSession | None, key: str) -> None:
    """``sessions.delete {archivedOnly: true}``: refuse a session that is not archived
    (or does not exist), in the reference's words."""
    if row is None or row.archived_at_ms is None:
        raise invalid_request(f"Session {key} is not archived. Archive it first, then delete it.")
