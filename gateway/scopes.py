"""Who may call what: the role and operator scope each method needs (the real gateway's table
for the methods this gateway implements)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = ["NODE_METHODS", "authorize", "missing_scope_error", "scope_satisfied"]

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

#: node.invoke commands that need operator.admin.
ADMIN_NODE_COMMANDS = frozenset(
    {"system.run", "system.run.prepare", "system.which", "browser.proxy", "fs.listDir"}
)


def scope_satisfied(required: str, granted: Sequence[str]) -> bool:
    """Admin satisfies everything; write also satisfies read and talk."""
    if required in granted or ADMIN in granted:
        return True
    return required in (READ, TALK) and WRITE in granted


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
        command = params.get("command") if isinstance(params, dict) else None
        return ADMIN if command in ADMIN_NODE_COMMANDS else WRITE
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
