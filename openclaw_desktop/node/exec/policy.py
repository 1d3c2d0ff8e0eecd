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
from enum import StrEnum
from typing import Any

from openclaw_desktop.node.exec.approvals import ResolvedPolicy

__all__ = [
    "DecisionKind",
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


class DecisionKind(StrEnum):
    """Who or what decided one ``system.run``."""

    #: ``security=full``: anything runs.
    POLICY_FULL = "policy-full"
    #: An allowlist entry allowed it (:attr:`ExecDecision.entry`).
    ALLOWLIST = "allowlist"
    #: The gateway's operator approved it (an explicit approval bound to a prepared plan).
    GATEWAY_APPROVED = "gateway-approved"
    #: The user allowed it once in this computer's prompt.
    USER_ONCE = "user-once"
    #: The user allowed it always: it was added to the allowlist.
    USER_ALWAYS = "user-always"
    #: The user denied it in this computer's prompt (Deny, Enter, Escape, closing it).
    USER_DENIED = "user-denied"
    #: The policy refused it (``security=deny``, an allowlist miss with nobody to ask, a
    #: stale approval, a missing permission).
    POLICY_DENIED = "policy-denied"
    #: The prompt got no answer in time: the ask fallback decided.
    TIMEOUT_FALLBACK = "timeout-fallback"
    #: Nobody to ask (no window): the ask fallback decided.
    HEADLESS_FALLBACK = "headless-fallback"


#: What a person reads for each kind (the Activity view's decision column).
_VERBS = {
    DecisionKind.USER_ONCE: "allowed once",
    DecisionKind.USER_ALWAYS: "allowed always",
}


@dataclass(frozen=True)
class ExecDecision:
    """One allow/deny decision, as the Activity view shows it (never the command output).

    ``kind`` says who decided and ``why`` says it in words (never the command's arguments:
    ``why`` is logged as it is); ``entry`` is the allowlist entry that allowed the run, if
    one did. ``reason`` and ``source`` are the refusal message and the deciding layer
    (``policy``, ``allowlist``, ``prompt``, ``ask-fallback``, ``explicit-approval``).
    """

    request: ExecRequest
    allowed: bool
    reason: str
    source: str
    kind: DecisionKind
    why: str = ""
    entry: dict[str, Any] | None = None
    at_ms: int = field(default_factory=lambda: int(time.time() * 1000))

    @property
    def verb(self) -> str:
        """``allowed``, ``allowed once``, ``allowed always`` or ``denied``."""
        return _VERBS.get(self.kind, "allowed" if self.allowed else "denied")

    def log_line(self) -> str:
        """The decision for the log: the executable and how many arguments, never the
        arguments themselves (they may hold secrets) nor the environment."""
        request = self.request
        executable = request.resolved_path or (request.argv[0] if request.argv else "?")
        count = max(len(request.argv) - 1, 0)
        where = request.cwd or "the node's own folder"
        who = ", ".join(
            part
            for part in (
                f"agent {request.agent_id}" if request.agent_id else "",
                f"session {request.session_key}" if request.session_key else "",
            )
            if part
        )
        text = (
            f"exec {self.verb} ({self.why or self.source}): {executable} with {count} "
            f"argument{'s' if count != 1 else ''} in {where}, "
            f"asked by {who or 'an unnamed agent'}"
        )
        return "".join(c if c.isprintable() else "?" for c in text)


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
    kind: DecisionKind = DecisionKind.POLICY_DENIED
    #: Who or what decided, in words (no command arguments).
    why: str = ""


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


def _deny(message: str, source: str, kind: DecisionKind, why: str) -> Verdict:
    code = message.split(":", 1)[0]
    return Verdict(False, code, message, source, kind=kind, why=why)


def _allow(source: str, kind: DecisionKind, why: str, **extra: Any) -> Verdict:
    return Verdict(True, "", "", source, kind=kind, why=why, **extra)


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
        why = "security is deny" if policy.security == "deny" else "the ask fallback is deny"
        return _deny(
            "SYSTEM_RUN_DISABLED: security=deny", "policy", DecisionKind.POLICY_DENIED, why
        )
    if explicit is not None:
        return _allow(
            "explicit-approval", DecisionKind.GATEWAY_APPROVED, "approved through the gateway"
        )
    needs_ask = ask == "always" or (
        ask == "on-miss" and security == "allowlist" and matched is None
    )
    if needs_ask:
        durable = ask != "always" and request.resolved_path is not None and analysable
        asked = replace(request, allow_always=durable)
        answer = await prompt(asked) if prompt is not None else None
        if answer in ("allow-once", "allow-always"):
            if answer == "allow-always" and durable and request.resolved_path:
                args = " ".join(argv[1:])
                persist = {"pattern": request.resolved_path, "argPattern": f"^{re.escape(args)}$"}
                why = "you allowed it always (added to the allowlist)"
                return _allow("prompt", DecisionKind.USER_ALWAYS, why, persist=persist)
            return _allow("prompt", DecisionKind.USER_ONCE, "you allowed it once")
        if answer == "deny":
            why = "you denied it"
            return _deny("SYSTEM_RUN_DENIED: user denied", "prompt", DecisionKind.USER_DENIED, why)
        fallback = policy.ask_fallback
        if prompt is None:
            kind, why = DecisionKind.HEADLESS_FALLBACK, "no window to ask"
        else:
            kind, why = DecisionKind.TIMEOUT_FALLBACK, "nobody answered in time"
        why = f"{why}; ask fallback {fallback}"
        if fallback == "full":
            return _allow("ask-fallback", kind, why)
        if fallback == "allowlist" and matched is not None:
            return _allow("ask-fallback", kind, f"{why}, allowlist entry {_pattern(matched)}")
        if fallback == "allowlist":
            why = f"{why}, not in the allowlist"
        return _deny("SYSTEM_RUN_DENIED: approval required", "ask-fallback", kind, why)
    if security == "allowlist" and matched is None:
        why = "not in the allowlist" + (
            ", and shell commands are never matched" if not analysable else ""
        )
        why = f"{why} (ask {ask})"
        return _deny("SYSTEM_RUN_DENIED: allowlist miss", "policy", DecisionKind.POLICY_DENIED, why)
    if matched is not None:
        why = f"allowlist entry {_pattern(matched)}"
        return _allow("allowlist", DecisionKind.ALLOWLIST, why, matched=matched)
    return _allow("policy", DecisionKind.POLICY_FULL, "security is full")


def _pattern(entry: dict[str, Any]) -> str:
    """An entry's path pattern, and whether it also constrains the arguments (the argument
    pattern itself is not named: it may quote a secret)."""
    pattern = str(entry.get("pattern") or "").strip()
    return f"{pattern} (with an argument pattern)" if entry.get("argPattern") else pattern
