"""Unit tests: the method table declared beside the handlers (``gateway/methods/table.py``): every
advertised method has a declared scope, the scopes are the ones the real gateway needs, the
table refuses a method declared without one, and the generated method reference is current."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest

import gateway.methods
import gateway.scopes
from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.reference import REFERENCE_PATH, render_reference
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, APPROVALS, PAIRING, QUESTIONS, READ, TALK, WRITE
from openclaw_desktop.protocol import Method, OperatorScope

SESSIONS_READ, SESSIONS_WRITE = "operator.sessions.read", "operator.sessions.write"

#: The scope table this gateway had before the method table (``gateway/scopes.py``
#: ``OPERATOR_SCOPES``, checked against the real gateway by the interop scope tests): the
#: declarations beside the handlers must reproduce it value for value.
EXPECTED_OPERATOR_SCOPES = {
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
    "agents.list": READ,
    "agent.wait": WRITE,
    "sessions.list": READ,
    "sessions.describe": READ,
    "sessions.subscribe": READ,
    "sessions.messages.subscribe": READ,
    "sessions.messages.unsubscribe": READ,
    "commands.list": READ,
    "sessions.reset": ADMIN,
    "models.list": READ,
    "models.authStatus": READ,
    "logs.tail": READ,
    "diagnostics.stability": READ,
    "usage.cost": READ,
    "cron.list": READ,
    "cron.status": READ,
    "config.get": READ,
    "exec.approval.list": APPROVALS,
    "plugin.approval.list": APPROVALS,
    "openclaw.approval.list": APPROVALS,
    "exec.approvals.get": ADMIN,
    "exec.approvals.node.get": ADMIN,
    "exec.approvals.node.set": ADMIN,
    "talk.catalog": READ,
    "talk.config": READ,
    "talk.mode": TALK,
    "talk.speak": TALK,
    "talk.session.create": TALK,
    "talk.session.appendAudio": TALK,
    "talk.session.cancelOutput": TALK,
    "talk.session.close": TALK,
    # The real Control UI's normal path (gateway.methods.control_ui).
    "agent.identity.get": READ,
    "board.get": READ,
    "chat.metadata": READ,
    "chat.startup": READ,
    "controlUi.sessionPullRequests.subscribe": READ,
    "mentions.list": READ,
    "plugin.surface.refresh": READ,
    "plugins.controlUi.list": READ,
    "progressCard.get": READ,
    "projects.list": READ,
    "question.list": QUESTIONS,
    "session.discussion.info": READ,
    "session.members.listEvidence": READ,
    "sessions.branches.list": READ,
    "sessions.catalog.list": READ,
    "sessions.companion.state": READ,
    "sessions.github.options": READ,
    "sessions.groups.defaults": WRITE,
    "sessions.groups.list": READ,
    "sessions.observer.visibility": READ,
    "sessions.viewers.set": READ,
    "system.info": READ,
    "taskSuggestions.list": READ,
    "tasks.list": READ,
    "update.status": ADMIN,
    "users.prefs.get": READ,
}
EXPECTED_NODE_METHODS = {
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
KNOWN_OPERATOR_SCOPES = {READ, WRITE, ADMIN, PAIRING, TALK, APPROVALS, QUESTIONS}


def _family_handlers() -> Iterator[tuple[str, Any]]:
    """Every public coroutine function defined in a ``gateway.methods`` family module."""
    for info in pkgutil.iter_modules(gateway.methods.__path__):
        module = importlib.import_module(f"gateway.methods.{info.name}")
        for name, fn in vars(module).items():
            if (
                not name.startswith("_")
                and inspect.iscoroutinefunction(fn)
                and fn.__module__ == module.__name__
            ):
                yield f"{module.__name__}.{name}", fn


def test_every_advertised_method_has_a_declared_scope_or_the_node_role() -> None:
    """``hello-ok.features.methods`` (:meth:`MethodTable.names`) lists only methods whose
    access is declared."""
    advertised = TABLE.names()
    assert advertised, "the gateway advertises no methods"
    for name in advertised:
        spec = TABLE.get(name)
        assert spec is not None, f"{name} is advertised but not in the method table"
        if spec.role == "node":
            assert spec.scope is None
            continue
        for params in (None, {}, {"command": "fs.listDir"}, {"command": "system.run"}):
            needed = spec.required_scope(params)
            assert needed in KNOWN_OPERATOR_SCOPES, (name, params, needed)


def test_the_advertised_methods_are_the_table_sorted() -> None:
    """features.methods keeps today's order (sorted names, as compared with the real
    gateway) and is exactly the table but for the methods the real gateway serves without
    listing them (``node.runnerInventory.update``)."""
    unadvertised = {spec.name for spec in TABLE if not spec.advertise}
    assert unadvertised == {"node.runnerInventory.update"}
    advertised = TABLE.names()
    assert advertised == sorted(set(TABLE.handlers()) - unadvertised)
    assert len(advertised) == len(set(advertised)) == len(TABLE) - len(unadvertised)


def test_the_declared_scopes_are_the_real_gateways() -> None:
    """Every value of the former scope table, no more and no fewer."""
    fixed = {s.name: s.scope for s in TABLE if isinstance(s.scope, OperatorScope)}
    assert fixed == EXPECTED_OPERATOR_SCOPES
    assert TABLE.node_methods() == EXPECTED_NODE_METHODS
    assert {spec.name for spec in TABLE} == (  # served, advertised or not
        set(EXPECTED_OPERATOR_SCOPES) | EXPECTED_NODE_METHODS
    ) | {"node.invoke", "agent", "sessions.create", "sessions.patch", "sessions.delete"}
    # gateway.scopes keeps only names and rules: nothing there is derived from the table
    # (it would import the methods back, closing a cycle through the hub and the app).
    for derived in ("OPERATOR_SCOPES", "NODE_METHODS", "authorize", "required_scope"):
        assert not hasattr(gateway.scopes, derived)


@pytest.mark.parametrize(
    ("command", "needed"),
    [
        ("browser.proxy", ADMIN),
        ("browser.proxy.upload.v1", ADMIN),
        ("fs.listDir", ADMIN),
        ("terminal.upload", ADMIN),
        ("system.run", WRITE),
        ("device.info", WRITE),
        ([], WRITE),
    ],
)
def test_node_invoke_needs_admin_only_for_the_admin_commands(command: Any, needed: str) -> None:
    """``node.invoke``'s scope is a rule over its params, declared beside the handler."""
    assert TABLE.required_scope("node.invoke", {"command": command}) == needed
    profile_reset = {
        "command": "browser.proxy",
        "params": {"method": "POST", "path": "/reset-profile"},
    }
    assert TABLE.required_scope("node.invoke", profile_reset) == WRITE


