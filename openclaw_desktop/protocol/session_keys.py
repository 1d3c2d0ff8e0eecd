"""Session keys as the client writes them: the gateway's canonical key of the main agent's
session ``x`` is ``agent:main:x``; the app and its users may say just ``x`` (``main`` is
``agent:main:main``). Other agents' keys (``agent:<id>:<rest>``) are only ever written in
full.
"""

from __future__ import annotations

__all__ = [
    "MAIN_AGENT_PREFIX",
    "MAIN_SESSION_KEY",
    "canonical_session_key",
    "is_main_session",
    "same_session",
    "session_key_forms",
    "short_session_key",
]

#: The prefix of the main agent's sessions' canonical keys.
MAIN_AGENT_PREFIX = "agent:main:"
#: The main session's canonical key (always exists; its short form is ``main``).
MAIN_SESSION_KEY = f"{MAIN_AGENT_PREFIX}main"


def short_session_key(key: str) -> str:
    """``agent:main:x`` -> ``x``; any other key as it is."""
    return key.removeprefix(MAIN_AGENT_PREFIX) if key.startswith(MAIN_AGENT_PREFIX) else key


def canonical_session_key(key: str) -> str:
    """``x`` -> ``agent:main:x``; a key already naming an agent (``agent:...``) as it is."""
    return key if key.startswith("agent:") else f"{MAIN_AGENT_PREFIX}{key}"


def session_key_forms(key: str) -> set[str]:
    """The keys a row of session ``key`` may be listed under (``key`` itself and
    ``agent:main:<key>``)."""
    return {key, f"{MAIN_AGENT_PREFIX}{key}"}


def is_main_session(key: str) -> bool:
    """Whether ``key`` names the main session (``main`` or ``agent:main:main``)."""
    return key in ("main", MAIN_SESSION_KEY)


def same_session(gateway_key: str, wanted: str) -> bool:
    """Whether the gateway's canonical key names the session the app called ``wanted``
    (``main`` is ``agent:main:main``; ``agent:x:y`` only itself)."""
    if gateway_key == wanted:
        return True
    parts = gateway_key.split(":", 2)
    return len(parts) == 3 and parts[0] == "agent" and parts[2] == wanted
