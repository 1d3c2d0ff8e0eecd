"""The registry deciding who gets ``sessions.changed`` and ``session.message``."""

from __future__ import annotations

from gateway.subscriptions import SessionSubscriptions


def test_sessions_changed_reaches_only_sessions_subscribe() -> None:
    subs = SessionSubscriptions()
    subs.subscribe_all("a")
    subs.subscribe_messages("b", "agent:main:main")
    assert subs.receivers("sessions.changed", {"sessionKey": "agent:main:main"}) == {"a"}


def test_session_message_reaches_all_and_that_keys_subscribers() -> None:
    subs = SessionSubscriptions()
    subs.subscribe_all("a")
    subs.subscribe_messages("b", "agent:main:main")
    subs.subscribe_messages("c", "agent:main:other")
    payload = {"sessionKey": "agent:main:main"}
    assert subs.receivers("session.message", payload) == {"a", "b"}
    assert subs.receivers("session.message", {"no": "key"}) == set()
    subs.unsubscribe_messages("b", "agent:main:main")
    subs.unsubscribe_messages("b", "never-subscribed")
    assert subs.receivers("session.message", payload) == {"a"}


def test_other_events_are_not_routed_and_drop_forgets_a_connection() -> None:
    subs = SessionSubscriptions()
    assert subs.receivers("chat", {"sessionKey": "k"}) is None
    subs.subscribe_all("a")
    subs.subscribe_messages("a", "k1")
    subs.subscribe_messages("a", "k2")
    assert subs.message_keys("a") == ["k1", "k2"]
    subs.drop("a")
    assert not subs.subscribed_all("a")
    assert subs.message_keys("a") == []
    assert subs.receivers("session.message", {"sessionKey": "k1"}) == set()