@pytest.mark.parametrize(
    ("method", "params", "needed"),
    [
        ("sessions.create", {}, WRITE),
        ("sessions.create", None, WRITE),
        ("sessions.create", {"key": "work", "label": "x"}, WRITE),
        ("sessions.create", {"incognito": True}, ADMIN),
        ("sessions.create", {"incognito": False}, WRITE),
        ("sessions.create", {"key": " agent:main:dashboard:Incognito-1 "}, ADMIN),
        ("sessions.create", {"parentSessionKey": "agent:main:subagent:incognito-x"}, ADMIN),
        ("sessions.create", {"key": "agent:main:main:incognito-x"}, WRITE),
        ("sessions.create", {"execNode": None}, ADMIN),
        ("sessions.create", {"toolOverrides": {}}, ADMIN),
        ("sessions.create", {"permissionMode": "full"}, ADMIN),
        ("sessions.create", {"permissionMode": "ask"}, WRITE),
        ("sessions.patch", {"key": "k", "label": "x", "model": "m"}, WRITE),
        ("sessions.patch", {"key": "k", "sendPolicy": "deny"}, ADMIN),
        ("sessions.patch", {"key": "k", "execHost": "gateway"}, ADMIN),
        ("sessions.patch", {"key": "k", "sandboxMode": None}, ADMIN),
        ("sessions.patch", {"key": "k", "permissionMode": "full"}, ADMIN),
        ("sessions.patch", [], WRITE),
        ("sessions.delete", {"key": "k"}, ADMIN),
        ("sessions.delete", {"key": "k", "archivedOnly": True}, WRITE),
        ("sessions.delete", {"key": "k", "archivedOnly": True, "deleteTranscript": True}, WRITE),
        ("sessions.delete", {"key": "k", "archivedOnly": True, "emitLifecycleHooks": True}, ADMIN),
        ("sessions.delete", {"key": "k", "archivedOnly": 1}, ADMIN),
        ("sessions.delete", None, ADMIN),
    ],
)
def test_session_mutations_need_admin_by_params(method: str, params: Any, needed: str) -> None:
    """``sessions.create``/``patch``/``delete`` need admin for the fields only an
    administrator may set, as the real gateway's rules over the params."""
    assert TABLE.required_scope(method, params) == needed


def test_every_handler_in_the_family_modules_is_declared() -> None:
    """A handler written without its declaration would never be served."""
    declared = {spec.handler for spec in TABLE}
    undeclared = [name for name, fn in _family_handlers() if fn not in declared]
    assert undeclared == []


def test_a_method_cannot_be_declared_without_a_scope() -> None:
    """Forgetting the scope fails when the module loads, not silently as admin-only."""
    table = MethodTable()

    async def handler(core: GatewayApp, peer: Peer, params: Any) -> Any:
        return None

    with pytest.raises(TypeError, match="needs one"):
        table.method(Method.STATUS)(handler)
    with pytest.raises(TypeError, match="needs one"):
        table.method(Method.HEALTH, role="any")(handler)
    with pytest.raises(TypeError, match="takes no scope"):
        table.method(Method.NODE_SKILLS_UPDATE, scope=READ, role="node")(handler)
    assert len(table) == 0


def test_a_protocol_method_name_declares_its_wire_name() -> None:
    """``Method`` members name methods as their plain wire strings (the names the table
    advertises and the reference lists)."""
    table = MethodTable()

    async def handler(core: GatewayApp, peer: Peer, params: Any) -> Any:
        return None

    table.method(Method.CHAT_SEND, scope=WRITE)(handler)
    assert table.names() == ["chat.send"]
    assert type(table.names()[0]) is str
    assert table["chat.send"].name == "chat.send"
    for spec in TABLE:
        assert type(spec.name) is str


