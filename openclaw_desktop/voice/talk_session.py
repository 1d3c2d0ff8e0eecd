"""One gateway talk session from the client side (``talk.session.*`` over the SDK).

``talk.session.create`` opens it (``mode: "transcription"``, ``transport:
"gateway-relay"``, ``brain: "none"`` for dictation), :meth:`TalkSession.send` streams audio
frames as ``talk.session.appendAudio`` (base64, whole-millisecond timestamps, at most
:data:`MAX_IN_FLIGHT` requests outstanding so a slow link never queues unbounded audio),
and the session's ``talk.event`` envelopes arrive on :meth:`TalkSession.next_event`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.protocol.audio import ulaw_encode
from openclaw_desktop.protocol.enums import Method
from openclaw_desktop.protocol.methods.talk import (
    TalkAudioParams,
    TalkMode,
    TalkSessionAppendAudioParams,
    TalkSessionCloseParams,
    TalkSessionCreateParams,
)
from openclaw_desktop.protocol.results.talk import (
    TalkAppendAudioResult,
    TalkCloseResult,
    TalkSessionCreateResult,
)
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.sdk.answers import parse_result
from openclaw_desktop.session import EventReceived

__all__ = ["MAX_IN_FLIGHT", "AudioContract", "TalkSession", "parse_event"]

log = logging.getLogger("openclaw.voice")

#: ``talk.session.appendAudio`` requests allowed in flight at once.
MAX_IN_FLIGHT = 4
#: Events of one session kept while nobody reads them (oldest dropped first).
EVENT_BACKLOG = 1000


@dataclass(frozen=True)
class AudioContract:
    """What the session takes: ``pcm16`` at a rate, or ``g711_ulaw`` at 8 kHz."""

    encoding: str = "pcm16"
    sample_rate: int = 24_000

    @classmethod
    def from_result(cls, result: TalkSessionCreateResult, wanted: AudioContract) -> AudioContract:
        """The gateway's ``audio`` answer, or what we asked for when it names none."""
        audio = result.audio
        if audio is None:
            return wanted
        encoding = str(audio.get("inputEncoding") or wanted.encoding)
        rate = audio.get("inputSampleRateHz")
        return cls(encoding, int(rate) if isinstance(rate, int) else wanted.sample_rate)

    def to_params(self) -> dict[str, Any]:
        """The ``audio`` parameter of ``talk.session.create``."""
        wire = {"inputEncoding": self.encoding, "inputSampleRateHz": self.sample_rate}
        return TalkAudioParams.model_validate(wire).to_wire()


