"""Whether a command may run: the approvals policy, the allowlist, and who decides a miss.

The rules are the reference's (``docs/tools/exec-approvals.md``): ``security=deny`` refuses
everything (``SYSTEM_RUN_DISABLED: security=deny``); ``ask=always``, or ``ask=on-miss`` with
``security=allowlist`` and no allowlist match, needs an approval; ``security=allowlist``
without a match or an approval is an ``allowlist miss``; ``full`` runs anything.

An approval comes from the request (``approved``/``approvalDecision`` with the prepared
plan, after the gateway asked its operator) or from this computer's :data:`ExecPrompt` (the
window's *Allow command?* dialog, once it exists). With nobody to ask, or when the prompt
gives no answer, the agent's ``askFallback`` applies (``deny`` unless configured).

Allowlist patterns: a path glob (``/usr/bin/*``, ``~/bin/**/rg``: ``*`` stays within a
path segment, ``**`` crosses them) matches the resolved executable; a bare name glob
(``rg``) matches only a command invoked through ``PATH``. ``argPattern`` is a regular
expression searched in the arguments joined by one space (Python ``re``; the reference's
ECMAScript semantics differ only in exotic syntax); generated exact-argv hashes
(``sha256:argv:...``) are not understood here and never match. A shell-wrapped command
(``sh -c "..."``) is not analysed segment by segment as the reference does: under
``allowlist`` it is a miss (asked about, or refused), so a shell never widens an allowlist.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import shutil
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from openclaw_desktop.node.exec.approvals import ResolvedPolicy

__all__ = [
    "ExecDecision",
    "ExecPrompt",
    "ExecRequest",
    "Verdict",
    "decide",
    "is_shell_wrapper",
    "match_allowlist",
    "resolve_executable",
]

log = logging.getLogger("openclaw.node.exec")

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "ash"})
_SECURITY_RANK = {"deny": 0, "allowlist": 1, "full": 2}


@dataclass(frozen=True)
class ExecRequest:
    """What the agent asked to run (what a prompt shows)."""

    argv: tuple[str, ...]
    command_text: str
    cwd: str | None
    agent_id: str | None
    session_key: str | None
    resolved_path: str | None
    #: Whether the prompt may offer *Always allow* (set by :func:`decide`): the command is
    #: analysable and resolved, and ``ask`` is not ``always`` (there, as on the reference,
    #: durable trust would not stop the prompts, so only Allow once and Deny are offered).
    allow_always: bool = False


#: Asks the user about one command: ``"allow-once"``, ``"allow-always"``, ``"deny"``, or None
#: when nobody answered (no window, a timeout). None then means the ask fallback applies.
ExecPrompt = Callable[[ExecRequest], Awaitable[str | None]]


@dataclass(frozen=True)
class ExecDecision:
    """One allow/deny decision, as the Activity view shows it (never the command output)."""

    request: ExecRequest
    allowed: bool
    reason: str
    source: str
    at_ms: int = field(default_factory=lambda: int(time.time() * 1000))


@dataclass(frozen=True)
class Verdict:
    """The outcome of :func:`decide`."""

    allowed: bool
    code: str
    message: str
    source: str
    persist: dict[str, Any] | None = None
    #: The allowlist entry that allowed the run (its use is recorded in the document).
    matched: dict[str, Any] | None = None


def is_shell_wrapper(argv: list[str] | tuple[str, ...]) -> bool:
    """``sh -c ...``-like: the request itself asks for a shell."""
    return (
        len(argv) >= 3
        and os.path.basename(argv[0]) in _SHELLS
        and any(a in ("-c", "-lc", "-ic") for a in argv[1:-1])
    )


def resolve_executable(argv0: str, cwd: str | None, env: dict[str, str]) -> str | None:
    """The absolute path ``argv0`` runs (None when not found)."""
    if "/" in argv0:
        path = os.path.join(cwd or os.getcwd(), os.path.expanduser(argv0))
        return os.path.realpath(path) if os.path.isfile(path) else None
    found = shutil.which(argv0, path=env.get("PATH"))
    return os.path.realpath(found) if found else None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pattern[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(parts) + r"\Z")


def _args_match(entry: dict[str, Any], args: list[str]) -> bool:
    arg_pattern = entry.get("argPattern")
    if arg_pattern is None:
        return True
    if not isinstance(arg_pattern, str) or arg_pattern.startswith("sha256:"):
        return False
    try:
        return re.search(arg_pattern, " ".join(args)) is not None
    except re.error:
        return False


def match_allowlist(
    entries: tuple[dict[str, Any], ...], argv: list[str], resolved: str | None
) -> dict[str, Any] | None:
    """The first entry allowing ``argv`` (resolved to ``resolved``), or None."""
    if resolved is None:
        return None
    via_path = "/" not in argv[0]
    for entry in entries:
        pattern = str(entry.get("pattern") or "").strip()
        if not pattern:
            continue
        if "/" in pattern or pattern.startswith("~"):
            hit = bool(_glob_regex(os.path.expanduser(pattern)).match(resolved))
        else:
            hit = via_path and fnmatch.fnmatchcase(argv[0].lower(), pattern.lower())
        if hit and _args_match(entry, argv[1:]):
            return entry
    return None


def _stricter(security: str, fallback: str) -> str:
    return min(security, fallback, key=lambda s: _SECURITY_RANK.get(s, 0))


def _deny(message: str, source: str) -> Verdict:
    code = message.split(":", 1)[0]
    return Verdict(False, code, message, source)


async def decide(
    request: ExecRequest,
    policy: ResolvedPolicy,
    *,
    explicit: str | None,
    ask_fallback_request: bool,
    prompt: ExecPrompt | None,
) -> Verdict:
    """Apply the policy to one request.

    Args:
        explicit: the gateway's approval (``allow-once``/``allow-always``), already checked
            against the prepared plan, or None.
        ask_fallback_request: the gateway says nobody answered (``approvalSource:
            "ask-fallback"``): the fallback's security applies and nobody is asked.
        prompt: this computer's prompt, or None (headless).
    """
    security, ask = policy.security, policy.ask
    if ask_fallback_request:
        security, ask = _stricter(security, policy.ask_fallback), "off"
    argv = list(request.argv)
    analysable = not is_shell_wrapper(argv)
    matched = match_allowlist(policy.allowlist, argv, request.resolved_path) if analysable else None
    if security == "deny":
        return _deny("SYSTEM_RUN_DISABLED: security=deny", "policy")
    if explicit is not None:
        return Verdict(True, "", "", "explicit-approval")
    needs_ask = ask == "always" or (
        ask == "on-miss" and security == "allowlist" and matched is None
    )
    if needs_ask:
        durable = ask != "always" and request.resolved_path is not None and analysable
        asked = replace(request, allow_always=durable)
        answer = await prompt(asked) if prompt is not None else None
        if answer in ("allow-once", "allow-always"):
            persist = None
            if answer == "allow-always" and durable and request.resolved_path:
                args = " ".join(argv[1:])
                persist = {"pattern": request.resolved_path, "argPattern": f"^{re.escape(args)}$"}
            return Verdict(True, "", "", "prompt", persist)
        if answer == "deny":
            return _deny("SYSTEM_RUN_DENIED: user denied", "prompt")
        fallback = policy.ask_fallback
        if fallback == "full" or (fallback == "allowlist" and matched is not None):
            return Verdict(True, "", "", "ask-fallback")
        return _deny("SYSTEM_RUN_DENIED: approval required", "ask-fallback")
    if security == "allowlist" and matched is None:
        return _deny("SYSTEM_RUN_DENIED: allowlist miss", "policy")
    if matched is not None:
        return Verdict(True, "", "", "allowlist", matched=matched)
    return Verdict(True, "", "", "policy")
