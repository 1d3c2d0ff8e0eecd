"""A run: what one ``send`` started. Wait for its result, stream its events (replayable by
event id), cancel it, or handle its approvals."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from openclaw_desktop.sdk.events import Event, now_ms
from openclaw_desktop.sdk.normalize import (
    INTERRUPTED,
    is_interruption,
    message_text,
    run_event_id,
)

__all__ = [
    "Approval",
    "ApprovalHandler",
    "Run",
    "RunApprovals",
    "RunResult",
    "RunSessions",
    "RunStatus",
    "Usage",
]

log = logging.getLogger("openclaw.sdk")

RunStatus = Literal["accepted", "completed", "failed", "cancelled", "timed_out"]
TERMINAL = {
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
    "run.timed_out": "timed_out",
}
#: The highest seq of a run, for events the SDK synthesizes after the gateway's last one.
_LAST = 9_999_999_999


@dataclass(frozen=True)
class Usage:
    """Token usage of a run (``cost_usd`` when the gateway reports it)."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True)
class RunResult:
    """The envelope of a finished (or still running, ``accepted``) run."""

    run_id: str
    status: RunStatus
    session_key: str
    started_at: int | None
    ended_at: int | None
    text: str
    messages: list[dict[str, Any]]
    usage: Usage
    error: str | None = None

    @property
    def output(self) -> dict[str, Any]:
        """``{text, messages}``."""
        return {"text": self.text, "messages": self.messages}


@dataclass(frozen=True)
class Approval:
    """An approval the gateway asks for while a run goes on."""

    id: str
    run_id: str | None
    kind: str
    summary: str | None
    command: str | None
    risk: str | None
    decisions: list[str]
    expires_at: int | None
    raw: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_event(cls, event: Event, run_id: str | None = None) -> Approval:
        """The approval an ``approval.requested`` event asks for."""
        data = event.data
        return cls(
            id=str(data.get("id")),
            run_id=run_id if run_id is not None else event.run_id,
            kind=str(data.get("kind")),
            summary=data.get("summary"),
            command=data.get("command"),
            risk=data.get("risk"),
            decisions=list(data.get("decisions") or []),
            expires_at=data.get("expiresAt"),
            raw=dict(data.get("request") or {}),
        )


#: Returns a decision (``allow-once``, ``allow-always``, ``deny``) or None to leave it to a
#: human (another operator client, the app's own dialog).
ApprovalHandler = Callable[[Approval], Awaitable[str | None]]


class RunSessions(Protocol):
    """What a run asks of its client's sessions: its transcript and an abort."""

    async def run_history(self, key: str, run_id: str) -> tuple[list[dict[str, Any]], str | None]:
        """The run's transcript messages and how it ended (see ``Sessions.run_history``)."""
        ...

    async def abort(self, key: str, run_id: str | None = None) -> dict[str, Any]:
        """``chat.abort``."""
        ...


class RunApprovals(Protocol):
    """What a run asks of its client's approvals: to answer one."""

    async def respond(self, approval_id: str, decision: str, *, kind: str = "exec") -> None:
        """Answer an approval."""
        ...


