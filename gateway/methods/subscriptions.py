"""``sessions.subscribe`` and ``sessions.messages.subscribe``/``unsubscribe``: which
connections get ``sessions.changed`` and ``session.message`` (see
:mod:`gateway.subscriptions`).

As the reference: ``sessions.subscribe`` takes the ``sessions.list`` params; with none it
answers ``{subscribed: true}``, with some also the list (``{subscribed: true, list}``). It has
no unsubscribe: it lasts as long as the connection. Once someone subscribed, every chat
message appended to a transcript (user, assistant, tool result) is sent as
``session.message {sessionKey, agentId, message, messageId, messageSeq, session, ...}`` to the
connections following that session.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.session_rows import session_row
from gateway.errors import invalid_request
from gateway.hub import Hub, now_ms
from gateway.methods.chat import CHAT_ROLES, ChatEngine, _service, canonical_key, history_message
from gateway.methods.sessions import list_result, requested_agent
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import APPROVALS, READ, scope_satisfied
from openclaw_desktop.protocol import EventName, Method
from openclaw_desktop.protocol.methods import SessionsListParams
from openclaw_desktop.protocol.methods.lenient import js_trim
from openclaw_desktop.protocol.methods.sessions import (
    SessionsMessagesSubscribeParams,
    SessionsMessagesUnsubscribeParams,
)

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.chat.transcript import Transcript

__all__ = ["SubscriptionsServices", "table"]

table = MethodTable()
"""The methods this module declares."""


class SubscriptionsServices(ChatEngine, Protocol):
    """What the subscription methods use of the gateway: the chat engine (whose transcript
    appends are forwarded) and the hub (who follows what, and the broadcast)."""

    @property
    def hub(self) -> Hub: ...


class _MessageForwarder:
    """A transcript append listener: each chat message appended becomes a
    ``session.message`` event for the session's subscribers (as the reference's)."""

    def __init__(self, hub: Hub, service: ChatService, loop: asyncio.AbstractEventLoop) -> None:
        self.hub = hub
        self.service = service
        self.loop = loop

    def __call__(self, transcript: Transcript, stored: dict[str, Any]) -> None:
        """In the appending (worker) thread: number the message and hand it to the loop."""
        if stored.get("role") not in CHAT_ROLES or not self.hub.sessions.any():
            return
        seq = transcript.visible_count(CHAT_ROLES)
        with contextlib.suppress(RuntimeError):  # the loop closed: the gateway is stopping
            self.loop.call_soon_threadsafe(self.emit, transcript.key, stored, seq)

    def emit(self, key: str, stored: dict[str, Any], seq: int) -> None:
        """On the loop: send the event to whoever follows ``key`` now."""
        if not self.hub.sessions.receivers(EventName.SESSION_MESSAGE, {"sessionKey": key}):
            return
        payload: dict[str, Any] = {
            "sessionKey": key,
            "agentId": self.service.agent_id,
            "message": history_message(stored, seq),
            "messageId": stored.get("id"),
            "messageSeq": seq,
        }
        row = self.service.sessions.get(key)
        if row is not None:
            payload["session"] = session_row(self.service, row)
            payload["updatedAt"] = row.updated_at_ms
            payload["sessionId"] = row.session_id
        self.hub.broadcast(EventName.SESSION_MESSAGE, payload)


def _forward_messages(hub: Hub, service: ChatService) -> None:
    """Make sure appended messages reach subscribers (one forwarder per chat service)."""
    listeners = service.store.listeners
    if not any(isinstance(listener, _MessageForwarder) for listener in listeners):
        listeners.append(_MessageForwarder(hub, service, asyncio.get_running_loop()))


@table.method(Method.SESSIONS_SUBSCRIBE, scope=READ, params=SessionsListParams, check=False)
async def sessions_subscribe(gw: SubscriptionsServices, peer: Peer, params: Any) -> Any:
    """``sessions.subscribe {...sessions.list params}``: ``sessions.changed`` and every
    ``session.message`` from now on; with params, also the ``sessions.list`` answer."""
    service = _service(gw)
    listed = list_result(
        service, params, "sessions.subscribe"
    )  # validates first: a refused call subscribes nothing
    _forward_messages(gw.hub, service)
    gw.hub.sessions.subscribe_all(peer.conn_id)
    if not params:
        return {"subscribed": True}
    return {"subscribed": True, "list": listed}


def _required_key(key: str) -> str:
    """The session key trimmed (as JavaScript trims), or ``key required``."""
    trimmed = js_trim(key)
    if not trimmed:
        raise invalid_request("key required")
    return trimmed


def _canonical_key(service: ChatService, key: str, agent_id: str | None) -> str:
    """``key`` of ``agent_id``'s (ours, when named) in its canonical form."""
    requested_agent(service, key, agent_id)
    return canonical_key(service, key)


@table.method(
    Method.SESSIONS_MESSAGES_SUBSCRIBE, scope=READ, params=SessionsMessagesSubscribeParams
)
async def sessions_messages_subscribe(
    gw: SubscriptionsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.messages.subscribe {key, agentId?, includeApprovals?}``: that session's
    ``session.message`` events from now on; ``{subscribed: true, key}`` (canonical key)."""
    service = _service(gw)
    p = SessionsMessagesSubscribeParams.model_validate(params)
    key = _required_key(p.key)
    if p.include_approvals and (not peer.device_id or not scope_satisfied(APPROVALS, peer.scopes)):
        raise invalid_request(
            "sessions.messages.subscribe includeApprovals requires a paired device and "
            f"gateway scope: {APPROVALS}"
        )
    key = _canonical_key(service, key, p.agent_id)
    _forward_messages(gw.hub, service)
    gw.hub.sessions.subscribe_messages(peer.conn_id, key)
    if p.include_approvals:
        # The replay of the session's pending approvals: this gateway's agent asks for none
        # (exec runs on nodes, which ask their own user), so there are none to replay.
        replay = {"sessionKey": key, "updatedAtMs": now_ms(), "approvals": [], "truncated": False}
        return {"subscribed": True, "key": key, "approvalReplay": replay}
    return {"subscribed": True, "key": key}


@table.method(
    Method.SESSIONS_MESSAGES_UNSUBSCRIBE, scope=READ, params=SessionsMessagesUnsubscribeParams
)
async def sessions_messages_unsubscribe(
    gw: SubscriptionsServices, peer: Peer, params: dict[str, Any]
) -> Any:
    """``sessions.messages.unsubscribe {key, agentId?}``: ``{subscribed: false, key}``."""
    service = _service(gw)
    p = SessionsMessagesUnsubscribeParams.model_validate(params)
    key = _canonical_key(service, _required_key(p.key), p.agent_id)
    gw.hub.sessions.unsubscribe_messages(peer.conn_id, key)
    return {"subscribed": False, "key": key}
