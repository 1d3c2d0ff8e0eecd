"""``chat.*`` methods: send, abort, history, message.get, inject."""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.events import now_ms
from gateway.chat.service import MessageTooLargeError, check_fits
from gateway.errors import MethodError, invalid_request
from gateway.hub import Hub
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, READ, WRITE
from openclaw_desktop.protocol import (
    MAX_ATTACHMENT_BYTES,
    MAX_ATTACHMENT_IMAGE_BYTES,
    ErrorCode,
    EventName,
    Method,
    error_shape,
)
from openclaw_desktop.protocol.methods import (
    ChatAbortParams,
    ChatHistoryParams,
    ChatInjectParams,
    ChatMessageGetParams,
    ChatSendParams,
)

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = [
    "ATTACHMENT_LIMITS",
    "ChatEngine",
    "ChatServices",
    "canonical_key",
    "history_message",
    "table",
]

table = MethodTable()
"""The methods this module declares."""


class ChatEngine(Protocol):
    """The chat engine of the gateway (None until it is up), all a method needs that only
    talks to the chat service."""

    @property
    def chat(self) -> ChatService | None: ...


class ChatServices(ChatEngine, Protocol):
    """What the ``chat.*`` methods use of the gateway: the chat engine and the hub (send
    timings, ``chat.inject``'s broadcast)."""

    @property
    def hub(self) -> Hub: ...


#: ``policy.attachments`` (the real gateway's numbers).
ATTACHMENT_LIMITS = {"maxBytes": MAX_ATTACHMENT_BYTES, "maxImageBytes": MAX_ATTACHMENT_IMAGE_BYTES}
#: The transcript roles chat.history shows (compaction entries are internal).
CHAT_ROLES = frozenset({"user", "assistant", "toolResult"})


def _service(gw: ChatEngine) -> ChatService:
    """The chat service, or ``UNAVAILABLE chat is starting`` (retryable) until it is up."""
    if gw.chat is None:
        raise MethodError(error_shape(ErrorCode.UNAVAILABLE, "chat is starting", retryable=True))
    return gw.chat


def _too_large(exc: MessageTooLargeError) -> MethodError:
    return invalid_request(str(exc), {"sizeBytes": exc.size, "limitBytes": exc.limit})


def canonical_key(service: ChatService, key: str) -> str:
    """``key`` as the session key ``service`` stores it under (``main`` ->
    ``agent:main:main``), or ``INVALID_REQUEST invalid sessionKey: ...``."""
    try:
        return service.canonical(key)
    except ValueError as exc:
        raise invalid_request(f"invalid sessionKey: {exc}") from None


#: Text files up to this size are given to the model as text (larger ones are named only).
TEXT_ATTACHMENT_CHARS = 200_000


def _readable(data: bytes, mime: str) -> str | None:
    """A file's text when it is text (UTF-8) and small enough for the prompt."""
    textual = mime.startswith("text/") or mime in (
        "application/json",
        "application/xml",
        "application/x-yaml",
        "application/toml",
    )
    if not textual or len(data) > TEXT_ATTACHMENT_CHARS:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _attachments(raw: list[Any]) -> list[dict[str, Any]]:
    """Decode and bound attachments; images become image content for the model."""
    out: list[dict[str, Any]] = []
    total = 0
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise invalid_request(f"attachment {index} must be an object")
        mime = item.get("mimeType")
        content = item.get("content")
        if not isinstance(mime, str) or not isinstance(content, str):
            raise invalid_request(f"attachment {index} needs mimeType and base64 content")
        try:
            data = base64.b64decode(content, validate=True)
        except (binascii.Error, ValueError):
            raise invalid_request(f"attachment {index} content is not valid base64") from None
        total += len(data)
        is_image = mime.startswith("image/")
        if is_image and len(data) > ATTACHMENT_LIMITS["maxImageBytes"]:
            raise invalid_request(
                f"attachment {index} is {len(data)} bytes; images may be at most "
                f"{ATTACHMENT_LIMITS['maxImageBytes']} bytes"
            )
        if total > ATTACHMENT_LIMITS["maxBytes"]:
            raise invalid_request(
                f"attachments exceed {ATTACHMENT_LIMITS['maxBytes']} bytes in total"
            )
        if is_image:
            out.append({"type": "image", "data": content, "mimeType": mime})
        else:
            name = str(item.get("fileName") or f"attachment-{index}")[:255]
            out.append({"type": "file", "fileName": name, "mimeType": mime, "bytes": len(data)})
            text = _readable(data, mime)
            if text is not None:
                out[-1]["text"] = text
    return out