def test_a_method_cannot_be_declared_twice() -> None:
    """Two families declaring one name (or an unserved node method) is an error."""
    one, two = MethodTable(), MethodTable()

    async def handler(core: GatewayApp, peer: Peer, params: Any) -> Any:
        return None

    assert one.method(Method.STATUS, scope=READ)(handler) is handler
    two.method(Method.STATUS, scope=WRITE)(handler)
    with pytest.raises(TypeError, match="declared twice"):
        one.method(Method.STATUS, scope=READ)(handler)
    with pytest.raises(TypeError, match="declared twice"):
        MethodTable.merge(one, two)
    one.method(Method.NODE_SKILLS_UPDATE, role="node")(handler)
    with pytest.raises(TypeError, match="declared twice"):
        one.method(Method.NODE_SKILLS_UPDATE, role="node")(handler)


@pytest.mark.parametrize(
    ("role", "scopes", "method", "params", "message"),
    [
        ("node", [], "health", None, None),
        ("operator", [], "health", None, None),
        ("operator", [READ], "chat.history", {}, None),
        ("operator", [WRITE], "chat.history", {}, None),
        ("operator", [READ], "chat.send", {}, "missing scope: operator.write"),
        ("operator", [WRITE], "talk.speak", {}, None),
        ("operator", [READ], "talk.speak", {}, "missing scope: operator.talk"),
        (
            "operator",
            [WRITE],
            "node.invoke",
            {"command": "fs.listDir"},
            "missing scope: operator.admin",
        ),
        ("operator", [WRITE], "no.such.method", {}, "missing scope: operator.admin"),
        ("operator", [ADMIN], "no.such.method", {}, None),
        ("operator", [ADMIN], "node.event", {}, "unauthorized role: operator"),
        ("operator", [ADMIN], "node.skills.update", {}, "unauthorized role: operator"),
        ("node", [], "node.skills.update", {}, None),
        ("node", [], "node.event", {}, None),
        ("node", [ADMIN], "chat.send", {}, "unauthorized role: node"),
        # The sessions scopes stand in for read and write on the session methods only.
        ("operator", [SESSIONS_READ], "chat.history", {}, None),
        ("operator", [SESSIONS_READ], "sessions.list", {}, None),
        ("operator", [SESSIONS_READ], "models.list", {}, "missing scope: operator.read"),
        ("operator", [SESSIONS_READ], "chat.send", {}, "missing scope: operator.write"),
        ("operator", [SESSIONS_WRITE], "chat.metadata", {}, None),
        ("operator", [SESSIONS_WRITE], "chat.send", {}, None),
        ("operator", [SESSIONS_WRITE], "sessions.create", {"label": "x"}, None),
        (
            "operator",
            [SESSIONS_WRITE],
            "sessions.create",
            {"incognito": True},
            "missing scope: operator.admin",
        ),
        ("operator", [SESSIONS_WRITE], "agent", {}, "missing scope: operator.write"),
        ("operator", [SESSIONS_WRITE], "question.list", {}, None),
        ("operator", [WRITE], "question.list", {}, None),
        ("operator", [READ], "question.list", {}, "missing scope: operator.questions"),
        (
            "operator",
            [SESSIONS_WRITE],
            "exec.approval.list",
            {},
            "missing scope: operator.approvals",
        ),
    ],
)
def test_authorize_reads_the_table(
    role: str, scopes: list[str], method: str, params: Any, message: str | None
) -> None:
    """Role first, then scope; an unknown method needs admin (the request gate then
    answers ``unknown method``)."""
    denied = TABLE.authorize(role, scopes, method, params)
    assert (denied or {}).get("message") == message
    if message is not None and message.startswith("missing scope"):
        assert denied is not None
        assert denied["details"]["code"] == "MISSING_SCOPE"


def test_the_method_reference_is_current() -> None:
    """``docs/gateway-methods.md`` is what ``python -m gateway.methods.reference`` writes."""
    written = REFERENCE_PATH.read_text(encoding="utf-8")
    assert written == render_reference(), (
        "docs/gateway-methods.md is stale: run `python -m gateway.methods.reference`"
    )
    for spec in TABLE:
        assert f"| `{spec.name}` |" in written
        assert spec.summary, f"{spec.name}: its handler has no docstring"


def test_the_reference_follows_a_changed_table() -> None:
    """A method added to a table appears in its reference, with its scope and summary."""

    async def example_get(core: GatewayApp, peer: Peer, params: Any) -> Any:
        """``tools.catalog``: an example.

        More text that stays out of the summary."""
        return None

    table = MethodTable.merge(TABLE)
    table.method(Method.TOOLS_CATALOG, scope=PAIRING)(example_get)
    text = render_reference(table)
    assert text != render_reference()
    assert "| `tools.catalog` | `operator.pairing` |" in text
    assert "``tools.catalog``: an example. |" in text
    assert "More text" not in text
