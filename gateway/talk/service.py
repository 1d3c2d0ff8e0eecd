"""The talk service of the bundled gateway: transcription sessions (each owned by the
connection that created it, closed when it goes or when its TTL ends), talk mode, speech.

Method handlers (:mod:`gateway.methods.talk`) validate params and call in here.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gateway.talk.catalog import build_catalog
from gateway.talk.config import TalkSettings
from gateway.talk.errors import speak_failed, talk_unconfigured, unknown_session
from gateway.talk.events import TalkEvents, TalkEventType
from gateway.talk.session import SessionSpec, TalkSession
from gateway.talk.stt.base import SpeechRecognizer
from gateway.talk.tts.base import SpeakRequest, SpeechError, SpeechProvider
from gateway.talk.voice_transcript import VoiceTranscripts
from openclaw_desktop.protocol import EventName

__all__ = ["DEFAULT_TTL_MS", "TalkService"]

log = logging.getLogger("gateway.talk")

#: A session lives this long unless ``ttlMs`` says otherwise.
DEFAULT_TTL_MS = 10 * 60 * 1000
#: Open sessions one connection may hold (each holds a recognizer).

SendTo = Callable[[str, EventName, dict[str, Any]], None]
Broadcast = Callable[[EventName, dict[str, Any]], None]


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class TalkMode:
    """The last ``talk.mode`` set."""

    enabled: bool = False
    phase: str | None = None
    ts: int = 0


class TalkService:
    """Owns the sessions and the providers."""

    def __init__(
        self,
        settings: TalkSettings,
        recognizer: SpeechRecognizer | None,
        speech: SpeechProvider | None,
        send_to: SendTo,
        broadcast: Broadcast,
    ) -> None:
        self.settings = settings
        self.recognizer = recognizer
        self.speech = speech
        self.mode = TalkMode()
        self.sessions: dict[str, TalkSession] = {}
        self._send_to = send_to
        self._broadcast = broadcast
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: ``node.event voice.transcript`` -> agent runs (with duplicate suppression).
        self.voice_transcripts = VoiceTranscripts()

    # ------------------------------------------------------------------ catalog, mode
    def catalog(self) -> dict[str, Any]:
        """The ``talk.catalog`` result."""
        return build_catalog(self.recognizer, self.speech)

    def set_mode(self, enabled: bool, phase: str | None) -> dict[str, Any]:
        """Set talk mode and tell every operator (``talk.mode`` event)."""
        self.mode = TalkMode(enabled, phase, _now_ms())
        payload = {"enabled": enabled, "phase": phase, "ts": self.mode.ts}
        self._broadcast(EventName.TALK_MODE, payload)
        return payload

    # ------------------------------------------------------------------ sessions
    def count_for(self, conn_id: str) -> int:
        """Open sessions of a connection."""
        return sum(1 for s in self.sessions.values() if s.owner_conn_id == conn_id)

    async def create(self, conn_id: str, spec: SessionSpec, ttl_ms: int | None) -> dict[str, Any]:
        """Start a transcription session for ``conn_id``; the ``talk.session.create`` result.

        Raises:
            TranscriptionError: the recognizer cannot start.
        """
        assert self.recognizer is not None
        session_id = str(uuid.uuid4())
        ttl = ttl_ms or DEFAULT_TTL_MS
        expires_at = _now_ms() + ttl

        def send(envelope: dict[str, Any]) -> None:
            self._send_to(conn_id, EventName.TALK_EVENT, envelope)

        events = TalkEvents(
            send,
            session_id=session_id,
            mode=spec.mode,
            transport=spec.transport,
            brain=spec.brain,
            provider=self.recognizer.id,
        )
        session = TalkSession(session_id, conn_id, spec, self.recognizer, events, expires_at)
        await session.start()
        self.sessions[session_id] = session
        loop = asyncio.get_running_loop()
        self._timers[session_id] = loop.call_later(ttl / 1000, self._expire, session_id)
        result: dict[str, Any] = {
            "sessionId": session_id,
            "provider": self.recognizer.id,
            "mode": spec.mode,
            "transport": spec.transport,
            "brain": spec.brain,
            "transcriptionSessionId": session_id,
            "audio": session.audio_contract(),
            "expiresAt": expires_at,
        }
        model = getattr(self.recognizer, "model", None)
        if isinstance(model, str):
            result["model"] = model
        events.emit(
            TalkEventType.SESSION_STARTED,
            {"audio": session.audio_contract(), "expiresAt": expires_at},
        )
        log.info("talk session %s started (%s)", session_id[:8], self.recognizer.id)
        return result

    def owned(self, conn_id: str, session_id: str) -> TalkSession:
        """The open session ``session_id`` of ``conn_id`` (another's is unknown to it)."""
        session = self.sessions.get(session_id)
        if session is None or session.owner_conn_id != conn_id or session.closed:
            raise unknown_session()
        return session

    async def close(self, session_id: str, reason: str, *, notify: bool = True) -> None:
        """Finish a session: last transcript, then ``session.closed`` (when ``notify``)."""
        session = self.sessions.get(session_id)
        if session is None or session.closed:
            return
        timer = self._timers.pop(session_id, None)
        if timer is not None:
            timer.cancel()
        try:
            await session.close()
        finally:
            self.sessions.pop(session_id, None)
        if notify:
            session.events.emit(
                TalkEventType.SESSION_CLOSED,
                {"reason": reason, "receivedBytes": session.received_bytes},
                final=True,
            )
        log.info("talk session %s closed (%s)", session_id[:8], reason)

    def connection_gone(self, conn_id: str) -> None:
        """Close (in the background) every session of a connection that went away."""
        for session_id, session in list(self.sessions.items()):
            if session.owner_conn_id == conn_id:
                self._spawn(self.close(session_id, "connection_closed", notify=False))

    def _expire(self, session_id: str) -> None:
        self._timers.pop(session_id, None)
        self._spawn(self.close(session_id, "expired"))

    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro, name="talk-close")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def aclose(self) -> None:
        """Gateway shutdown: stop every session at once (no final transcripts; the owners
        are being disconnected) and every pending close."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        sessions, self.sessions = list(self.sessions.values()), {}
        for session in sessions:
            await session.abort()
        for task in list(self._background):
            task.cancel()
        if self._background:
            await asyncio.wait(set(self._background), timeout=1)

    # ------------------------------------------------------------------ speech
    async def speak(self, request: SpeakRequest) -> dict[str, Any]:
        """``talk.speak``: the whole clip, base64."""
        if self.speech is None:
            raise talk_unconfigured("talk.speak")
        try:
            result = await self.speech.speak(request)
        except SpeechError as exc:
            raise speak_failed(self.speech.id, str(exc)) from None
        audio = await asyncio.to_thread(base64.b64encode, result.audio)
        return result.to_wire(audio.decode("ascii"))
