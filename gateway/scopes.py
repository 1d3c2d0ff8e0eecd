"""Who may call what: the role and operator scope each method needs (the real gateway's table
for the methods this gateway implements)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = [
    "ADMIN_INVOKE_COMMANDS",
    "ADMIN_NODE_COMMANDS",
    "BROWSER_PROXY_COMMANDS",
    "NODE_METHODS",
    "authorize",
    "is_forbidden_browser_proxy_mutation",
    "missing_requested_scope",
    "missing_scope_error",
    "normalize_operator_scopes",
    "scope_satisfied",
]

READ, WRITE, ADMIN = "operator.read", "operator.write", "operator.admin"
PAIRING, TALK = "operator.pairing", "operator.talk"

#: Methods only the node role may call.
NODE_METHODS = frozenset(
    {
        "node.invoke.result",
        "node.invoke.progress",
        "node.event",
        "node.pending.pull",
        "node.pending.ack",
        "node.pending.drain",
        "node.pluginTools.update",
        "node.skills.update",
        "node.pluginSurface.refresh",
        "node.runnerInventory.update",
    }
)

#: Operator methods and the scope each requires (``node.invoke`` is dynamic: write or admin).
OPERATOR_SCOPES: dict[str, str] = {
    "health": READ,
    "status": READ,
    "system-presence": READ,
    "node.list": READ,
    "node.describe": READ,
    "node.rename": PAIRING,
    "node.pair.list": PAIRING,
    "node.pair.approve": PAIRING,
    "node.pair.reject": PAIRING,
    "node.pair.remove": PAIRING,
    "device.pair.list": PAIRING,
    "device.pair.approve": PAIRING,
    "device.pair.reject": PAIRING,
    "device.pair.remove": PAIRING,
    "device.pair.rename": PAIRING,
    "device.token.rotate": PAIRING,
    "device.token.revoke": PAIRING,
    "device.pair.setupCode": ADMIN,
    "device.pair.setupStatus": ADMIN,
    "chat.send": WRITE,
    "chat.abort": WRITE,
    "chat.history": READ,
    "chat.message.get": READ,
    "chat.inject": ADMIN,
    "sessions.list": READ,
    "sessions.create": WRITE,
    "sessions.patch": WRITE,
    "sessions.reset": ADMIN,
    "sessions.delete": ADMIN,
    "models.list": READ,
    "models.authStatus": READ,
    "talk.catalog": READ,
    "talk.config": READ,
    "talk.mode": TALK,
    "talk.speak": TALK,
    "talk.session.create": TALK,
    "talk.session.appendAudio": TALK,
    "talk.session.cancelOutput": TALK,
    "talk.session.close": TALK,
}

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


def required_scope(method: str, params: Any) -> str:
    """The operator scope ``method`` needs; unknown methods need admin (as the reference)."""
    if method == "node.invoke":
        # As the real gateway: admin for the admin-only commands, write for the rest (a
        # browser profile mutation needs only write here; the handler refuses it).
        p = params if isinstance(params, dict) else {}
        command = p.get("command")
        if not isinstance(command, str):  # mistyped (``command: []``): the handler refuses it
            return WRITE
        if command in BROWSER_PROXY_COMMANDS and is_forbidden_browser_proxy_mutation(
            p.get("params")
        ):
            return WRITE
        return ADMIN if command in ADMIN_INVOKE_COMMANDS else WRITE
    return OPERATOR_SCOPES.get(method, ADMIN)


def authorize(role: str, scopes: Sequence[str], method: str, params: Any) -> dict[str, Any] | None:
    """None when allowed, else the ErrorShape to answer with."""
    if method == "health":
        return None
    if method in NODE_METHODS:
        if role != "node":
            return error_shape(ErrorCode.INVALID_REQUEST, f"unauthorized role: {role}")
        return None
    if role != "operator":
        return error_shape(ErrorCode.INVALID_REQUEST, f"unauthorized role: {role}")
    needed = required_scope(method, params)
    if scope_satisfied(needed, scopes):
        return None
    return missing_scope_error(needed, [needed])
