"""Dictation in the chat window: the mic button and push-to-talk start it, stopping sends
the transcript to the session like a typed message (queued while the gateway is away)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.voice import Dictation, DictationResult, open_microphone
from openclaw_desktop.voice.dictation import FrameSource, MicOpener
from ui.presenters.chat import ChatPresenter

__all__ = ["VoicePresenter"]

log = logging.getLogger("openclaw.ui")


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

    def __init__(
        self,
        chat: ChatPresenter,
        microphone: Callable[[], str | None] = lambda: None,
        open_mic: MicOpener | None = None,
    ) -> None:
        super().__init__()
        self.chat = chat
        self.microphone = microphone
        self._open_mic = open_mic
        self._stop: asyncio.Event | None = None
        self.task: asyncio.Task[DictationResult | None] | None = None
        self.current = "idle"

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
        self._stop = asyncio.Event()
        self._set("listening")
        self.task = asyncio.get_running_loop().create_task(self._run(self._stop))

    def stop(self) -> None:
        """Stop listening; the transcript is sent (push-to-talk released)."""
        if self._stop is not None and not self._stop.is_set():
            self._stop.set()
            self._set("finishing")

    async def aclose(self) -> None:
        """Cancel a running dictation (nothing is sent)."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    def _set(self, state: str) -> None:
        self.current = state
        self.state.emit(state)

    def _mic(self) -> MicOpener:
        if self._open_mic is not None:
            return self._open_mic
        wanted = self.microphone()

        async def opener(rate: int) -> FrameSource:
            return await open_microphone(wanted, rate, on_fallback=self.failed.emit)

        return opener

    async def _run(self, stop: asyncio.Event) -> DictationResult | None:
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
