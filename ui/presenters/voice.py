"""Dictation in the chat window: the mic button and push-to-talk start it, stopping sends
the transcript to the session like a typed message (queued while the gateway is away)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QObject, Signal, SignalInstance

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.sdk import OpenClaw
from ui.tasks import CANCEL_GRACE_S

if TYPE_CHECKING:  # voice loads numpy and PortAudio: imported when first used
    from openclaw_desktop.voice import DictationResult
    from openclaw_desktop.voice.dictation import FrameSource, MicOpener
    from openclaw_desktop.voice.talk_mode import TalkMode, TalkTurn

__all__ = ["MIC_RECHECK_S", "VoiceChat", "VoicePresenter"]

#: How often the chat checks again whether a microphone is there (hot-plug).
MIC_RECHECK_S = 10.0

log = logging.getLogger("openclaw.ui")


class VoiceChat(Protocol):
    """What dictation and talk need of the chat they belong to (the chat presenter): its
    client and session, its timeline (a heard turn is shown at once) and its send path (a
    transcript goes out like a typed message)."""

    @property
    def client(self) -> OpenClaw: ...

    @property
    def session_key(self) -> str: ...

    @property
    def timeline(self) -> ChatTimeline: ...

    @property
    def changed(self) -> SignalInstance: ...

    async def send(self, text: str) -> str | None: ...


class VoicePresenter(QObject):
    """One dictation at a time for one chat session."""

    #: ``idle`` / ``listening`` / ``finishing``.
    state = Signal(str)
    #: The transcript so far (partial).
    partial = Signal(str)
    #: Input level in dBFS (about 50 times a second while listening).
    level = Signal(float)
    #: Why a dictation could not run or sent nothing.
    failed = Signal(str)
    #: Talk mode's phase: ``listening`` / ``thinking`` / ``speaking`` / ``stopped``.
    talk_phase = Signal(str)
    #: Why there is no microphone here ('' once there is one): Dictate and Talk follow it.
    microphone_problem = Signal(str)

    def __init__(
        self,
        chat: VoiceChat,
        microphone: Callable[[], str | None] = lambda: None,
        open_mic: Callable[[int], Awaitable[FrameSource]] | None = None,
        check_mic: Callable[[str | None], Awaitable[str | None]] | None = None,
    ) -> None:
        super().__init__()
        self.chat = chat
        self.microphone = microphone
        self._open_mic = open_mic
        self._stop: asyncio.Event | None = None
        self.task: asyncio.Task[DictationResult | None] | None = None
        self.current = "idle"
        self.talk: TalkMode | None = None
        self.talk_task: asyncio.Task[None] | None = None
        #: The last answer of the microphone check (None: not checked yet, '' : usable).
        self.problem: str | None = None
        self._watch: asyncio.Task[None] | None = None
        self._check_mic = check_mic

    @property
    def listening(self) -> bool:
        """Whether a dictation runs."""
        return self.task is not None and not self.task.done()

    def toggle(self) -> None:
        """The mic button: start, or stop and send."""
        if self.listening:
            self.stop()
        else:
            self.start()

    def start(self) -> None:
        """Start listening (push-to-talk pressed)."""
        if self.listening:
            return
        if self.problem:  # push-to-talk too: say why instead of failing to open a device
            self.failed.emit(f"Dictation unavailable: {self.problem}")
            return
        self._stop = asyncio.Event()
        self._set("listening")
        self.task = asyncio.get_running_loop().create_task(self._run(self._stop))

    def stop(self) -> None:
        """Stop listening; the transcript is sent (push-to-talk released)."""
        if self._stop is not None and not self._stop.is_set():
            self._stop.set()
            self._set("finishing")

    # ------------------------------------------------------------------ the microphone
    def watch_microphone(self, every_s: float = MIC_RECHECK_S) -> None:
        """Check now whether there is a microphone, and again every ``every_s`` seconds
        (plugged in or out): :attr:`microphone_problem` says when the answer changes."""
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(
                self._watch_microphone(every_s), name="microphone-check"
            )

    async def check_microphone(self) -> str:
        """Why the configured microphone (or the default input) cannot be used, or ''."""
        from openclaw_desktop.devices.audio import check_microphone

        check = self._check_mic or check_microphone
        wanted = self.microphone()
        reason = await check(wanted)
        if reason and wanted:  # dictation falls back to the default input
            reason = await check(None)
        return reason or ""

    async def _watch_microphone(self, every_s: float) -> None:
        while True:
            if not self.listening and not self.talking:  # a capture in use is there
                reason = await self.check_microphone()
                if reason != self.problem:
                    self.problem = reason
                    self.microphone_problem.emit(reason)
            await asyncio.sleep(every_s)

    async def aclose(self) -> None:
        """Cancel a running dictation (nothing is sent), talk mode and the mic check."""
        running = [t for t in (self.task, self.talk_task, self._watch) if t and not t.done()]
        for task in running:
            task.cancel()
        if running:  # bounded: a task that shrugs off its cancel must not hold up quitting
            done, _ = await asyncio.wait(running, timeout=CANCEL_GRACE_S)
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    log.warning("voice task %s failed as it stopped", task.get_name())

    # ------------------------------------------------------------------ talk mode
    @property
    def talking(self) -> bool:
        """Whether talk mode runs."""
        return self.talk_task is not None and not self.talk_task.done()

    def toggle_talk(self) -> None:
        """The Talk button: start a spoken conversation, or end it."""
        if self.talking and self.talk is not None:
            self.talk.stop()
            return
        if self.listening:
            self.stop()
        if self.problem:
            self.failed.emit(f"Talk mode unavailable: {self.problem}")
            self.talk_phase.emit("stopped")
            return
        from openclaw_desktop.voice.talk_mode import TalkMode

        self.talk = TalkMode(
            self.chat.client,
            self.chat.session_key,
            self._mic(),
            on_phase=lambda phase: self.talk_phase.emit(phase.value),
            on_partial=self.partial.emit,
            on_heard=self._heard,
        )
        self.talk_task = asyncio.get_running_loop().create_task(self._talk(self.talk))

    def interrupt(self) -> None:
        """Stop the reply being spoken; listen again."""
        if self.talk is not None:
            self.talk.interrupt()

    def _heard(self, turn: TalkTurn) -> None:
        """Show what was heard at once, like a typed message (the run id is known)."""
        self.chat.timeline.send(turn.run_id, turn.heard, now_ms=int(time.time() * 1000))
        self.chat.changed.emit()

    async def _talk(self, mode: TalkMode) -> None:
        try:
            turns = await mode.run()
        except (OpenClawError, DeviceError) as exc:
            log.warning("talk mode failed: %s", exc)
            self.failed.emit(f"Talk mode unavailable: {exc}")
            self.talk_phase.emit("stopped")
            return
        problems = [e for t in turns for e in t.errors]
        if problems:
            self.failed.emit(problems[-1])

    def _set(self, state: str) -> None:
        self.current = state
        self.state.emit(state)

    def _mic(self) -> MicOpener:
        from openclaw_desktop.voice import open_microphone

        if self._open_mic is not None:
            return self._open_mic
        wanted = self.microphone()

        async def opener(rate: int) -> FrameSource:
            return await open_microphone(wanted, rate, on_fallback=self.failed.emit)

        return opener

    async def _run(self, stop: asyncio.Event) -> DictationResult | None:
        from openclaw_desktop.voice import Dictation

        dictation = Dictation(
            self.chat.client,
            self._mic(),
            on_partial=self.partial.emit,
            on_level=self.level.emit,
        )
        try:
            result = await dictation.run(stop)
        except (OpenClawError, DeviceError, TimeoutError) as exc:
            log.warning("dictation failed: %s", exc)
            self.failed.emit(f"Dictation unavailable: {exc}")
            return None
        finally:
            self._set("idle")
        if result.errors and not result.text:
            self.failed.emit(f"Nothing recognized: {result.errors[-1]}")
        elif not result.text:
            self.failed.emit("Nothing recognized")
        else:
            await self.chat.send(result.text)
        return result
