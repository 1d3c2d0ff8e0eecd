"""Chat runs of the bundled gateway: ``chat.send`` acks at once, runs go one at a time per
session (follow-ups queue, ``queueMode: "interrupt"`` steers the running turn), ``chat.abort``
stops a run and keeps its partial reply."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.chat.agent import RunResult, RunSpec, run_agent
from gateway.chat.checkpoint import CheckpointFolder, ReplyCheckpoint, recover_interrupted
from gateway.chat.events import Broadcast, RunEvents, now_ms
from gateway.chat.offline import OFFLINE_REPLY, is_slash_command, run_slash_command
from gateway.chat.outcomes import RunOutcome, RunOutcomes
from gateway.chat.providers.base import ModelRef
from gateway.chat.tools import AgentTools, NodeAccess
from gateway.chat.transcript import Transcript
from gateway.chat.transcript_file import MAX_RECORD_BYTES, record_size
from gateway.chat.transcript_store import TranscriptStore
from gateway.errors import BundledGatewayError
from gateway.state import ChatSessions
from openclaw_desktop.protocol import EventName

__all__ = ["ChatRun", "ChatService", "MessageTooLargeError", "ProviderChoice"]

log = logging.getLogger("gateway.chat")

#: Finished run ids remembered for idempotent re-sends.
FINISHED_MEMORY = 5_000
OFFLINE_MODEL = ModelRef("openclaw", "offline", "openai-completions", name="Offline")


@dataclass
class ProviderChoice:
    """What runs use: a pool and its default model, or neither (offline mode)."""

    pool: Any = None
    model: ModelRef | None = None
    models: list[ModelRef] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


class MessageTooLargeError(BundledGatewayError, ValueError):
    """A message would not fit in one transcript line; refused before it is accepted."""

    def __init__(self, size: int, limit: int = MAX_RECORD_BYTES) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"message is too large for the transcript: {size} bytes once stored "
            f"(with its attachments); the limit is {limit} bytes"
        )


def _json_bytes_at_most(value: Any) -> int:
    """An upper bound of ``value``'s JSON size: a character takes at most 6 bytes (``\\u001f``),
    any other scalar at most 32."""
    if isinstance(value, str):
        return 6 * len(value) + 2
    if isinstance(value, dict):
        return 2 + sum(
            _json_bytes_at_most(k) + _json_bytes_at_most(v) + 2 for k, v in value.items()
        )
    if isinstance(value, list | tuple):
        return 2 + sum(_json_bytes_at_most(item) + 1 for item in value)
    return 32


#: Room for the ``id``/``parentId`` a stored record gets, and the newline.
_RECORD_OVERHEAD = 128


def check_fits(message: dict[str, Any]) -> None:
    """Refuse a message the transcript could not store (one JSONL line at most
    :data:`MAX_RECORD_BYTES`), so it is never acknowledged and then lost. Most messages are
    far below the limit by a cheap bound; only the others are serialized to be measured.

    Raises:
        MessageTooLargeError: It is too large.
    """
    if _json_bytes_at_most(message) + _RECORD_OVERHEAD <= MAX_RECORD_BYTES:
        return
    size = record_size(message)
    if size > MAX_RECORD_BYTES:
        raise MessageTooLargeError(size)


@dataclass
class ChatRun:
    """One run, queued or active."""

    run_id: str
    session_key: str
    message: str
    attachments: list[dict[str, Any]]
    thinking: str | None
    sender: dict[str, Any]
    task: asyncio.Task[None] | None = None
    steer: list[dict[str, Any]] = field(default_factory=list)
    #: The runs of the messages in :attr:`steer` (one left when this run ends runs next).
    steered: list[ChatRun] = field(default_factory=list)
    events: RunEvents | None = None
    #: What the run used and how its model calls ended (for :class:`RunOutcome`).
    model: ModelRef | None = None
    result: RunResult | None = None
    started_at: int = 0


def _file_block(attachment: dict[str, Any]) -> dict[str, Any]:
    """A non-image attachment as text the model reads: its content when it is text, else
    its name, type and size."""
    head = f"[attached file {attachment.get('fileName')} ({attachment.get('mimeType')}, "
    head += f"{attachment.get('bytes')} bytes)]"
    text = attachment.get("text")
    return {"type": "text", "text": f"{head}\n{text}" if isinstance(text, str) else head}


class ChatService:
    """Owns transcripts, the session index and the running runs."""

    def __init__(
        self,
        folder: Path,
        sessions: ChatSessions,
        broadcast: Broadcast,
        nodes: NodeAccess,
        providers: ProviderChoice,
        *,
        agent_id: str = "main",
        on_sessions_changed: Callable[[str, str | None], None] | None = None,
    ) -> None:
        self.store = TranscriptStore(folder, default_agent=agent_id)
        self.checkpoints = CheckpointFolder(folder / "inflight")
        self.sessions = sessions
        self.broadcast = broadcast
        self.providers = providers
        self.agent_id = agent_id
        self.tools = AgentTools(nodes, self._session_rows)
        self._active: dict[str, ChatRun] = {}
        self._queued: dict[str, collections.deque[ChatRun]] = {}
        self._runs: dict[str, ChatRun] = {}
        self._finished: collections.OrderedDict[str, str] = collections.OrderedDict()
        #: How runs ended, for ``agent`` and ``agent.wait``.
        self.outcomes = RunOutcomes()
        self._on_sessions_changed = on_sessions_changed
        interrupted = sessions.mark_interrupted(now_ms())
        if interrupted:
            log.warning("%d chat run(s) were cut short by the last shutdown", interrupted)

    async def recover_interrupted(self) -> None:
        """At start, before any run: replies cut by the end of the last process (a crash,
        ``kill -9``) become interrupted assistant messages with their partial text."""
        keys = await asyncio.to_thread(recover_interrupted, self.checkpoints, self.store)
        if keys:
            log.warning("%d reply(ies) cut by the last shutdown recorded as interrupted", len(keys))

    # ------------------------------------------------------------------ queries
    def canonical(self, key: str) -> str:
        """The canonical session key; ValueError when malformed."""
        return self.store.canonical(key)

    def active_run_ids(self, key: str) -> list[str]:
        """Runs of a session that are running or queued."""
        active = self._active.get(key)
        ids = [active.run_id] if active else []
        return ids + [r.run_id for r in self._queued.get(key, ())]

    def run_state(self, run_id: str) -> str | None:
        """``in_flight`` for a known live run, ``ok`` for a finished one, else None."""
        if run_id in self._runs:
            return "in_flight"
        return "ok" if run_id in self._finished else None

    async def transcript(self, key: str) -> Transcript:
        """The transcript of a canonical key (created when missing)."""
        return await asyncio.to_thread(self.store.open, key)

    async def _session_rows(self) -> list[dict[str, Any]]:
        rows = self.sessions.list(50)
        return [{"key": r.key, "label": r.label, "updatedAt": r.updated_at_ms} for r in rows]

    # ------------------------------------------------------------------ send / abort
    def send(
        self,
        key: str,
        run_id: str,
        message: str,
        *,
        attachments: list[dict[str, Any]] | None = None,
        thinking: str | None = None,
        queue_mode: str | None = None,
        sender: dict[str, Any] | None = None,
    ) -> str:
        """Start, queue or steer; returns the ack status (``started``/``in_flight``/``ok``).

        Raises:
            MessageTooLargeError: The user message (with its attachments) would not fit in
                the transcript; nothing is started.
        """
        known = self.run_state(run_id)
        if known is not None:
            return known
        run = ChatRun(run_id, key, message, attachments or [], thinking, sender or {})
        check_fits(self._user_message(run))
        self.sessions.ensure(key, self.agent_id, now_ms())
        active = self._active.get(key)
        if active is not None and queue_mode in ("interrupt", "steer"):
            active.steer.append(self._user_message(run))
            active.steered.append(run)
            self._finished[run_id] = "steered"
            return "started"
        self._runs[run_id] = run
        if active is None:
            self._start(run)
        else:
            self._queued.setdefault(key, collections.deque()).append(run)
        return "started"

    def abort(self, key: str, run_id: str | None = None) -> list[str]:
        """Stop the named run (or the active one); returns the ids stopped."""
        stopped: list[str] = []
        queue = self._queued.get(key, collections.deque())
        for queued in list(queue):
            if run_id is not None and queued.run_id == run_id:
                queue.remove(queued)
                self._forget(queued, "aborted")
                self.outcomes.record(self._outcome(queued, "aborted"))
                self._emit_aborted_queued(queued)
                stopped.append(queued.run_id)
        active = self._active.get(key)
        if active is not None and active.task is not None and run_id in (None, active.run_id):
            active.task.cancel()
            stopped.append(active.run_id)
        return stopped

    def _emit_aborted_queued(self, run: ChatRun) -> None:
        events = RunEvents(
            self.broadcast,
            run_id=run.run_id,
            session_key=run.session_key,
            agent_id=self.agent_id,
            session_id="",
        )
        events.aborted(None)

    async def aclose(self) -> None:
        """Abort every run (at shutdown) and close the transcripts."""
        tasks = [r.task for r in self._active.values() if r.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.to_thread(self.store.close)
        pool = self.providers.pool
        if pool is not None and hasattr(pool, "aclose"):
            with contextlib.suppress(Exception):
                await pool.aclose()

    # ------------------------------------------------------------------ running
    def _start(self, run: ChatRun) -> None:
        self._active[run.session_key] = run
        run.task = asyncio.create_task(self._execute(run), name=f"chat-run-{run.run_id[:8]}")

    def _forget(self, run: ChatRun, outcome: str) -> None:
        self._runs.pop(run.run_id, None)
        self._finished[run.run_id] = outcome
        while len(self._finished) > FINISHED_MEMORY:
            self._finished.popitem(last=False)

    def _user_message(self, run: ChatRun) -> dict[str, Any]:
        content: Any = run.message
        images = [a for a in run.attachments if a.get("type") == "image"]
        files = [_file_block(a) for a in run.attachments if a.get("type") == "file"]
        if images or files:
            content = [{"type": "text", "text": run.message}, *files, *images]
        return {
            "role": "user",
            "content": content,
            "timestamp": now_ms(),
            "idempotencyKey": f"{run.run_id}:user",
            "__openclaw": {"senderIsOwner": True, **run.sender},
        }

    async def _execute(self, run: ChatRun) -> None:
        key = run.session_key
        outcome = "failed"
        checkpoint: ReplyCheckpoint | None = None
        run.started_at = now_ms()
        try:
            row = self.sessions.ensure(key, self.agent_id, now_ms())
            self.sessions.update(key, now_ms(), status="running", last_run_id=run.run_id)
            self.sessions_changed(key)
            transcript = await self.transcript(key)
            run.events = RunEvents(
                self.broadcast,
                run_id=run.run_id,
                session_key=key,
                agent_id=self.agent_id,
                session_id=row.session_id,
            )
            await asyncio.to_thread(transcript.append, self._user_message(run))
            checkpoint = ReplyCheckpoint(self.checkpoints, run.run_id, key)
            await checkpoint.start()
            run.events.checkpoint = checkpoint
            outcome = await self._reply(run, transcript, row.model, row.thinking)
        except asyncio.CancelledError:
            outcome = "aborted"
        except Exception:
            log.exception("chat run %s crashed", run.run_id)
            if run.events is not None:
                run.events.error("the run failed inside the gateway", "unknown")
        finally:
            self._forget(run, outcome)
            self.outcomes.record(self._outcome(run, outcome))
            self._active.pop(key, None)
            status = {"completed": "done", "aborted": "aborted"}.get(outcome, "failed")
            self.sessions.update(
                key, now_ms(), status=status, aborted_last_run=outcome == "aborted"
            )
            self.sessions_changed(key)
            self._requeue_steered(run)
            queue = self._queued.get(key)
            if queue:
                self._start(queue.popleft())
            if checkpoint is not None:
                # The run recorded its own end (reply, partial or error): no trace needed.
                # (Last: the run is already over for re-sends and the next queued run.)
                await checkpoint.finish()

    def _outcome(self, run: ChatRun, outcome: str) -> RunOutcome:
        events, result, model = run.events, run.result, run.model
        text = result.text if result is not None else (events.text if events else "")
        stop = result.stop_reason if result is not None else outcome
        return RunOutcome(
            run_id=run.run_id,
            session_key=run.session_key,
            session_id=events.session_id if events is not None else "",
            status=outcome,
            stop_reason="aborted" if outcome == "aborted" else stop,
            text=text,
            started_at=run.started_at or now_ms(),
            ended_at=now_ms(),
            provider=model.provider if model is not None else None,
            model=model.model if model is not None else None,
            input_tokens=result.input_tokens if result is not None else 0,
            output_tokens=result.output_tokens if result is not None else 0,
            model_calls=events.turn if events is not None else 0,
            error=result.error if result is not None else None,
        )

    def _requeue_steered(self, run: ChatRun) -> None:
        """Messages steered into ``run`` that it never took in (it was stopped, failed, or
        needed no model) run next, each as its own turn, as the real gateway starts them."""
        left = {m.get("idempotencyKey") for m in run.steer}
        later = [r for r in run.steered if f"{r.run_id}:user" in left]
        run.steer.clear()
        run.steered.clear()
        queue = self._queued.setdefault(run.session_key, collections.deque())
        for steered in reversed(later):
            self._finished.pop(steered.run_id, None)
            self._runs[steered.run_id] = steered
            queue.appendleft(steered)

    async def _reply(
        self, run: ChatRun, transcript: Transcript, model_ref: str | None, thinking: str | None
    ) -> str:
        events = run.events
        assert events is not None
        if is_slash_command(run.message) or self.providers.pool is None:
            text = (
                await run_slash_command(run.message, self.tools)
                if is_slash_command(run.message)
                else OFFLINE_REPLY
            )
            run.model = OFFLINE_MODEL
            run.result = RunResult("completed", "stop", text)
            return await self._canned(events, transcript, text)
        model = run.model = self._model(model_ref)
        spec = RunSpec(
            events=events,
            transcript=transcript,
            model=model,
            pool=self.providers.pool,
            tools=self.tools,
            system_prompt=self._system_prompt,
            thinking=run.thinking or thinking,
            steer=run.steer,
            on_compacted=lambda info: self._compacted(run, info),
        )
        result = run.result = await run_agent(spec)
        self.sessions.add_usage(
            run.session_key, now_ms(), result.input_tokens, result.output_tokens
        )
        return result.status

    def _model(self, ref: str | None) -> ModelRef:
        models = self.providers.models
        chosen = next((m for m in models if ref and m.ref == ref), None)
        model = chosen or self.providers.model or (models[0] if models else None)
        return model or OFFLINE_MODEL

    def _system_prompt(self) -> str:
        return (
            "You are OpenClaw, a helpful assistant running on the user's own computer "
            "(the OpenClaw Desktop bundled gateway). You can use the user's devices through "
            "tools.\n" + self.tools.describe_nodes()
        )

    def _compacted(self, run: ChatRun, info: dict[str, Any]) -> None:
        self.sessions.update(run.session_key, now_ms())
        row = self.sessions.get(run.session_key)
        if row is not None:
            self.sessions.update(run.session_key, now_ms(), compactions=row.compactions + 1)
        payload = {"sessionKey": run.session_key, "runId": run.run_id, "ts": now_ms(), **info}
        self.broadcast(EventName.SESSION_COMPACTED, payload, False)

    async def _canned(self, events: RunEvents, transcript: Transcript, text: str) -> str:
        """A reply that needs no model (slash commands, offline mode), streamed the same way."""
        started = now_ms()
        events.lifecycle("start", startedAt=started)
        events.model_turn(OFFLINE_MODEL.provider, OFFLINE_MODEL.model)
        events.delta(text)
        message = {
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "api": "openclaw",
            "provider": OFFLINE_MODEL.provider,
            "model": OFFLINE_MODEL.model,
            "stopReason": "stop",
            "timestamp": now_ms(),
            "__openclaw": {"runId": events.run_id},
        }
        await asyncio.to_thread(transcript.append, message)
        ended = now_ms()
        events.lifecycle("end", stopReason="stop", aborted=False, endedAt=ended, startedAt=started)
        events.final(events.assistant_message(text), "stop")
        return "completed"

    def sessions_changed(self, key: str, reason: str | None = None) -> None:
        """Tell operators a session changed (``sessions.changed``)."""
        if self._on_sessions_changed is not None:
            self._on_sessions_changed(key, reason)
