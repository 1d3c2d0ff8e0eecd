"""The chat presenter: one session's timeline, fed by the SDK, driven by the widgets.

Sends made while the agent is answering wait in a local queue (shown as queued); each can be
steered into the running turn (``queueMode: "steer"``) or goes out when the run ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from typing import Any

from PySide6.QtCore import QObject, Signal

from openclaw_desktop.chat import ChatTimeline
from openclaw_desktop.chat.attachments import Attachment
from openclaw_desktop.chat.items import assistant_key
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.sdk import Event, OpenClaw
from openclaw_desktop.transport import ConnectionState, ConnectionStatus
from ui.presenters.voice import VoicePresenter

__all__ = ["ChatPresenter", "opens_an_empty_reply"]

log = logging.getLogger("openclaw.ui")


def _nothing() -> None:
    """What ``_unsubscribe`` is once done."""


def opens_an_empty_reply(timeline: ChatTimeline, event: Event) -> bool:
    """Whether ``event`` is an ``assistant.delta`` without any text that would only open a
    reply the timeline does not show yet: an empty bubble. The real gateway opens an
    assistant item for every attempt at the model, and an attempt that fails (a provider
    error, retried a few times) never gets text; the history has no such message either. The
    reply appears with its first text instead."""
    if event.type != "assistant.delta" or event.data.get("text") or event.data.get("cumulative"):
        return False
    index = event.data.get("messageIndex")
    if not event.data.get("replace"):
        return True  # adds nothing to a reply that is shown, and opens none
    run_id = event.run_id or ""
    if isinstance(index, int):
        return timeline.get(assistant_key(run_id, index)) is None
    return timeline.reply(run_id) is None


class ChatPresenter(QObject):
    """Owns a :class:`ChatTimeline` and talks to the gateway through the SDK."""

    #: The timeline changed (rows may have been added or updated).
    changed = Signal()
    #: Whether the agent is working on a reply.
    busy = Signal(bool)
    #: A short status text for the status bar.
    status = Signal(str)

    def __init__(self, client: OpenClaw, session_key: str = "main") -> None:
        super().__init__()
        self.client = client
        self.session_key = session_key
        self.timeline = ChatTimeline(session_key)
        self._pending: list[tuple[str, str, list[Attachment]]] = []
        self._pump: asyncio.Task[None] | None = None
        #: Dictation for this session (set by the app before the view is made).
        self.voice: VoicePresenter | None = None
        #: ``models.list`` rows by ``provider/model`` ref, and the session's model ref.
        self.models: dict[str, dict[str, Any]] = {}
        self.model = ""
        self._reloads: set[asyncio.Task[None]] = set()
        #: Runs that went on across a reconnect: the history is merged once more when they
        #: end (what was stored while away and not sent again is then shown).
        self._reload_at_end: set[str] = set()
        self._offline: list[tuple[str, str, list[Attachment]]] = []
        # Created once connected (usually): the next CONNECTED is then a reconnect.
        self._was_connected = client.connection.status.state is ConnectionState.CONNECTED
        self._unsubscribe = client.connection.on_status(self._on_status)

    #: The models the gateway offers (``provider/model`` refs) and the session's choice.
    models_changed = Signal(list, str)
    #: The session's thinking level as the gateway keeps it ('' when it has none).
    thinking_changed = Signal(str)
    #: The thinking levels the session's model offers, when the gateway says (the real
    #: gateway's ``thinkingOptions``).
    thinking_options = Signal(list)

    async def start(self) -> None:
        """Load the history and the models, and follow the session's events."""
        self._pump = asyncio.create_task(self._follow(), name="chat-events")
        await self.reload()
        await self.load_models()

    async def load_models(self) -> None:
        """Fill the model picker (``models.list``; the session's ``model`` is selected)."""
        try:
            models = await self.client.models.list()
            row = await self.client.sessions.get(self.session_key)
        except OpenClawError as exc:
            log.info("no model list: %s", exc)
            return
        refs = [f"{m.get('provider')}/{m.get('id')}" for m in models]
        current = ""
        if row and row.get("model"):
            current = f"{row.get('modelProvider')}/{row.get('model')}"
        self.models = {ref: m for ref, m in zip(refs, models, strict=True)}
        self.model = current
        self.models_changed.emit(refs, current)
        options = row.get("thinkingOptions") if row else None
        if isinstance(options, list) and options and all(isinstance(o, str) for o in options):
            self.thinking_options.emit(options)
        thinking = (row.get("thinkingLevel") or row.get("thinkingDefault")) if row else None
        self.thinking_changed.emit(str(thinking) if isinstance(thinking, str) else "")

    def text_only_model(self) -> str | None:
        """The session's model when ``models.list`` says it reads text only (its ``input``
        lacks ``image``): images sent to it are not seen. None when it reads images, or
        when the gateway does not say."""
        entry = self.models.get(self.model)
        kinds = entry.get("input") if entry else None
        if isinstance(kinds, list) and kinds and "image" not in kinds:
            return str(entry.get("name") or self.model) if entry else self.model
        return None

    async def choose(self, *, model: str | None = None, thinking: str | None = None) -> None:
        """Set the session's model or thinking level (``sessions.patch``)."""
        changes: dict[str, str] = {}
        if model is not None:
            changes["model"] = model
        if thinking is not None:
            changes["thinkingLevel"] = thinking
        try:
            await self.client.sessions.patch(self.session_key, **changes)
        except OpenClawError as exc:
            self.status.emit(f"could not change the session: {exc}")
            return
        if model is not None:
            self.model = model

    async def aclose(self) -> None:
        """Stop following events (and a running dictation), and let go of what holds this
        presenter (PySide's wrappers keep a cycle through them from being collected: a
        dropped chat's whole timeline stayed in memory)."""
        self._unsubscribe()
        self._unsubscribe = _nothing
        voice, self.voice = self.voice, None
        if voice is not None:
            await voice.aclose()
            voice.deleteLater()  # its Qt connections hold the view's slots, and so itself
        for task in [self._pump, *self._reloads]:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def _on_status(self, status: ConnectionStatus) -> None:
        """After a reconnect the history is merged again (events sent while away are not
        replayed by gateways); the view never shows a message twice."""
        if status.state is not ConnectionState.CONNECTED:
            if self._was_connected:
                self.status.emit(f"connection {status.state.value}; the chat resumes when back")
            return
        if self._was_connected:
            self.status.emit("")  # the "resumes when back" note is no longer true
            task = asyncio.get_running_loop().create_task(self._resume(), name="chat-reload")
            self._reloads.add(task)
            task.add_done_callback(self._reloads.discard)
        self._was_connected = True

    async def _resume(self) -> None:
        """Back online: merge the history, then send what waited (same idempotency keys,
        so a message the gateway did get before the drop is not run twice). The models are
        asked for again too: a gateway that restarted may offer others, and a first list
        that failed would otherwise leave the picker empty for good."""
        await self.reload()
        await self.load_models()
        if self.timeline.active_run is not None:
            self._reload_at_end.add(self.timeline.active_run)
        waiting, self._offline = self._offline, []
        for run_id, text, files in waiting:
            await self._dispatch(run_id, text, None, files)

    async def reload(self) -> None:
        """Merge ``chat.history`` (at start and after a reconnect)."""
        try:
            messages = await self.client.sessions.history(self.session_key, limit=200)
        except OpenClawError as exc:
            self.status.emit(f"history unavailable: {exc}")
            return
        self.timeline.merge_history(messages)
        self.changed.emit()

    async def _follow(self) -> None:
        async for event in self.client.events():
            if opens_an_empty_reply(self.timeline, event):
                continue
            if self.timeline.apply(event) is None:
                continue
            self.changed.emit()
            if event.type in ("run.completed", "run.cancelled", "run.failed", "run.timed_out"):
                run_id = event.run_id or ""
                if run_id in self._reload_at_end or self.timeline.results_in_history(run_id):
                    self._reload_at_end.discard(run_id)
                    self._spawn_reload()  # what was stored while away, a tool's picture
                if self.timeline.active_run is None:  # not a steered message taken in
                    self.busy.emit(False)
                await self._send_next()

    def _spawn_reload(self) -> None:
        task = asyncio.get_running_loop().create_task(self.reload(), name="chat-reload")
        self._reloads.add(task)
        task.add_done_callback(self._reloads.discard)

    # ------------------------------------------------------------------ actions
    async def send(self, text: str, attachments: list[Attachment] | None = None) -> str | None:
        """Send (or queue, while a run goes on) a message; returns its run id."""
        text = text.strip()
        files = list(attachments or [])
        if not text and not files:
            return None
        run_id = str(uuid.uuid4())
        item = self.timeline.send(
            run_id,
            text,
            now_ms=int(time.time() * 1000),
            images=[a.preview() for a in files if a.is_image],
            files=[a.label() for a in files if not a.is_image],
        )
        self.changed.emit()
        if item.status == "queued":
            self._pending.append((run_id, text, files))
            return run_id
        await self._dispatch(run_id, text, None, files)
        return run_id

    async def steer(self, run_id: str) -> None:
        """Send a queued message now, into the running turn."""
        entry = next((p for p in self._pending if p[0] == run_id), None)
        if entry is None:
            return
        self._pending.remove(entry)
        self.timeline.steered(run_id)
        self.changed.emit()
        # "steer", not "interrupt": on the real gateway interrupt aborts the running reply
        # (and drops its partial) to start this message instead.
        await self._dispatch(run_id, entry[1], "steer", entry[2])

    def unsent(self) -> list[tuple[str, list[Attachment]]]:
        """Messages the gateway has not got yet (waiting for it to come back, or queued
        behind the running turn), oldest first: what switching gateways asks about."""
        return [(text, files) for _run, text, files in [*self._offline, *self._pending]]

    async def stop(self) -> None:
        """Stop the running reply (the partial answer stays, marked stopped)."""
        self.timeline.stop_requested()
        try:
            await self.client.sessions.abort(self.session_key)
        except OpenClawError as exc:
            self.status.emit(f"could not stop: {exc}")

    async def _send_next(self) -> None:
        if self._pending and self.timeline.active_run is None:
            run_id, text, files = self._pending.pop(0)
            self.timeline.active_run = run_id
            await self._dispatch(run_id, text, None, files)

    async def _dispatch(
        self, run_id: str, text: str, queue_mode: str | None, files: list[Attachment]
    ) -> None:
        if self.client.connection.status.state is not ConnectionState.CONNECTED:
            self._offline.append((run_id, text, files))  # sent in order on reconnect
            self.timeline.waiting(run_id)
            self.changed.emit()
            return
        self.busy.emit(True)
        try:
            await self.client.sessions.send(
                self.session_key,
                text,
                idempotency_key=run_id,
                queue_mode=queue_mode,
                attachments=[a.to_wire() for a in files] or None,
            )
        except OpenClawError as exc:
            log.warning("send failed: %s", exc)
            self.timeline.failed_send(run_id, str(exc))
            self.changed.emit()
            self.busy.emit(False)
