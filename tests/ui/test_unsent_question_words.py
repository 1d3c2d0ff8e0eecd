"""The question asked when switching gateways with messages still waiting counts them in
plain words (the switch journey sees the singular in the real window)."""

from __future__ import annotations

from ui.gateway_choice import unsent_count


def test_one_message_is_singular_and_more_are_plural() -> None:
    assert unsent_count(1) == "1 message has"
    assert unsent_count(2) == "2 messages have"
    assert unsent_count(12) == "12 messages have"
