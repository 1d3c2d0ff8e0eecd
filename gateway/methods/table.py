"""The method table: each RPC declared once, beside its handler, with who may call it.

A family module makes a :class:`MethodTable` and declares each handler on it::

    table = MethodTable()

    @table.method(Method.CHAT_SEND, scope=WRITE, params=ChatSendParams)
    async def chat_send(chat: ChatServices, peer, params): ...

The name is a :class:`~openclaw_desktop.protocol.Method` member and the scope an
:class:`~openclaw_desktop.protocol.OperatorScope` member (``gateway.scopes`` names them);
a plain string is refused (``TypeError``), and the table stores the wire strings.
``params`` names the method's params model (:mod:`openclaw_desktop.protocol.methods`):
the dispatcher checks the request against the schema derived from it, refusing in the
real gateway's words, and hands the handler the checked dict
(:meth:`MethodSpec.checked_params`).
The handler's first argument is the gateway's services, typed by each family as the
protocol of the part it uses (``ChatServices``), never the whole application.

``gateway.methods`` merges the family tables into one, and dispatch, the role and scope
check (:meth:`MethodTable.authorize`), ``hello-ok.features.methods`` and the generated
method reference (``docs/gateway-methods.md``) are all read from it. An operator method
cannot be declared without a scope, so none is left admin-only by omission.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from gateway.methods.closed import model_checked
from gateway.peer import Peer
from gateway.scopes import (
    ADMIN,
    authorize_required_scope,
    missing_scope_error,
    session_method_scope,
)
from openclaw_desktop.protocol import ErrorCode, Method, OperatorScope, error_shape
from openclaw_desktop.protocol.base import WireModel

__all__ = [
    "CURRENT_REQUEST_ID",
    "Handler",
    "MethodSpec",
    "MethodTable",
    "Role",
    "ScopeRule",
]

#: ``await handler(services, peer, params)``: ``services`` is the gateway's (each family
#: types the part it uses), ``params`` the request's (checked, when the method declares a
#: params model).
Handler = Callable[[Any, Peer, Any], Awaitable[Any]]
#: The id of the request being handled, set by the dispatcher for each call: a method the
#: reference answers twice (``agent``: ``accepted`` at once, the result when the run ends)
#: sends its first answer with it; the handler's return value is always the last.
CURRENT_REQUEST_ID: ContextVar[Any] = ContextVar("CURRENT_REQUEST_ID", default=None)
_H = TypeVar("_H", bound=Handler)

#: Who may call a method: an operator (with the method's scope), a node, or any role.
Role = Literal["operator", "node", "any"]
#: The operator scope a method needs, or a function of the params that says which.
ScopeRule = OperatorScope | Callable[[Any], str]


@dataclass(frozen=True)
class MethodSpec:
    """One declared method.

    Attributes:
        name: The wire name (``chat.send``).
        handler: ``await handler(services, peer, params)`` answers it.
        role: Who may call it; ``any`` skips the scope check (``health``).
        scope: The operator scope it needs (None for a node method), or a function of
            the params giving it (``node.invoke``: admin for the admin-only commands).
        family: The module that declares it (``gateway.methods.chat``).
        advertise: Listed in ``hello-ok.features.methods`` (the real gateway serves a few
            methods without listing them, e.g. ``node.runnerInventory.update``).
        params: The params model the request is checked against before the handler
            runs (None: the handler checks them itself).
        check: False where the dispatcher must not check :attr:`params`: the reference
            serves the method whatever its params are (``health`` takes a list), or the
            handler checks them itself with a rule the derived schema cannot say (an
            ``allOf``/``not``, a ``oneOf``). The handler then gets the params as they came.
    """

    name: str
    handler: Handler
    role: Role
    scope: ScopeRule | None
    family: str
    advertise: bool = True
    params: type[WireModel] | None = None
    check: bool = True

    def checked_params(self, params: Any) -> Any:
        """``params`` as the handler gets them: checked against :attr:`params` (refused
        with ``INVALID_REQUEST invalid <method> params: …``), as a dict of the properties
        this gateway acts on; unchanged when the method declares no model or is not
        checked."""
        if self.params is None or not self.check:
            return params
        return model_checked(self.name, self.params, params)

    def required_scope(self, params: Any) -> str | None:
        """The operator scope this call needs (None for a node method)."""
        if callable(self.scope):
            return self.scope(params)
        return self.scope

    @property
    def summary(self) -> str:
        """The handler docstring's first paragraph, on one line."""
        return _first_paragraph(self.handler)

    @property
    def scope_label(self) -> str:
        """The scope as the method reference shows it."""
        if self.role == "node":
            return "node role"
        if callable(self.scope):
            return f"by params: {_first_paragraph(self.scope) or self.scope.__name__}"
        label = f"`{self.scope}`"
        return f"any role (listed under {label}, not checked)" if self.role == "any" else label