class Run:
    """One run; created by :meth:`Sessions.send`."""

    def __init__(
        self,
        sessions: RunSessions,
        approvals: RunApprovals,
        run_id: str,
        session_key: str,
        created_ms: int,
    ) -> None:
        self._sessions = sessions
        self._approvals = approvals
        self.run_id = run_id
        self.session_key = session_key
        self._events: list[Event] = []
        self._ids: set[str] = set()
        self._changed = asyncio.Event()
        self._approval_handlers: list[ApprovalHandler] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self.started_at: int | None = None
        self.ended_at: int | None = None
        self.created_at = created_ms
        self.status: RunStatus | Literal["running"] = "running"
        #: The run a steered message was taken into (it ends with that one).
        self.absorbed_by: str | None = None
        self._add(
            Event(
                run_event_id(run_id, 0, "run.created"),
                created_ms,
                "run.created",
                {},
                run_id,
                session_key,
            )
        )

    # ------------------------------------------------------------------ feeding
    @property
    def done(self) -> bool:
        """Whether a terminal event arrived."""
        return self.status != "running"

    @property
    def has_own_events(self) -> bool:
        """Whether the gateway sent anything for this run (a steered message taken into
        another run gets nothing of its own)."""
        return any(e.type != "run.created" for e in self._events)

    def _add(self, event: Event) -> bool:
        if event.id in self._ids or self.done:
            return False  # nothing follows a terminal event
        self._ids.add(event.id)
        self._events.append(event)
        if event.type == "run.started":
            self.started_at = event.data.get("startedAt") or event.ts
        if event.type in TERMINAL and not self.done:
            self.status = TERMINAL[event.type]  # type: ignore[assignment]
            self.ended_at = event.ts
        self._changed.set()
        return True

    def feed(self, event: Event) -> bool:
        """The run book's hook: add one of this run's events (duplicates are dropped) and
        start the approval handlers on an approval request. True when it was new."""
        added = self._add(event)
        if added and event.type == "approval.requested" and self._approval_handlers:
            self._spawn(self._approve(event))
        return added

    def synthesize(self, kind: str, ts: int, data: dict[str, Any]) -> Event | None:
        """An event the SDK adds after the gateway's last one (None when it ended)."""
        event = Event(
            run_event_id(self.run_id, _LAST, kind), ts, kind, data, self.run_id, self.session_key
        )
        return event if self._add(event) else None

    def end_with(self, other: Event) -> Event | None:
        """The run book's hook: a steered message's run ends as the run that took it in
        ended (``other`` is that run's terminal event; None when this run already ended)."""
        data = {**other.data, "absorbedBy": other.run_id}
        return self.synthesize(other.type, other.ts, data)

    def mark_interrupted(self) -> Event | None:
        """The gateway restarted since this run began and never finished it."""
        data = {"errorMessage": INTERRUPTED, "errorKind": "interrupted", "errorDetail": None}
        return self.synthesize("run.failed", now_ms(), data)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._tasks.discard)

    def reset_stream(self, reason: str, cumulative: str = "") -> None:
        """Tell consumers that events may have been missed (after a reconnect)."""
        n = len(self._events)
        self._add(
            Event(
                f"{self.run_id}:reset:{n:06d}",
                now_ms(),
                "stream.reset",
                {"reason": reason, "cumulative": cumulative},
                self.run_id,
                self.session_key,
            )
        )

    def finish_from_history(self, message: dict[str, Any]) -> list[Event]:
        """The run ended while we were away: synthesize its end from ``chat.history``
        (returns the events added)."""
        if self.done:
            return []  # the live end arrived while the history was on its way
        stop = message.get("stopReason")
        ts = int(message.get("timestamp") or now_ms())
        meta = message.get("__openclaw")
        key = message.get("idempotencyKey") or (
            meta.get("idempotencyKey") if isinstance(meta, dict) else None
        )
        if isinstance(key, str) and key.endswith(":terminal-error"):
            # A failed run's record (both gateways): the failure in words, not a reply.
            words = {"stopReason": stop, "replayed": True, "errorMessage": message_text(message)}
            failed = self.synthesize("run.failed", ts, words)
            return [failed] if failed is not None else []
        said = {"text": message_text(message), "message": message, "replayed": True}
        out = [self.synthesize("assistant.message", ts, said)]
        kind = {"aborted": "run.cancelled", "error": "run.failed"}.get(str(stop), "run.completed")
        data: dict[str, Any] = {"stopReason": stop, "replayed": True}
        if is_interruption(message):
            kind = "run.failed"
            data |= {"errorMessage": INTERRUPTED, "errorKind": "interrupted"}
        elif message.get("errorMessage"):
            data["errorMessage"] = message.get("errorMessage")
        out.append(self.synthesize(kind, ts, data))
        return [e for e in out if e is not None]

    # ------------------------------------------------------------------ consuming
    async def events(self, after: str | None = None) -> AsyncGenerator[Event, None]:
        """Every event of the run, from the start (or after the event with id ``after``),
        then live until the run ends. Ids never repeat; after a reconnect, missed events
        come from the gateway's history, or a ``stream.reset`` says they cannot."""
        index = 0
        if after is not None:
            positions = [i for i, e in enumerate(self._events) if e.id == after]
            index = positions[0] + 1 if positions else 0
            if not positions:
                # This reader only: the shared history stays as it is.
                yield Event(
                    f"{self.run_id}:reset:cursor",
                    now_ms(),
                    "stream.reset",
                    {"reason": f"unknown cursor {after!r}: replaying from the start"},
                    self.run_id,
                    self.session_key,
                )
        while True:
            while index < len(self._events):
                event = self._events[index]
                index += 1
                yield event
            if self.done:
                return
            self._changed.clear()
            await self._changed.wait()

    async def wait(self, timeout: float | None = None) -> RunResult:
        """The result; ``status: accepted`` when ``timeout`` passes first (the run goes on)."""
        try:
            async with asyncio.timeout(timeout):
                while not self.done:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            return self._result("accepted", [])
        messages, _ = await self._sessions.run_history(self.session_key, self.run_id)
        return self._result(self.status, messages)  # type: ignore[arg-type]

    def _result(self, status: RunStatus, messages: list[dict[str, Any]]) -> RunResult:
        text = ""
        error = None
        for event in self._events:
            if event.type == "assistant.message":
                text = str(event.data.get("text") or "")
            elif event.type in ("run.failed", "run.timed_out"):
                error = event.data.get("errorMessage")
        if not text:
            text = "".join(
                str(e.data.get("text", "")) for e in self._events if e.type == "assistant.delta"
            )
        inputs = outputs = 0
        cost = 0.0
        for message in messages:
            raw_usage = message.get("usage")
            usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
            inputs += int(usage.get("input") or 0)
            outputs += int(usage.get("output") or 0)
            cost += float((usage.get("cost") or {}).get("total") or 0)
        return RunResult(
            self.run_id,
            status,
            self.session_key,
            self.started_at,
            self.ended_at,
            text,
            messages,
            Usage(inputs, outputs, inputs + outputs, cost if messages else None),
            error,
        )

    async def cancel(self) -> bool:
        """Abort the run (``chat.abort``); True when the gateway stopped something."""
        result = await self._sessions.abort(self.session_key, self.run_id)
        return bool(result.get("aborted"))

    # ------------------------------------------------------------------ approvals
    def on_approval(self, handler: ApprovalHandler) -> None:
        """Decide approvals requested during this run (see :data:`ApprovalHandler`)."""
        self._approval_handlers.append(handler)
        for event in self._events:
            if event.type == "approval.requested":
                self._spawn(self._approve(event))

    async def _approve(self, event: Event) -> None:
        approval = Approval.from_event(event, self.run_id)
        for handler in list(self._approval_handlers):
            try:
                decision = await handler(approval)
            except Exception:
                log.exception("approval handler failed; leaving %s to a human", approval.id)
                return
            if decision is not None:
                await self._approvals.respond(approval.id, decision, kind=approval.kind)
                return
