"""Talk mode: a spoken conversation with the agent.

listen -> (an utterance ends: ``transcript.done``) -> think (``chat.send`` in the session,
the run matched by its id, at most :data:`REPLY_TIMEOUT_S`) -> speak the reply -> listen.

The microphone is closed while the reply plays (no echo of the speaker into the next
turn), and :meth:`TalkMode.interrupt` cuts the reply short and goes back to listening.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.playback import play_pcm16
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.voice.dictation import MIC_STALL_S, MicOpener
from openclaw_desktop.voice.speech import Speech, speak_reply
from openclaw_desktop.voice.talk_session import AudioContract, TalkSession, parse_event

__all__ = ["REPLY_TIMEOUT_S", "TalkMode", "TalkPhase", "TalkTurn"]

log = logging.getLogger("openclaw.voice")

#: How long a reply may take before the turn gives up (the run goes on in the chat).
REPLY_TIMEOUT_S = 45.0
#: Longest single utterance listened to.
MAX_UTTERANCE_S = 60.0


class TalkPhase(StrEnum):
    """What talk mode is doing (the UI shows it)."""

    LISTENING = "listening"
    THINKING = "thinking"
    SPEAKING = "speaking"
    STOPPED = "stopped"


@dataclass
class TalkTurn:
    """One exchange."""

    heard: str
    run_id: str
    reply: str = ""
    status: str = ""
    spoken_by: str = ""
    interrupted: bool = False
    errors: list[str] = field(default_factory=list)


class TalkMode:
    """Turns until :meth:`stop`; ``on_phase`` and ``on_partial`` feed the UI."""

    def __init__(
        self,
        client: OpenClaw,
        session_key: str,
        open_mic: MicOpener,
        *,
        on_phase: Callable[[TalkPhase], None] | None = None,
        on_partial: Callable[[str], None] | None = None,
        on_turn: Callable[[TalkTurn], None] | None = None,
        on_heard: Callable[[TalkTurn], None] | None = None,
        audio: AudioContract | None = None,
        reply_timeout: float = REPLY_TIMEOUT_S,
        speak: Callable[[OpenClaw, str], Awaitable[Speech]] | None = None,
    ) -> None:
        self.client = client
        self.session_key = session_key
        self.open_mic = open_mic
        self.on_phase = on_phase or (lambda _phase: None)
        self.on_partial = on_partial or (lambda _text: None)
        self.on_turn = on_turn or (lambda _turn: None)
        self.on_heard = on_heard or (lambda _turn: None)
        self.audio = audio or AudioContract()
        self.reply_timeout = reply_timeout
        self._speak = speak or speak_reply
        self.phase = TalkPhase.STOPPED
        self.turns: list[TalkTurn] = []
        self._stop = asyncio.Event()
        self._interrupt = threading.Event()

    def _set(self, phase: TalkPhase) -> None:
        self.phase = phase
        self.on_phase(phase)

    def stop(self) -> None:
        """End talk mode (the current phase ends at once)."""
        self._stop.set()
        self._interrupt.set()

    def interrupt(self) -> None:
        """Cut the spoken reply short and listen again."""
        self._interrupt.set()

    async def run(self) -> list[TalkTurn]:
        """Talk until :meth:`stop`; returns the turns.

        Raises:
            OpenClawError: the gateway cannot transcribe (no talk session).
            DeviceError: no microphone.
        """
        try:
            while not self._stop.is_set():
                heard = await self._listen()
                if heard is None:
                    break
                if not heard:
                    continue
                turn = TalkTurn(heard, str(uuid.uuid4()))
                self.turns.append(turn)
                self.on_heard(turn)  # before the send: the run id is already known
                await self._think(turn)
                if turn.reply and not self._stop.is_set():
                    await self._say(turn)
                self.on_turn(turn)
        finally:
            self._set(TalkPhase.STOPPED)
        return self.turns

    # ------------------------------------------------------------------ phases
    async def _listen(self) -> str | None:
        """One utterance's text ("" when nothing was recognized), None when stopped."""
        self._set(TalkPhase.LISTENING)
        session = await TalkSession.open(self.client, audio=self.audio)
        mic = await self.open_mic(session.contract.sample_rate)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MAX_UTTERANCE_S
        heard: str | None = ""
        try:
            while True:
                if self._stop.is_set():
                    heard = None
                    break
                frame = await mic.read(MIC_STALL_S)
                if frame is None:  # the stream was closed under us
                    heard = None
                    break
                await session.send_pcm(frame)
                done = self._drain(session)
                if done is not None or loop.time() > deadline:
                    heard = done or ""
                    break
        finally:
            await mic.close()  # muted before anything is said back
            await session.aclose()
        return heard

    def _drain(self, session: TalkSession) -> str | None:
        """Handle queued events; the text of a finished utterance, if one finished."""
        for event in session.poll_events():
            kind, text, _payload = parse_event(event)
            if kind == "transcript.delta":
                self.on_partial(text)
            elif kind == "transcript.done" and text:
                self.on_partial(text)
                return text
        return None

    async def _think(self, turn: TalkTurn) -> None:
        self._set(TalkPhase.THINKING)
        try:
            run = await self.client.sessions.send(
                self.session_key, turn.heard, idempotency_key=turn.run_id
            )
            result = await run.wait(self.reply_timeout)
        except (OpenClawError, TimeoutError) as exc:
            turn.errors.append(str(exc))
            return
        turn.status = result.status
        if result.status == "accepted":
            turn.errors.append(f"no reply within {self.reply_timeout:g} s")
            return
        turn.reply = result.text

    async def _say(self, turn: TalkTurn) -> None:
        self._set(TalkPhase.SPEAKING)
        self._interrupt.clear()
        try:
            speech = await self._speak(self.client, turn.reply)
            turn.spoken_by = speech.provider
            finished = await play_pcm16(speech.pcm.samples, speech.pcm.rate, self._interrupt)
            turn.interrupted = not finished
        except (OpenClawError, DeviceError) as exc:
            turn.errors.append(str(exc))
            log.warning("could not speak the reply: %s", exc)
