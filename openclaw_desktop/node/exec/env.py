"""The environment of a command run for the agent, sanitized as the real node host does.

* Inherited from this process: every variable except the dangerous ones
  (:data:`~.env_policy.BLOCKED_EVERYWHERE`, the override-only ones not explicitly allowed to
  be inherited, and the ``LD_``/``DYLD_``/``BASH_FUNC_`` prefixes). ``GIT_ALLOW_PROTOCOL`` is
  narrowed to ``git:http:https:ssh`` and a permissive ``GIT_PROTOCOL_FROM_USER`` becomes
  ``0``.
* Overrides from the request (``env``): a blocked key (``PATH`` included), or a key that is
  not a portable name, refuses the whole request (:class:`EnvRejected`), naming the keys;
  ``PAGER``/``GIT_PAGER`` set to ``""`` or ``cat`` is accepted as ``""``.
* ``OPENCLAW_CLI=1`` marks the child as launched by OpenClaw.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.node.exec.env_policy import (
    BLOCKED_EVERYWHERE,
    BLOCKED_OVERRIDE_ONLY,
    BLOCKED_OVERRIDE_PREFIXES,
    BLOCKED_PREFIXES,
    INHERITED_ALLOWED,
)

__all__ = ["EnvRejected", "check_overrides", "child_env", "shell_wrapper_overrides"]

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PORTABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WINDOWS_COMPAT = re.compile(r"^[A-Za-z_][A-Za-z0-9_()]*$")
_CARGO_TARGET = re.compile(r"^CARGO_TARGET_[A-Z0-9_]+_(?:LINKER|RUNNER)$")
_BLOCKED_INHERITED = BLOCKED_EVERYWHERE | (BLOCKED_OVERRIDE_ONLY - INHERITED_ALLOWED)
_GIT_SAFE_PROTOCOLS = ("git", "http", "https", "ssh")
#: What a shell-wrapped command (``sh -c``) may still be given: terminal and locale only.
_SHELL_WRAPPER_KEYS = frozenset(
    {"TERM", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "COLORTERM", "NO_COLOR", "FORCE_COLOR"}
    | {"OPENCLAW_SUBAGENT_EXEC"}
)


@dataclass(frozen=True)
class EnvRejected(OpenClawError):
    """Overrides the node refuses: blocked keys and keys that are not portable names."""

    blocked: tuple[str, ...]
    invalid: tuple[str, ...]

    def message(self) -> str:
        """``SYSTEM_RUN_DENIED: environment override rejected (...)`` as the reference says."""
        details = []
        if self.blocked:
            details.append(f"blocked override keys: {', '.join(self.blocked)}")
        if self.invalid:
            details.append(f"invalid non-portable override keys: {', '.join(self.invalid)}")
        return f"SYSTEM_RUN_DENIED: environment override rejected ({'; '.join(details)})"


def _no_pager(key: str, value: str) -> bool:
    return key.upper() in ("GIT_PAGER", "PAGER") and value in ("", "cat")


def _inherited_dangerous(upper: str) -> bool:
    return upper in _BLOCKED_INHERITED or upper.startswith(BLOCKED_PREFIXES)


def _override_dangerous(upper: str) -> bool:
    return (
        upper in BLOCKED_EVERYWHERE
        or upper.startswith(BLOCKED_PREFIXES)
        or upper in BLOCKED_OVERRIDE_ONLY
        or bool(_CARGO_TARGET.match(upper))
        or upper.startswith(BLOCKED_OVERRIDE_PREFIXES)
    )


def check_overrides(overrides: Mapping[str, object] | None) -> dict[str, str]:
    """The accepted overrides (non-string values are ignored, as the reference does).

    Raises:
        EnvRejected: A key is blocked (``PATH``, ``LD_PRELOAD``, ``HOME``, ...) or invalid.
    """
    accepted: dict[str, str] = {}
    blocked: set[str] = set()
    invalid: set[str] = set()
    for raw_key, value in (overrides or {}).items():
        if not isinstance(value, str):
            continue
        key = raw_key.strip()
        if not key or not (_PORTABLE.match(key) or _WINDOWS_COMPAT.match(key)):
            invalid.add(key or raw_key)
            continue
        upper = key.upper()
        if upper == "PATH":
            blocked.add(upper)
        elif _no_pager(upper, value):
            accepted[key] = ""
        elif _override_dangerous(upper):
            blocked.add(upper)
        else:
            accepted[key] = value
    if blocked or invalid:
        raise EnvRejected(tuple(sorted(blocked)), tuple(sorted(invalid)))
    return accepted


def shell_wrapper_overrides(overrides: Mapping[str, str]) -> dict[str, str]:
    """What a shell-wrapped command keeps of the accepted overrides (terminal, locale, no
    pager): a shell payload could otherwise turn any variable into code."""
    kept: dict[str, str] = {}
    for key, value in overrides.items():
        if not _PORTABLE.match(key):
            continue
        upper = key.upper()
        if _no_pager(upper, value):
            kept[key] = ""
        elif upper in _SHELL_WRAPPER_KEYS or upper.startswith("LC_"):
            kept[key] = value
    return kept


def _inherited_entry(key: str, value: str) -> str | None:
    upper = key.upper()
    if upper == "GIT_ALLOW_PROTOCOL":
        protocols = [p for p in value.strip().split(":") if p in _GIT_SAFE_PROTOCOLS]
        return ":".join(protocols) if value.strip() else ""
    if upper == "GIT_PROTOCOL_FROM_USER":
        lowered = value.strip().lower()
        permissive = lowered in ("true", "yes", "on") or (
            bool(re.fullmatch(r"[+-]?\d+", lowered)) and not re.fullmatch(r"[+-]?0+", lowered)
        )
        return "0" if permissive else value
    if _inherited_dangerous(upper):
        return None
    return value


def child_env(
    overrides: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The sanitized environment: ``base`` (this process's) filtered, then the (already
    checked) overrides, then ``OPENCLAW_CLI=1``; ``PATH`` falls back to the system default."""
    env: dict[str, str] = {}
    for raw_key, value in (os.environ if base is None else base).items():
        key = raw_key.strip()
        if not key:
            continue
        kept = _inherited_entry(key, value)
        if kept is not None:
            env[key] = kept
    env.update(overrides or {})
    env.setdefault("PATH", DEFAULT_PATH)
    env["OPENCLAW_CLI"] = "1"
    return env
