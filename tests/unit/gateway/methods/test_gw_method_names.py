"""Unit tests: the method table's names and scopes come from the protocol package (issue
#16): every method the gateway serves is a :class:`~openclaw_desktop.protocol.Method`
member declared by that member, the table stores plain wire strings, and every fixed
scope (and every ``gateway.scopes`` name) is an
:class:`~openclaw_desktop.protocol.OperatorScope` member."""

from __future__ import annotations

from typing import Any

import pytest

import gateway.scopes
from gateway.methods import TABLE
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from openclaw_desktop.protocol import Method, OperatorScope

#: Method members the bundled gateway does not serve: the handshake and the real gateway's
#: methods the client (``openclaw_desktop.sdk``) calls.
CLIENT_ONLY = {
    "connect",
    "artifacts.get",
    "artifacts.list",
    "exec.approval.resolve",
    "plugin.approval.resolve",
    "tools.catalog",
    "tools.invoke",
}


async def _handler(services: Any, peer: Peer, params: Any) -> Any:
    return None


def test_every_served_method_is_a_method_member() -> None:
    """The enum names the whole table, advertised or not."""
    names = {m.value for m in Method}
    assert names >= {spec.name for spec in TABLE}
    unadvertised = {spec.name for spec in TABLE if not spec.advertise}
    assert unadvertised and names >= unadvertised


def test_the_enum_names_no_method_nobody_serves_or_calls() -> None:
    """A member the gateway does not serve is one the client calls (or ``connect``)."""
    assert {m.value for m in Method} - {spec.name for spec in TABLE} <= CLIENT_ONLY


def test_the_table_stores_plain_wire_strings() -> None:
    """Declared by member, the table holds the wire name as a plain str."""
    assert all(type(spec.name) is str for spec in TABLE)
    table = MethodTable()
    table.method(Method.CHAT_SEND, scope=OperatorScope.WRITE)(_handler)
    assert [(type(s.name), s.name) for s in table] == [(str, "chat.send")]
    assert "chat.send" in table and table.get(Method.CHAT_SEND) is not None


def test_fixed_scopes_are_operator_scope_members() -> None:
    """Every fixed scope in the table is an OperatorScope member."""
    fixed = [spec.scope for spec in TABLE if spec.scope is not None and not callable(spec.scope)]
    assert fixed and all(isinstance(scope, OperatorScope) for scope in fixed)


@pytest.mark.parametrize(
    ("name", "scope", "words"),
    [
        ("chat.abort", OperatorScope.WRITE, "declared by its Method member"),
        (Method.CHAT_ABORT, "operator.write", "is not an OperatorScope member"),
        (Method.CHAT_ABORT, "operator.raed", "is not an OperatorScope member"),
    ],
)
def test_a_name_or_scope_typed_as_a_string_is_refused(name: Any, scope: Any, words: str) -> None:
    """The names come from the protocol package only: a string (a typo included) fails when
    the module loads instead of never matching."""
    with pytest.raises(TypeError, match=words):
        MethodTable().method(name, scope=scope)


def test_gateway_scopes_names_are_the_protocol_members() -> None:
    """``gateway.scopes`` does not type the scope strings again."""
    pairs = {
        "READ": OperatorScope.READ,
        "WRITE": OperatorScope.WRITE,
        "ADMIN": OperatorScope.ADMIN,
        "APPROVALS": OperatorScope.APPROVALS,
        "PAIRING": OperatorScope.PAIRING,
        "TALK": OperatorScope.TALK,
        "TALK_SECRETS": OperatorScope.TALK_SECRETS,
        "QUESTIONS": OperatorScope.QUESTIONS,
        "SESSIONS_READ": OperatorScope.SESSIONS_READ,
        "SESSIONS_WRITE": OperatorScope.SESSIONS_WRITE,
    }
    for name, member in pairs.items():
        assert getattr(gateway.scopes, name) is member
    # and they still compare equal to the wire strings peers send
    assert gateway.scopes.scope_satisfied("operator.read", [OperatorScope.WRITE])
    assert gateway.scopes.scope_satisfied(OperatorScope.READ, ["operator.write"])


@pytest.mark.parametrize(
    ("rule", "params", "needed"),
    [
        (gateway.scopes.node_invoke_scope, {"command": "fs.listDir"}, OperatorScope.ADMIN),
        (gateway.scopes.node_invoke_scope, {"command": "device.info"}, OperatorScope.WRITE),
        (gateway.scopes.sessions_create_scope, {"incognito": True}, OperatorScope.ADMIN),
        (gateway.scopes.sessions_patch_scope, {"label": "x"}, OperatorScope.WRITE),
        (gateway.scopes.sessions_delete_scope, {"key": "k"}, OperatorScope.ADMIN),
    ],
)
def test_scope_rules_answer_with_members(rule: Any, params: Any, needed: OperatorScope) -> None:
    """The params rules give OperatorScope members."""
    assert rule(params) is needed
