"""What the sessions sidebar calls a session: a label a person or the gateway gave it, else
its first message, never an id such as ``dashboard:<uuid>``."""

from __future__ import annotations

import pytest

from ui.presenters.sessions import TITLE_CHARS, session_title, short_title

DASHBOARD = "agent:main:dashboard:5f0c6f2e-8d1b-4a53-9a3e-2f7d1c0b9e41"


@pytest.mark.parametrize(
    ("row", "first", "title"),
    [
        ({"key": "agent:main:main"}, None, "Main"),
        ({"key": DASHBOARD, "label": "Garden party"}, "ignored", "Garden party"),
        # The real gateway's derivedTitle (from the first message, when asked for).
        (
            {"key": DASHBOARD, "derivedTitle": "Plan the garden party"},
            None,
            "Plan the garden party",
        ),
        ({"key": DASHBOARD}, "what is\n  the weather?", "what is the weather?"),
        # Names that are only ids are not titles.
        ({"key": DASHBOARD, "displayName": DASHBOARD.split(":", 2)[-1]}, "hi", "hi"),
        (
            {"key": DASHBOARD, "displayName": "dashboard:5f0c6f2e-8d1b-4a53-9a3e-2f7d1c0b9e41"},
            None,
            "New session",
        ),
        ({"key": "agent:main:work"}, None, "work"),
    ],
)
def test_titles(row: dict[str, object], first: str | None, title: str) -> None:
    """Label, gateway title, first message, a key a person chose; never a UUID."""
    assert session_title(row, first) == title


def test_an_untitled_new_session_says_when_it_was_made() -> None:
    """Before its first message a new session is "New session (<when>)", not its key."""
    shown = session_title({"key": DASHBOARD, "createdAt": 1_780_000_000_000})
    assert shown.startswith("New session (") and "dashboard" not in shown


def test_long_titles_are_cut_at_a_word() -> None:
    """One line, at most TITLE_CHARS, ending with an ellipsis at a word boundary."""
    text = "please summarize the quarterly report and list every open question for the team"
    cut = short_title(text)
    assert len(cut) <= TITLE_CHARS and cut.endswith("…")
    assert text.startswith(cut[:-1]) and not cut[:-1].endswith(" ")
    assert cut[:-1].split()[-1] in text.split()
