"""The client's session-key rule (:mod:`openclaw_desktop.protocol.session_keys`) and the
loopback URL of a gateway on this computer."""

from __future__ import annotations

from openclaw_desktop.protocol.session_keys import (
    MAIN_SESSION_KEY,
    canonical_session_key,
    is_main_session,
    same_session,
    session_key_forms,
    short_session_key,
)
from openclaw_desktop.protocol.version import DEFAULT_GATEWAY_PORT, loopback_url


def test_the_main_agents_keys_have_a_short_form() -> None:
    assert MAIN_SESSION_KEY == "agent:main:main"
    assert short_session_key("agent:main:main") == "main"
    assert short_session_key("agent:main:dashboard:1") == "dashboard:1"
    assert short_session_key("agent:other:x") == "agent:other:x"
    assert short_session_key("work") == "work"
    assert canonical_session_key("main") == "agent:main:main"
    assert canonical_session_key("agent:other:x") == "agent:other:x"
    assert session_key_forms("work") == {"work", "agent:main:work"}
    assert is_main_session("main") and is_main_session("agent:main:main")
    assert not is_main_session("agent:other:main")


def test_same_session_matches_the_rest_of_any_agents_key() -> None:
    assert same_session("agent:main:main", "main")
    assert same_session("agent:main:main", "agent:main:main")
    assert not same_session("agent:main:domain", "main")
    assert not same_session("main:x", "x")


def test_loopback_url() -> None:
    assert loopback_url(4000) == "ws://127.0.0.1:4000"
    assert loopback_url() == f"ws://127.0.0.1:{DEFAULT_GATEWAY_PORT}"
