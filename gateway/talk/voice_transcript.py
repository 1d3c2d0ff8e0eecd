"""``node.event voice.transcript {text, sessionKey?}``: a phone heard its user and hands the
text to the agent. As on the reference gateway, it starts an agent run in that session (the
main session by default) with ``thinking: "low"`` and nothing delivered elsewhere, and a
duplicate of a recent transcript (same node, session and text) is dropped.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import time
import uuid
from typing import TYPE_CHECKING, Any

from gateway.errors import MethodError, invalid_request
from openclaw_desktop.protocol import ErrorCode, error_shape
from openclaw_desktop.protocol.methods.nodes import VoiceTranscriptPayload, node_event_payload

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.peer import Peer

__all__ = ["DUPLICATE_WINDOW_S", "MAX_TEXT_CHARS", "VoiceTranscripts"]

log = logging.getLogger("gateway.talk")

#: The reference's bound on the transcript text.
MAX_TEXT_CHARS = VoiceTranscriptPayload.MAX_TEXT_CHARS
#: A transcript equal to one seen this recently (same node and session) is a duplicate.
DUPLICATE_WINDOW_S = 60.0
_REMEMBERED = 256


def _payload(params: dict[str, Any]) -> VoiceTranscriptPayload:
    """The event's payload (read as the reference reads it: ``payloadJSON`` first), or
    ``INVALID_REQUEST`` when it is not a JSON object."""
    try:
        payload = node_event_payload(params)
    except ValueError:
        raise invalid_request("voice.transcript: payloadJSON is not valid JSON") from None
    if not isinstance(payload, dict):
        raise invalid_request("voice.transcript: payload must be an object with text")
    return VoiceTranscriptPayload.model_validate(payload)


class VoiceTranscripts:
    """Turns node voice transcripts into agent runs, dropping recent duplicates."""

    def __init__(self, window_s: float = DUPLICATE_WINDOW_S) -> None:
        self._window_s = window_s
        self._seen: collections.OrderedDict[str, float] = collections.OrderedDict()

    def _duplicate(self, fingerprint: str) -> bool:
        now = time.monotonic()
        while self._seen and next(iter(self._seen.values())) < now - self._window_s:
            self._seen.popitem(last=False)
        if fingerprint in self._seen:
            return True
        self._seen[fingerprint] = now
        while len(self._seen) > _REMEMBERED:
            self._seen.popitem(last=False)
        return False

    def handle(
        self, chat: ChatService | None, peer: Peer, params: dict[str, Any]
    ) -> dict[str, Any]:
        """The ``node.event`` result; starts the run (the chat service acks at once).
        ``chat`` is the gateway's chat service, None while it starts."""
        payload = _payload(params)
        try:
            text, raw_key = payload.transcript(), payload.session()
        except ValueError as exc:
            raise invalid_request(str(exc)) from None
        if chat is None:
            raise MethodError(
                error_shape(ErrorCode.UNAVAILABLE, "chat is starting", retryable=True)
            )
        try:
            key = chat.canonical(raw_key or "main")
        except ValueError as exc:
            raise invalid_request(f"voice.transcript: invalid sessionKey: {exc}") from None
        node_id = peer.device_id or peer.conn_id
        digest = hashlib.sha256(f"{node_id}\0{key}\0{text.strip()}".encode()).hexdigest()
        base = {"ok": True, "event": "voice.transcript", "handled": True}
        if self._duplicate(digest):
            return {**base, "reason": "duplicate"}
        run_id = str(uuid.uuid4())
        sender = {"transport": {"clients": [{"id": peer.client.get("id"), "mode": "node"}]}}
        chat.send(key, run_id, text, thinking="low", sender=sender)
        log.info("voice transcript from node %s started run %s", node_id[:12], run_id[:8])
        return {**base, "reason": "agent_run_started", "runId": run_id, "sessionKey": key}
