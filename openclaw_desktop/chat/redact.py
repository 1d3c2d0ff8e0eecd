"""Redaction and sanitizing of text shown in tool cards, approvals and the activity view.

Secrets the agent may see (API keys, bearer tokens, passwords in URLs or ``key=value``
pairs, private keys) are replaced by ``[redacted]``; control characters (terminal escapes
that could disguise a command) are stripped.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact", "strip_control"]

REDACTED = "[redacted]"
_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S),
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{16,}"),  # OpenAI-style keys
    re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"\bxox[abpr]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-+/=]{12,}"),
    re.compile(
        r"(?i)\b(password|passwd|pwd|token|secret|api[_-]?key|access[_-]?key)"
        r"(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
    ),
    re.compile(r"(?i)(--(?:password|token|api-key|secret)[= ])(\S+)"),
    re.compile(r"(://[^/\s:@]+:)[^@\s/]+(@)"),  # user:password@host
]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")


def _replace(match: re.Match[str]) -> str:
    groups = match.groups()
    if len(groups) >= 3 and groups[1] is not None and groups[0] is not None:
        return f"{groups[0]}{groups[1]}{REDACTED}"  # key = [redacted]
    if len(groups) == 2 and groups[0] is not None and groups[1] is not None:
        text = match.group(0)
        if text.startswith("://"):
            return f"{groups[0]}{REDACTED}{groups[1]}"
        return f"{groups[0]}{REDACTED}"
    if len(groups) == 1 and groups[0] is not None and groups[0].lower().startswith("bearer"):
        return f"{groups[0]}{REDACTED}"
    return REDACTED


def redact(text: str) -> str:
    """``text`` with secrets replaced by ``[redacted]``."""
    for pattern in _PATTERNS:
        text = pattern.sub(_replace, text)
    return text


def strip_control(text: str) -> str:
    """``text`` without terminal escapes, control and bidi-override characters (newline and
    tab stay)."""
    return _CONTROL.sub("", _ANSI.sub("", text))
