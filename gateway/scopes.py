"""Operator scopes: their names (the :class:`~openclaw_desktop.protocol.OperatorScope`
members), what implies what, and the ``node.invoke`` command sets.

Which scope each method needs is declared beside its handler (:mod:`gateway.methods.table`);
``NODE_METHODS``, ``OPERATOR_SCOPES`` and ``authorize`` are derived from that table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from openclaw_desktop.protocol import ErrorCode, OperatorScope, error_shape

__all__ = [
    "ADMIN",
    "ADMIN_INVOKE_COMMANDS",
    "ADMIN_NODE_COMMANDS",
    "APPROVALS",
    "BROWSER_PROXY_COMMANDS",
    "PAIRING",
    "QUESTIONS",
    "READ",
    "SESSIONS_READ",
    "SESSIONS_WRITE",
    "SESSION_READ_METHODS",
    "SESSION_WRITE_METHODS",
    "TALK",
    "TALK_SECRETS",
    "WRITE",
    "authorize_required_scope",
    "is_forbidden_browser_proxy_mutation",
    "missing_requested_scope",
    "missing_scope_error",
    "node_invoke_scope",
    "normalize_operator_scopes",
    "scope_satisfied",
    "session_method_scope",
    "sessions_create_scope",
    "sessions_delete_scope",
    "sessions_patch_scope",
]

READ = OperatorScope.READ
WRITE = OperatorScope.WRITE
ADMIN = OperatorScope.ADMIN
APPROVALS = OperatorScope.APPROVALS
PAIRING = OperatorScope.PAIRING
TALK = OperatorScope.TALK
TALK_SECRETS = OperatorScope.TALK_SECRETS
QUESTIONS = OperatorScope.QUESTIONS
SESSIONS_READ = OperatorScope.SESSIONS_READ
SESSIONS_WRITE = OperatorScope.SESSIONS_WRITE

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

#: Scopes that operator.write implies (``operatorScopeSatisfied``).
_IMPLIED_BY_WRITE = frozenset({READ, TALK, SESSIONS_READ, SESSIONS_WRITE})


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
    return required == SESSIONS_READ and (READ in granted or SESSIONS_WRITE in granted)


#: Methods an operator holding only ``operator.sessions.read`` (or anything implying it)
#: may call although they are declared ``operator.read`` (the real gateway's session-read
#: set; some are not served here).
SESSION_READ_METHODS = frozenset(
    {
        "sessions.list",
        "sessions.subscribe",
        "sessions.messages.subscribe",
        "sessions.messages.unsubscribe",
        "sessions.viewers.set",
        "sessions.preview",
        "sessions.describe",
        "sessions.branches.list",
        "sessions.get",
        "sessions.resolve",
        "sessions.search",
        "sessions.files.list",
        "sessions.files.get",
        "sessions.setInvolvement",
        "chat.history",
        "chat.startup",
        "chat.metadata",
        "chat.message.get",
        "session.members.list",
        "session.members.listEvidence",
    }
)
#: Methods ``operator.sessions.write`` (or write, which implies it) may call although they
#: are declared ``operator.write`` (or ``operator.questions`` for ``question.*``), unless
#: the params make the call an admin one (the real gateway's session-write set).
SESSION_WRITE_METHODS = frozenset(
    {
        "question.request",
        "question.waitAnswer",
        "question.resolve",
        "question.get",
        "question.list",
        "chat.send",
        "chat.abort",
        "sessions.create",
        "sessions.patch",
        "sessions.patchMany",
        "sessions.delete",
        "sessions.fork",
        "sessions.recover",
        "sessions.send",
        "sessions.steer",
        "sessions.abort",
        "sessions.goal.update",
        "sessions.goal.clear",
    }
)
#: The ``sessions.patch`` fields a writer may set; any other needs admin.
_PATCH_WRITE_FIELDS = frozenset(
    {
        "label",
        "autoLabel",
        "icon",
        "color",
        "category",
        "boardFace",
        "boardPresentation",
        "pinned",
        "archived",
        "unread",
        "model",
        "agentRuntime",
        "thinkingLevel",
        "fastMode",
        "permissionMode",
        # the envelope
        "key",
        "agentId",
        "expectedSessionId",
        "expectedLifecycleRevision",
        "expectedPermissionMode",
        "expectedMarkedUnreadAt",
    }
)
#: The fields of a writer's ``sessions.delete`` (``archivedOnly: true`` only).
_DELETE_WRITE_FIELDS = frozenset(
    {"key", "agentId", "deleteTranscript", "expectedSessionId", "archivedOnly"}
)
_INCOGNITO_KEY = re.compile(
    r"agent:[^:]+:(?:dashboard|subagent|internal-session-effects):incognito-[^:]+"
)


def _is_incognito_key(value: Any) -> bool:
    return isinstance(value, str) and _INCOGNITO_KEY.fullmatch(value.strip().lower()) is not None


def sessions_create_scope(params: Any) -> OperatorScope:
    """operator.admin for an incognito session (``incognito: true`` or an incognito key or
    parent key), ``execNode``, ``toolOverrides`` or ``permissionMode: "full"``;
    operator.write otherwise."""
    if not isinstance(params, dict):
        return WRITE
    if (
        params.get("incognito") is True
        or _is_incognito_key(params.get("key"))
        or _is_incognito_key(params.get("parentSessionKey"))
        or "execNode" in params
        or "toolOverrides" in params
        or params.get("permissionMode") == "full"
    ):
        return ADMIN
    return WRITE


def sessions_patch_scope(params: Any) -> OperatorScope:
    """operator.write for the label, look, pin, archive, unread, model, runtime, thinking,
    fast and permission fields; operator.admin for any other field (``sendPolicy``,
    ``execHost``, ``sandboxMode``...) or ``permissionMode: "full"``."""
    if not isinstance(params, dict):
        return WRITE
    if params.get("permissionMode") == "full" or "sandboxMode" in params:
        return ADMIN
    return WRITE if all(key in _PATCH_WRITE_FIELDS for key in params) else ADMIN


def sessions_delete_scope(params: Any) -> OperatorScope:
    """operator.write for ``archivedOnly: true`` with only the key, agent, transcript and
    expected-session fields; operator.admin otherwise."""
    if not isinstance(params, dict) or params.get("archivedOnly") is not True:
        return ADMIN
    return WRITE if all(key in _DELETE_WRITE_FIELDS for key in params) else ADMIN


_SESSION_MUTATION_SCOPES = {
    "sessions.create": sessions_create_scope,
    "sessions.patch": sessions_patch_scope,
    "sessions.delete": sessions_delete_scope,
}


def session_method_scope(method: str, params: Any) -> OperatorScope | None:
    """The sessions scope that may stand in for ``method``'s own: sessions.read for the
    session-read set, sessions.write for the session-write set unless these params need
    admin; None for every other method."""
    if method in SESSION_READ_METHODS:
        return SESSIONS_READ
    if method in SESSION_WRITE_METHODS:
        rule = _SESSION_MUTATION_SCOPES.get(method)
        if rule is None or rule(params) != ADMIN:
            return SESSIONS_WRITE
    return None


def authorize_required_scope(
    required: str, granted: Sequence[str], session_scope: str | None, method: str
) -> bool:
    """Whether ``granted`` may make a call that needs ``required``: directly
    (:func:`scope_satisfied`), or through the call's session scope
    (:func:`session_method_scope`), which stands in for operator.read (sessions.read) and
    for operator.write or a ``question.*`` method's operator.questions (sessions.write)."""
    if scope_satisfied(required, granted):
        return True
    if session_scope is None or not scope_satisfied(session_scope, granted):
        return False
    if session_scope == SESSIONS_READ:
        return required == READ
    return session_scope == SESSIONS_WRITE and (
        required == WRITE or (required == QUESTIONS and method.startswith("question."))
    )


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


def node_invoke_scope(params: Any) -> OperatorScope:
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