@table.method(Method.CHAT_SEND, scope=WRITE, params=ChatSendParams)
async def chat_send(gw: ChatServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``chat.send``: acks at once with ``{runId, status}``; runId = idempotencyKey. An
    operator UI's ack carries ``serverTiming`` and its run's phases follow as
    ``chat.send_timing`` events (:mod:`gateway.chat_timing`)."""
    timings = gw.hub.send_timings
    received = timings.now()
    service = _service(gw)
    key = canonical_key(service, p["sessionKey"])
    loaded = timings.now() - received
    attachments = _attachments(p.get("attachments") or [])
    if not p["message"].strip() and not attachments:
        raise invalid_request("message or attachments required")
    sender = {
        "transport": {"clients": [{"id": peer.client.get("id"), "mode": peer.client.get("mode")}]}
    }
    run_id = p["idempotencyKey"]
    try:
        status = service.send(
            key,
            run_id,
            p["message"],
            attachments=attachments,
            thinking=p.get("thinking"),
            queue_mode=p.get("queueMode"),
            sender=sender,
        )
    except MessageTooLargeError as exc:
        raise _too_large(exc) from None
    answer: dict[str, Any] = {"runId": run_id, "status": status}
    client_id = peer.client.get("id")
    timing = timings.acked(client_id, peer.conn_id, run_id, key, service.agent_id, received, loaded)
    if timing is not None:
        answer["serverTiming"] = timing
        # After the ack (queued when this handler returns), as the real gateway.
        asyncio.get_running_loop().call_soon(timings.dispatch_started, run_id)
    return answer


@table.method(Method.CHAT_ABORT, scope=WRITE, params=ChatAbortParams)
async def chat_abort(gw: ChatServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``chat.abort {sessionKey, runId?}``."""
    service = _service(gw)
    stopped = service.abort(canonical_key(service, p["sessionKey"]), p.get("runId"))
    return {"ok": True, "aborted": bool(stopped), "runIds": stopped}


def history_message(entry: dict[str, Any], position: int) -> dict[str, Any]:
    """A transcript entry as ``chat.history`` shows it."""
    message = {k: v for k, v in entry.items() if k not in ("id", "parentId")}
    meta = dict(message.get("__openclaw") or {})
    meta.update({"id": entry.get("id"), "seq": position})
    message["__openclaw"] = meta
    return message


@table.method(Method.CHAT_HISTORY, scope=READ, params=ChatHistoryParams)
async def chat_history(gw: ChatServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``chat.history {sessionKey, limit?, maxChars?}``: the visible path, bounded."""
    service = _service(gw)
    key = canonical_key(service, p["sessionKey"])
    transcript = await service.transcript(key)
    limit, max_chars = p.get("limit", 200), p.get("maxChars", 500_000)
    chat_rows = await asyncio.to_thread(transcript.history, limit, max_chars, CHAT_ROLES)
    total = await asyncio.to_thread(transcript.visible_count, CHAT_ROLES)
    row = service.sessions.ensure(key, service.agent_id, now_ms())
    start = total - len(chat_rows)
    default = service.providers.model
    return {
        "sessionKey": p["sessionKey"],
        "sessionId": row.session_id,
        "messages": [history_message(m, start + i + 1) for i, m in enumerate(chat_rows)],
        "activity": [],
        "pendingInputs": {"items": [], "total": 0},
        "hasMore": start > 0,
        "totalMessages": total,
        # The model a new run would use, as the real gateway's (the TUI's footer shows it).
        "defaults": {
            "modelProvider": default.provider if default else None,
            "model": default.model if default else None,
            "contextTokens": default.context_window if default else None,
        },
        "thinkingLevel": row.thinking,
        "sessionInfo": {"key": key, "sessionId": row.session_id, "status": row.status},
    }


@table.method(Method.CHAT_MESSAGE_GET, scope=READ, params=ChatMessageGetParams)
async def chat_message_get(gw: ChatServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``chat.message.get {sessionKey, messageId, maxChars?}``: one message whole."""
    service = _service(gw)
    transcript = await service.transcript(canonical_key(service, p["sessionKey"]))
    entry = await asyncio.to_thread(transcript.get, p["messageId"])
    if entry is None or entry.get("role") not in ("user", "assistant", "toolResult"):
        return {"ok": False, "unavailableReason": "not_found"}
    message = history_message(entry, 0)
    if len(json.dumps(message, ensure_ascii=False)) > p.get("maxChars", 2_000_000):
        return {"ok": False, "unavailableReason": "oversized"}
    return {"ok": True, "message": message}


@table.method(Method.CHAT_INJECT, scope=ADMIN, params=ChatInjectParams)
async def chat_inject(gw: ChatServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``chat.inject {sessionKey, message, label?}``: an assistant note, no run."""
    service = _service(gw)
    key = canonical_key(service, p["sessionKey"])
    if service.sessions.get(key) is None:
        raise invalid_request("session not found")  # as the real gateway: no run, no session
    transcript = await service.transcript(key)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "text", "text": p["message"]}],
        "timestamp": now_ms(),
        "stopReason": "stop",
        "api": "openai-responses",
        "provider": "openclaw",
        "model": "gateway-injected",
        "usage": {
            "input": 0,
            "output": 0,
            "totalTokens": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
    }
    if p.get("label"):
        message["label"] = p["label"]
    try:
        check_fits(message)
    except MessageTooLargeError as exc:
        raise _too_large(exc) from None
    stored = await asyncio.to_thread(transcript.append, message)
    message_id = stored["id"]
    event = {k: v for k, v in message.items() if k != "label"}
    gw.hub.broadcast(
        EventName.CHAT,
        {
            "runId": f"inject-{message_id}",
            "sessionKey": key,
            "agentId": service.agent_id,
            "seq": 0,
            "state": "final",
            "message": event,
        },
    )
    return {"ok": True, "messageId": message_id}
