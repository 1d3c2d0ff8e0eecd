"""Session keys: canonical form (``agent:<agentId>:<rest>``) and safe transcript file names.

The rules follow the reference gateway: keys are case-insensitive and normalized to lowercase,
``main`` means ``agent:main:main``, any key that is not agent-scoped is placed under the default
agent (``probe`` -> ``agent:main:probe``), and an agent-scoped key needs a non-empty agent id and
a non-empty rest. A key never becomes a path: the file name is a SHA-256 digest of the canonical
key, so ``../../etc`` or ``agent:main:/abs`` cannot leave the transcript folder.
"""

from __future__ import annotations

import hashlib
import re

__all__ = [
    "SESSION_KEY_MAX_LENGTH",
    "TRANSCRIPT_SUFFIX",
    "canonical_session_key",
    "transcript_filename",
]

#: Longest raw session key accepted (``CHAT_SEND_SESSION_KEY_MAX_LENGTH`` of the reference).
SESSION_KEY_MAX_LENGTH = 512
#: Suffix of a live transcript file; archived files end differently so listings skip them.
TRANSCRIPT_SUFFIX = ".jsonl"

_AGENT_ID_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
# C0 controls, DEL and C1 controls; also line/paragraph separators, which break log lines.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _check_agent_id(agent_id: str, what: str) -> str:
    if not _AGENT_ID_RE.fullmatch(agent_id):
        raise ValueError(
            f"{what} {agent_id!r} is not a valid agent id "
            "(1-64 chars of a-z, 0-9, '_' or '-', starting with a letter or digit)"
        )
    return agent_id


def canonical_session_key(key: str, default_agent: str = "main") -> str:
    """Return the canonical ``agent:<agentId>:<rest>`` form of a session key.

    Surrounding whitespace is stripped and the key is lowercased. A key that does not start
    with ``agent:`` is put under ``default_agent``. Colons inside ``rest`` are kept as they
    are (``agent:main:telegram:direct:42`` stays itself).

    Args:
        key: The session key as a client sent it (``main``, ``Agent:Main:Main``, ...).
        default_agent: Agent id for keys that are not agent-scoped.

    Raises:
        ValueError: If the key is not a string, is empty, is longer than 512 characters,
            contains control characters, or is an ``agent:`` key with an empty or invalid
            agent id, an empty segment, or no rest.
    """
    if not isinstance(key, str):
        raise ValueError(f"session key must be a string, not {type(key).__name__}")
    if len(key) > SESSION_KEY_MAX_LENGTH:
        raise ValueError(f"session key is longer than {SESSION_KEY_MAX_LENGTH} characters")
    if _CONTROL_RE.search(key):
        raise ValueError("session key contains control characters")
    normalized = key.strip().lower()
    if not normalized:
        raise ValueError("session key is empty")
    agent = _check_agent_id(default_agent.strip().lower(), "default agent")
    parts = normalized.split(":")
    if parts[0] != "agent":
        if any(not part for part in parts):
            raise ValueError(f"session key {key!r} has an empty ':' segment")
        return f"agent:{agent}:{normalized}"
    if len(parts) < 3:
        raise ValueError(f"session key {key!r} must look like agent:<agentId>:<rest>")
    if any(not part.strip() for part in parts[1:]):
        raise ValueError(f"session key {key!r} has an empty ':' segment")
    _check_agent_id(parts[1], "agent id in session key")
    return normalized


def transcript_filename(canonical_key: str) -> str:
    """Return the file name (no directory part) of a canonical key's live transcript."""
    digest = hashlib.sha256(canonical_key.encode("utf-8")).hexdigest()
    return f"{digest}{TRANSCRIPT_SUFFIX}"
