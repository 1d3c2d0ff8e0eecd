"""Operator scopes: their names, what implies what, and the ``node.invoke`` command sets.

Which scope each method needs is declared beside its handler (:mod:`gateway.rpc`);
``NODE_METHODS``, ``OPERATOR_SCOPES`` and ``authorize`` are derived from that table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = [
    "ADMIN",
    "ADMIN_INVOKE_COMMANDS",
    "ADMIN_NODE_COMMANDS",
    "BROWSER_PROXY_COMMANDS",
    "PAIRING",
    "READ",
    "TALK",
    "WRITE",
    "is_forbidden_browser_proxy_mutation",
    "missing_requested_scope",
    "missing_scope_error",
    "node_invoke_scope",
    "normalize_operator_scopes",
    "scope_satisfied",
]

READ, WRITE, ADMIN = "operator.read", "operator.write", "operator.admin"
PAIRING, TALK = "operator.pairing", "operator.talk"

#: ``node.invoke`` commands that need operator.admin (the real gateway's admin-only host
#: boundary, ``NODE_ADMIN_ONLY_INVOKE_COMMANDS``); every other command needs operator.write.
ADMIN_INVOKE_COMMANDS = frozenset(
    {"browser.proxy", "browser.proxy.upload.v1", "fs.listDir", "terminal.upload"}
)
#: The browser proxy commands (``browser.proxy*``).
BROWSER_PROXY_COMMANDS = frozenset({"browser.proxy", "browser.proxy.upload.v1"})
#: Commands that need an administrator's own hand: the admin-only ones plus host execution
#: (an operator with write may run them; the agent's tools never do).
ADMIN_NODE_COMMANDS = ADMIN_INVOKE_COMMANDS | {"system.run", "system.run.prepare", "system.which"}

_SESSIONS_READ, _SESSIONS_WRITE = "operator.sessions.read", "operator.sessions.write"
#: Scopes that operator.write implies (``operatorScopeSatisfied``).
_IMPLIED_BY_WRITE = frozenset({READ, TALK, _SESSIONS_READ, _SESSIONS_WRITE})


def scope_satisfied(required: str, granted: Sequence[str]) -> bool:
    """The real gateway's operator implications: admin satisfies every operator scope;
    write also satisfies read, talk and the sessions scopes; read or sessions.write
    satisfies sessions.read. A scope outside ``operator.*`` is never satisfied."""
    if not required.startswith("operator."):
        return False
    if required in granted or ADMIN in granted:
        return True
    if required in _IMPLIED_BY_WRITE and WRITE in granted:
        return True
    return required == _SESSIONS_READ and (READ in granted or _SESSIONS_WRITE in granted)


def missing_requested_scope(requested: Sequence[str], granted: Sequence[str]) -> str | None:
    """The first of ``requested`` (blank entries skipped) that ``granted`` does not satisfy,
    as given (``resolveMissingRequestedScope`` for the operator role); None when all are."""
    for scope in requested:
        if scope.strip() and not scope_satisfied(scope.strip(), granted):
            return scope
    return None


def normalize_operator_scopes(scopes: Sequence[str]) -> list[str]:
    """``normalizeDeviceAuthScopes``: trimmed, de-duplicated, admin adding read and write,
    write adding read, sorted."""
    found = {s.strip() for s in scopes if s.strip()}
    if ADMIN in found:
        found |= {READ, WRITE}
    elif WRITE in found:
        found.add(READ)
    return sorted(found)


def is_forbidden_browser_proxy_mutation(params: Any) -> bool:
    """A browser proxy call that would create, reset or delete a persistent profile
    (``POST /profiles/create``, ``POST /reset-profile``, ``DELETE /profiles/<name>``)."""
    if not isinstance(params, dict):
        return False
    method, path = params.get("method"), params.get("path")
    if not isinstance(method, str) or not isinstance(path, str):
        return False
    verb, where = method.strip().upper(), path.strip()
    if not verb or not where:
        return False
    where = where if where.startswith("/") else f"/{where}"
    if len(where) > 1:
        where = where.rstrip("/")
    if verb == "POST" and where in ("/profiles/create", "/reset-profile"):
        return True
    parts = where.split("/")
    return verb == "DELETE" and len(parts) == 3 and parts[1] == "profiles" and bool(parts[2])


def missing_scope_error(missing: str, required: Sequence[str]) -> dict[str, Any]:
    """FORBIDDEN ``missing scope: X`` with ``details.code: MISSING_SCOPE``."""
    return error_shape(
        ErrorCode.FORBIDDEN,
        f"missing scope: {missing}",
        {"code": "MISSING_SCOPE", "missingScope": missing, "requiredScopes": list(required)},
    )


def node_invoke_scope(params: Any) -> str:
    """operator.admin for the admin-only commands (``browser.proxy*``, ``fs.listDir``,
    ``terminal.upload``), operator.write for the rest."""
    # As the real gateway: a browser profile mutation needs only write here (the handler
    # refuses it), and a mistyped command (``command: []``) too (the handler refuses it).
    p = params if isinstance(params, dict) else {}
    command = p.get("command")
    if not isinstance(command, str):
        return WRITE
    if command in BROWSER_PROXY_COMMANDS and is_forbidden_browser_proxy_mutation(p.get("params")):
        return WRITE
    return ADMIN if command in ADMIN_INVOKE_COMMANDS else WRITE