def parse_event(event: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A ``talk.event`` as (type, its payload's stripped ``text``, the payload)."""
    raw = event.get("payload")
    payload: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return str(event.get("type") or ""), str(payload.get("text") or "").strip(), payload


class TalkSession:
    """An open talk session; use :meth:`open`, then :meth:`send`, then :meth:`close`."""

    def __init__(self, client: OpenClaw, session_id: str, contract: AudioContract) -> None:
        self.client = client
        self.session_id = session_id
        self.contract = contract
        self.sent_frames = 0
        self._captured_samples = 0
        self.failed_sends = 0
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue(EVENT_BACKLOG)
        self._slots = asyncio.Semaphore(MAX_IN_FLIGHT)
        self._sends: set[asyncio.Task[None]] = set()
        self._closed = False
        self._unsubscribe = client.connection.on_event(self._on_event)

    @classmethod
    async def open(
        cls,
        client: OpenClaw,
        *,
        mode: TalkMode = "transcription",
        audio: AudioContract | None = None,
        language: str | None = None,
        session_key: str | None = None,
    ) -> TalkSession:
        """``talk.session.create`` (gateway relay, no brain: we only want the transcript).

        Raises:
            OpenClawError: the gateway refused (``UNAVAILABLE`` when it has no recognizer);
                :class:`~openclaw_desktop.sdk.errors.InvalidResult` when its answer does not
                fit ``talk.session.create``'s result model.
        """
        wanted = audio or AudioContract()
        # Another rate or G.711 is an extension of OpenClaw Desktop's gateway; the real
        # gateway refuses the property, so the default (pcm16 at 24 kHz) never sends it.
        params = TalkSessionCreateParams(
            mode=mode,
            transport="gateway-relay",
            brain="none",
            audio=wanted.to_params() if wanted != AudioContract() else None,
            language=language or None,
            session_key=session_key or None,
        )
        answer = await client.call(Method.TALK_SESSION_CREATE, params.to_wire())
        result = parse_result(Method.TALK_SESSION_CREATE, answer, TalkSessionCreateResult)
        if not result.session_id:
            raise OpenClawError("talk.session.create answered without a sessionId")
        return cls(client, result.session_id, AudioContract.from_result(result, wanted))

    def _on_event(self, event: EventReceived) -> None:
        payload = event.payload
        if event.event != "talk.event" or not isinstance(payload, dict):
            return
        if payload.get("sessionId") != self.session_id:
            return
        if self._events.full():
            self._events.get_nowait()
        self._events.put_nowait(payload)

    async def next_event(self, timeout: float) -> dict[str, Any] | None:
        """The next ``talk.event`` of this session, or None after ``timeout`` seconds."""
        try:
            async with asyncio.timeout(timeout):
                return await self._events.get()
        except TimeoutError:
            return None

    def poll_events(self) -> list[dict[str, Any]]:
        """The events that arrived since the last call, without waiting."""
        out: list[dict[str, Any]] = []
        while not self._events.empty():
            out.append(self._events.get_nowait())
        return out

    async def send_pcm(self, pcm16: bytes) -> None:
        """One captured PCM16 frame at the session's rate: encoded as the session takes it
        (µ-law for ``g711_ulaw``) and stamped with the audio time sent before it."""
        timestamp_ms = self._captured_samples * 1000 // self.contract.sample_rate
        self._captured_samples += len(pcm16) // 2
        audio = ulaw_encode(pcm16) if self.contract.encoding == "g711_ulaw" else pcm16
        await self.send(audio, timestamp_ms)

    async def send(self, frame: bytes, timestamp_ms: int) -> None:
        """Queue one audio frame; waits while :data:`MAX_IN_FLIGHT` sends are outstanding."""
        if self._closed:
            return
        await self._slots.acquire()
        params = TalkSessionAppendAudioParams(
            session_id=self.session_id,
            audio_base64=base64.b64encode(frame).decode("ascii"),
            timestamp=int(timestamp_ms),
        ).to_wire()
        task = asyncio.get_running_loop().create_task(self._send(params))
        self._sends.add(task)
        task.add_done_callback(self._sends.discard)

    async def _send(self, params: dict[str, Any]) -> None:
        try:
            answer = await self.client.call(Method.TALK_SESSION_APPEND_AUDIO, params, timeout=10)
            parse_result(Method.TALK_SESSION_APPEND_AUDIO, answer, TalkAppendAudioResult)
            self.sent_frames += 1
        except (OpenClawError, TimeoutError) as exc:
            self.failed_sends += 1
            if self.failed_sends == 1:
                log.warning("talk audio not delivered: %s", exc)
        finally:
            self._slots.release()

    @property
    def in_flight(self) -> int:
        """Sends not answered yet."""
        return len(self._sends)

    async def drain(self, timeout: float = 10.0) -> None:
        """Wait for the outstanding sends."""
        if self._sends:
            await asyncio.wait(list(self._sends), timeout=timeout)

    async def close(self) -> None:
        """Deliver what is in flight, then ``talk.session.close`` (idempotent)."""
        if self._closed:
            return
        await self.drain()
        self._closed = True
        try:
            params = TalkSessionCloseParams(session_id=self.session_id).to_wire()
            answer = await self.client.call(Method.TALK_SESSION_CLOSE, params)
            parse_result(Method.TALK_SESSION_CLOSE, answer, TalkCloseResult)
        except (OpenClawError, TimeoutError) as exc:
            log.info("talk.session.close: %s", exc)

    async def aclose(self) -> None:
        """Close and stop listening for events."""
        try:
            await self.close()
        finally:
            self._unsubscribe()
            for task in list(self._sends):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