def _first_paragraph(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return " ".join(doc.split("\n\n", 1)[0].split())


class MethodTable:
    """Methods by name, in declaration order; see the module docstring."""

    def __init__(self) -> None:
        self._specs: dict[str, MethodSpec] = {}

    def method(
        self,
        name: Method,
        *,
        scope: ScopeRule | None = None,
        role: Role = "operator",
        advertise: bool = True,
        params: type[WireModel] | None = None,
        check: bool = True,
    ) -> Callable[[_H], _H]:
        """Declare the decorated handler as ``name``, returning it unchanged.

        ``name`` is a :class:`~openclaw_desktop.protocol.Method` member and ``scope`` an
        :class:`~openclaw_desktop.protocol.OperatorScope` member or a function of the
        params (the table stores the wire name as a plain ``str``).

        Raises:
            TypeError: ``name`` or ``scope`` typed as a plain string, an operator or
                any-role method without a scope, a node method with one, ``check=False``
                without a model, or ``name`` declared twice.
        """
        if not isinstance(name, Method):
            raise TypeError(f"{name!r}: a method is declared by its Method member")
        if isinstance(scope, str) and not isinstance(scope, OperatorScope):
            raise TypeError(f"{name}: the scope {scope!r} is not an OperatorScope member")
        if not check and params is None:
            raise TypeError(f"{name}: check=False says what an unchecked model is for; no model")
        if (scope is None) != (role == "node"):
            raise TypeError(f"{name}: a node method takes no scope; every other method needs one")

        wire_name = str(name)  # a StrEnum member's str() is its value, a plain str
        rule = scope

        def declare(handler: _H) -> _H:
            spec = MethodSpec(
                wire_name, handler, role, rule, handler.__module__, advertise, params, check
            )
            self._add(spec)
            return handler

        return declare

    @classmethod
    def merge(cls, *tables: MethodTable) -> MethodTable:
        """One table holding every method of ``tables`` (a name in two is an error)."""
        merged = cls()
        for table in tables:
            for spec in table:
                merged._add(spec)
        return merged

    def _add(self, spec: MethodSpec) -> None:
        if spec.name in self._specs:
            raise TypeError(f"{spec.name}: declared twice")
        self._specs[spec.name] = spec

    def __iter__(self) -> Iterator[MethodSpec]:
        return iter(self._specs.values())

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def get(self, name: str) -> MethodSpec | None:
        """The method called ``name``, or None."""
        return self._specs.get(name)

    def __getitem__(self, name: str) -> MethodSpec:
        return self._specs[name]

    def names(self) -> list[str]:
        """Every advertised method, sorted (``hello-ok.features.methods``)."""
        return sorted(name for name, spec in self._specs.items() if spec.advertise)

    def handlers(self) -> dict[str, Handler]:
        """Name to handler, in declaration order."""
        return {spec.name: spec.handler for spec in self}

    def node_methods(self) -> frozenset[str]:
        """Methods only the node role may call."""
        return frozenset(s.name for s in self if s.role == "node")

    def required_scope(self, name: str, params: Any) -> str:
        """The operator scope ``name`` needs; an unknown method needs admin (as the
        reference)."""
        spec = self._specs.get(name)
        needed = spec.required_scope(params) if spec is not None else None
        return ADMIN if needed is None else needed

    def authorize(
        self, role: str, scopes: Sequence[str], name: str, params: Any
    ) -> dict[str, Any] | None:
        """None when ``role`` with ``scopes`` may call ``name``, else the ErrorShape to
        answer with (``unauthorized role: …`` or ``missing scope: …``)."""
        spec = self._specs.get(name)
        if spec is not None and spec.role == "any":
            return None
        if spec is not None and spec.role == "node":
            if role != "node":
                return error_shape(ErrorCode.INVALID_REQUEST, f"unauthorized role: {role}")
            return None
        if role != "operator":
            return error_shape(ErrorCode.INVALID_REQUEST, f"unauthorized role: {role}")
        needed = self.required_scope(name, params)
        # As the real gateway: the sessions scopes stand in for read and write on the
        # session methods (``operator.sessions.write`` may ``chat.send``).
        if authorize_required_scope(needed, scopes, session_method_scope(name, params), name):
            return None
        return missing_scope_error(needed, [needed])
