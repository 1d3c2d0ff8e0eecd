"""``sessions.subscribe`` and ``sessions.messages.subscribe``/``unsubscribe``: which
connections get ``sessions.changed`` and ``session.message`` (see
:mod:`gateway.subscriptions`).

As the reference: ``sessions.subscribe`` takes the ``sessions.list`` params; with none it
answers ``{subscribed: true}``, with some also the list (``{subscribed: true, list}``). It has
no unsubscribe: it lasts as long as the connection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.chat.params import Field, check
from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.methods.chat import _canonical, _service
from gateway.methods.sessions import list_result, requested_agent
from gateway.peer import Peer
from gateway.rpc import MethodTable
from gateway.scopes import READ, scope_satisfied
from openclaw_desktop.protocol import ErrorCode, error_shape

if TYPE_CHECKING:
    from gateway.core import GatewayCore

__all__ = ["table"]

table = MethodTable()
"""The methods this module declares."""

APPROVALS = "operator.approvals"
_KEY_FIELDS = {
    "key": Field("string", required=True, min_length=1),
    "agentId": Field("string", min_length=1),
}


@table.method("sessions.subscribe", scope=READ)
async def sessions_subscribe(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.subscribe {...sessions.list params}``: ``sessions.changed`` and every
    ``session.message`` from now on; with params, also the ``sessions.list`` answer."""
    service = _service(core)
    listed = list_result(service, params)  # validates first: a refused call subscribes nothing
    core.hub.sessions.subscribe_all(peer.conn_id)
    if not params:
        return {"subscribed": True}
    return {"subscribed": True, "list": listed}


def _session_key(service: Any, method: str, params: Any, *, approvals: bool = False) -> str:
    extra = ("includeApprovals",) if approvals else ()
    p = check(method, params, _KEY_FIELDS, ignored=extra)
    if "includeApprovals" in params and params["includeApprovals"] is not True:
        raise invalid_params(method, "at /includeApprovals: must be equal to constant")
    key = p["key"].strip()
    if not key:
        raise invalid_request("key required")
    requested_agent(service, key, p.get("agentId"))
    return _canonical(service, key)


@table.method("sessions.messages.subscribe", scope=READ)
async def sessions_messages_subscribe(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.messages.subscribe {key, agentId?, includeApprovals?}``: that session's
    ``session.message`` events from now on; ``{subscribed: true, key}`` (canonical key)."""
    service = _service(core)
    method = "sessions.messages.subscribe"
    key = _session_key(service, method, params, approvals=True)
    if params.get("includeApprovals") is True:
        if not peer.device_id or not scope_satisfied(APPROVALS, peer.scopes):
            raise invalid_request(
                f"{method} includeApprovals requires a paired device and gateway scope: {APPROVALS}"
            )
        # This gateway keeps no per-session approval records to replay.
        raise MethodError(error_shape(ErrorCode.UNAVAILABLE, "session approval replay unavailable"))
    core.hub.sessions.subscribe_messages(peer.conn_id, key)
    return {"subscribed": True, "key": key}


@table.method("sessions.messages.unsubscribe", scope=READ)
async def sessions_messages_unsubscribe(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``sessions.messages.unsubscribe {key, agentId?}``: ``{subscribed: false, key}``."""
    service = _service(core)
    key = _session_key(service, "sessions.messages.unsubscribe", params)
    core.hub.sessions.unsubscribe_messages(peer.conn_id, key)
    return {"subscribed": False, "key": key}
