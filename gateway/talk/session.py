"""One transcription session: audio in (decoded, resampled, endpointed, recognized in a
worker thread), ``talk.event`` envelopes out to the connection that owns it.

Appends are queued in order and processed by one task per session, so recognition never
runs on the event loop and never runs twice at once for one stream. Only speech reaches the
recognizer: between utterances the session keeps a short pre-roll (``prefixPaddingMs``), so
long pauses cost no recognition and are never uploaded. Closing drains what was
appended first, so the last words arrive as ``transcript.done`` before ``session.closed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from gateway.talk.events import TalkEvents, TalkEventType
from gateway.talk.stt.base import RecognizerStream, SpeechRecognizer, TranscriptionError
from openclaw_desktop.protocol.audio import AudioFormat, decode_to_pcm16

__all__ = ["SessionSpec", "TalkSession"]

log = logging.getLogger("gateway.talk")

#: How long closing waits for the last recognition (an upload to a slow server).
CLOSE_DRAIN_S = 120.0
#: Bound on ``prefixPaddingMs``, and the endpointer's speech onset (its ``min_speech_ms``).
MAX_PREFIX_PADDING_MS = 2000
SPEECH_ONSET_MS = 100


@dataclass(frozen=True)
class SessionSpec:
    """What the session was created with."""

    mode: str
    transport: str
    brain: str
    input_format: AudioFormat
    language: str | None
    silence_ms: int
    vad_level_dbfs: float
    max_audio_bytes: int
    session_key: str | None = None
    prefix_padding_ms: int = 300


@dataclass(frozen=True)
class _Outcome:
    kind: TalkEventType
    text: str = ""
    turn: int = 0
    error: str = ""


class TalkSession:
    """A transcription session owned by one connection (``owner_conn_id``)."""

    def __init__(
        self,
        session_id: str,
        owner_conn_id: str,
        spec: SessionSpec,
        recognizer: SpeechRecognizer,
        events: TalkEvents,
        expires_at_ms: int,
    ) -> None:
        self.session_id = session_id
        self.owner_conn_id = owner_conn_id
        self.spec = spec
        self.recognizer = recognizer
        self.events = events
        self.expires_at_ms = expires_at_ms
        self.received_bytes = 0
        self.closed = False
        self._stream: RecognizerStream | None = None
        # numpy (the resampler, the endpointer) loads with the first session, not at start.
        from gateway.talk.vad import EnergyEndpointer
        from openclaw_desktop.protocol.audio import Resampler

        self._resampler = Resampler(spec.input_format.sample_rate_hz, recognizer.sample_rate)
        self._endpointer = EnergyEndpointer(
            recognizer.sample_rate, silence_ms=spec.silence_ms, level_dbfs=spec.vad_level_dbfs
        )
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._worker: asyncio.Task[None] | None = None
        self._turn = 1
        self._partial = ""
        self._heard = False
        # Audio kept from before the speech starts: the padding asked for plus the time the
        # endpointer needs to call it speech.
        preroll_ms = min(spec.prefix_padding_ms, MAX_PREFIX_PADDING_MS) + SPEECH_ONSET_MS
        self._preroll_bytes = recognizer.sample_rate * 2 * preroll_ms // 1000
        self._preroll = b""

    # ------------------------------------------------------------------ loop side
    async def start(self) -> None:
        """Open the recognizer stream (in a thread) and start the worker.

        Raises:
            TranscriptionError: the recognizer cannot start.
        """
        self._stream = await asyncio.to_thread(self.recognizer.open_stream, self.spec.language)
        self._worker = asyncio.create_task(self._work(), name=f"talk-{self.session_id[:8]}")

    def audio_contract(self) -> dict[str, Any]:
        """``{inputEncoding, inputSampleRateHz, outputEncoding, outputSampleRateHz}``."""
        return {
            "inputEncoding": self.spec.input_format.encoding.value,
            "inputSampleRateHz": self.spec.input_format.sample_rate_hz,
            "outputEncoding": "pcm16",
            "outputSampleRateHz": 24000,
        }

    def would_exceed(self, size: int) -> bool:
        """Whether ``size`` more bytes would pass the session's audio bound."""
        return self.received_bytes + size > self.spec.max_audio_bytes

    def append(self, audio: bytes) -> None:
        """Queue decoded wire audio (the caller checked the bound and the session)."""
        self.received_bytes += len(audio)
        self._queue.put_nowait(audio)

    async def close(self) -> None:
        """Recognize what is queued, finish the utterance, stop the worker (bounded)."""
        if self.closed:
            return
        self.closed = True
        self._queue.put_nowait(None)
        if self._worker is not None:
            try:
                async with asyncio.timeout(CLOSE_DRAIN_S):
                    await asyncio.shield(self._worker)
            except TimeoutError:
                log.warning("talk session %s: recognition did not finish", self.session_id[:8])
                self._worker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._worker

    async def abort(self) -> None:
        """Stop at once (gateway shutdown): queued audio is dropped, no final transcript."""
        self.closed = True
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    async def _work(self) -> None:
        while True:
            item = await self._queue.get()
            step = self._process if item is not None else self._finish
            try:
                outcomes = await asyncio.to_thread(step, item or b"")
            except Exception as exc:  # a recognizer bug must not leave the session hanging
                log.exception("talk session %s: recognition failed", self.session_id[:8])
                outcomes = [_Outcome(TalkEventType.SESSION_ERROR, error=type(exc).__name__)]
            for outcome in outcomes:
                self._emit(outcome)
            if item is None:
                return

    def _emit(self, outcome: _Outcome) -> None:
        turn_id = f"turn-{outcome.turn}"
        if outcome.kind is TalkEventType.TRANSCRIPT_DELTA:
            self.events.emit(outcome.kind, {"text": outcome.text}, turn_id=turn_id, final=False)
        elif outcome.kind is TalkEventType.TRANSCRIPT_DONE:
            self.events.emit(outcome.kind, {"text": outcome.text}, turn_id=turn_id, final=True)
        else:
            self.events.emit(outcome.kind, {"message": outcome.error, "recoverable": True})

    # ------------------------------------------------------------------ worker thread side
    def _process(self, audio: bytes) -> list[_Outcome]:
        pcm = decode_to_pcm16(self.spec.input_format.encoding, audio)
        return self._recognize(self._resampler.process(pcm))

    def _finish(self, _: bytes) -> list[_Outcome]:
        outcomes = self._recognize(self._resampler.flush())
        outcomes += self._end_utterance()
        if self._stream is not None:
            self._stream.close()
        return outcomes

    def _recognize(self, pcm: bytes) -> list[_Outcome]:
        """Endpoint ``pcm``; between utterances keep only the pre-roll, during one feed the
        recognizer (the pre-roll first: the start of the first word and the noise floor)."""
        assert self._stream is not None
        outcomes: list[_Outcome] = []
        if not pcm:
            return outcomes
        ended = self._endpointer.feed(pcm)
        if not self._heard:
            if not (self._endpointer.in_speech or ended):
                self._preroll = (self._preroll + pcm)[-self._preroll_bytes :]
                return outcomes
            self._heard = True
            pcm, self._preroll = self._preroll + pcm, b""
        try:
            partial = self._stream.feed(pcm)
        except TranscriptionError as exc:
            return [_Outcome(TalkEventType.SESSION_ERROR, error=str(exc))]
        if partial and partial != self._partial and self.recognizer.partials:
            self._partial = partial
            outcomes.append(_Outcome(TalkEventType.TRANSCRIPT_DELTA, partial, self._turn))
        if ended:
            outcomes += self._end_utterance()
        return outcomes

    def _end_utterance(self) -> list[_Outcome]:
        """Final text of the utterance, when one was heard (silence is not one)."""
        assert self._stream is not None
        if not self._heard:
            return []
        try:
            text = self._stream.end_utterance()
        except TranscriptionError as exc:
            text, error = "", str(exc)
        else:
            error = ""
        turn, self._partial, self._heard = self._turn, "", False
        if error:
            return [_Outcome(TalkEventType.SESSION_ERROR, error=error)]
        if not text:
            return []
        self._turn += 1
        return [_Outcome(TalkEventType.TRANSCRIPT_DONE, text, turn)]
