"""The ``chat`` and ``agent`` events of one run, shaped like the real gateway's.

One per-run ``seq`` is shared by both event families (so chat seqs have gaps, as on the real
gateway). Assistant text goes out at once as ``agent`` ``assistant`` events and coalesced as
``chat`` ``delta`` events, at most one every :data:`DELTA_INTERVAL_S`, so a fast model cannot
flood clients. Tool streams (``item``, ``tool``) go only to clients with the ``tool-events`` cap.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from gateway.chat.checkpoint import ReplyCheckpoint
from gateway.hub import now_ms
from openclaw_desktop.protocol import EventName

__all__ = ["DELTA_INTERVAL_S", "Broadcast", "RunEvents", "now_ms"]

#: How often a coalesced ``chat`` delta goes out at most (the real gateway: about 70 ms).
DELTA_INTERVAL_S = 0.07

#: ``broadcast(event, payload, tool_events_only)``.
Broadcast = Callable[[EventName, dict[str, Any], bool], None]


class RunEvents:
    """Emits one run's events."""

    def __init__(
        self,
        broadcast: Broadcast,
        *,
        run_id: str,
        session_key: str,
        agent_id: str,
        session_id: str,
    ) -> None:
        self._broadcast = broadcast
        self.run_id = run_id
        self.session_key = session_key
        self.agent_id = agent_id
        self.session_id = session_id
        self.seq = 0
        self.text = ""
        self.thinking_text = ""
        self.turn = 0
        self._pending = ""
        self._pending_seq = 0
        self._flush: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        #: Where the streaming text is checkpointed (a reply cut by a crash leaves a trace).
        self.checkpoint: ReplyCheckpoint | None = None

    # ------------------------------------------------------------------ plumbing
    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def _chat(self, seq: int, **fields: Any) -> None:
        payload = {
            "runId": self.run_id,
            "sessionKey": self.session_key,
            "agentId": self.agent_id,
            "seq": seq,
            **fields,
        }
        self._broadcast(EventName.CHAT, payload, False)

    def _agent(
        self, stream: str, data: dict[str, Any], *, seq: int | None = None, tools: bool = False
    ) -> None:
        payload: dict[str, Any] = {
            "runId": self.run_id,
            "stream": stream,
            "data": data,
            "sessionKey": self.session_key,
            "sessionId": self.session_id,
            "agentId": self.agent_id,
            "seq": self._next() if seq is None else seq,
            "ts": now_ms(),
            "isHeartbeat": False,
        }
        self._broadcast(EventName.AGENT, payload, tools)

    def assistant_message(self, text: str | None = None) -> dict[str, Any]:
        """The cumulative assistant snapshot carried by deltas and the final event."""
        body = self.text if text is None else text
        return {
            "role": "assistant",
            "content": [{"type": "text", "text": body}],
            "timestamp": now_ms(),
        }

    # ------------------------------------------------------------------ phases
    def status(self, phase: str) -> None:
        """A startup phase (``preparing_workspace``, ``preparing_context``, ``starting_model``)."""
        seq = self._next()
        self._chat(seq, state="status", phase=phase)
        self._agent("run_status", {"phase": phase}, seq=seq)

    def lifecycle(self, phase: str, **data: Any) -> None:
        """``agent`` lifecycle: start, model, finishing, end, error."""
        self._agent("lifecycle", {"phase": phase, **data})

    def model_turn(self, provider: str, model: str) -> None:
        """A new model call starts: a new assistant item."""
        self.turn += 1
        self.text = ""
        self.thinking_text = ""
        if self.checkpoint is not None:
            self.checkpoint.turn(provider, model)
        self.lifecycle("model", provider=provider, model=model)

    def usage(self, output_tokens: int) -> None:
        """Token usage of the last model call."""
        self._agent("usage", {"outputTokens": output_tokens})

    # ------------------------------------------------------------------ text
    def delta(self, text: str) -> None:
        """Assistant text as it streams."""
        if not text:
            return
        self.text += text
        if self.checkpoint is not None:
            self.checkpoint.update(self.text, self.thinking_text)
        seq = self._next()
        item = f"{self.run_id}:{self.turn}"
        self._agent("assistant", {"text": self.text, "delta": text, "itemId": item}, seq=seq)
        self._pending += text
        self._pending_seq = seq
        loop = asyncio.get_running_loop()
        due = self._last_flush + DELTA_INTERVAL_S - loop.time()
        if due <= 0:
            self.flush()
        elif self._flush is None:
            self._flush = loop.call_later(due, self.flush)

    def flush(self) -> None:
        """Send the coalesced chat delta now (also before any terminal event)."""
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if not self._pending:
            return
        with contextlib.suppress(RuntimeError):
            self._last_flush = asyncio.get_running_loop().time()
        pending, self._pending = self._pending, ""
        self._chat(
            self._pending_seq, state="delta", deltaText=pending, message=self.assistant_message()
        )

    def thinking(self, text: str) -> None:
        """Reasoning text as it streams (``agent`` ``thinking``: cumulative ``text`` and the
        ``delta``, as the real gateway sends it)."""
        if not text:
            return
        self.thinking_text += text
        if self.checkpoint is not None:
            self.checkpoint.update(self.text, self.thinking_text)
        self._agent("thinking", {"text": self.thinking_text, "delta": text})

    # ------------------------------------------------------------------ tools
    def tool_start(self, call_id: str, name: str, args: Any, title: str, started_at: int) -> None:
        """A tool call begins (tool-events clients only)."""
        item = {
            "itemId": f"tool:{call_id}",
            "toolCallId": call_id,
            "name": name,
            "kind": "tool",
            "phase": "start",
            "title": title,
            "status": "running",
            "commandBearing": False,
            "startedAt": started_at,
        }
        self._agent("item", item, tools=True)
        self._agent(
            "tool",
            {"phase": "start", "name": name, "toolCallId": call_id, "args": args},
            tools=True,
        )

    def tool_update(
        self, call_id: str, name: str, partial: dict[str, Any], title: str, started_at: int
    ) -> None:
        """A running tool call's partial result (a node command's output so far), as the
        real gateway's ``tool`` ``update`` phase (tool-events clients only)."""
        self._agent(
            "tool",
            {"phase": "update", "name": name, "toolCallId": call_id, "partialResult": partial},
            tools=True,
        )
        item = {
            "itemId": f"tool:{call_id}",
            "toolCallId": call_id,
            "name": name,
            "kind": "tool",
            "phase": "update",
            "title": title,
            "status": "running",
            "commandBearing": False,
            "startedAt": started_at,
        }
        self._agent("item", item, tools=True)

    def tool_end(
        self,
        call_id: str,
        name: str,
        result: dict[str, Any],
        *,
        is_error: bool,
        title: str,
        started_at: int,
    ) -> None:
        """A tool call ended (tool-events clients only)."""
        self._agent(
            "tool",
            {
                "phase": "result",
                "name": name,
                "toolCallId": call_id,
                "isError": is_error,
                "commandBearing": False,
                "result": result,
            },
            tools=True,
        )
        item = {
            "itemId": f"tool:{call_id}",
            "toolCallId": call_id,
            "name": name,
            "kind": "tool",
            "phase": "end",
            "title": title,
            "status": "failed" if is_error else "completed",
            "commandBearing": False,
            "startedAt": started_at,
            "endedAt": now_ms(),
        }
        self._agent("item", item, tools=True)

    # ------------------------------------------------------------------ terminal
    def final(self, message: dict[str, Any], stop_reason: str, usage: Any = None) -> None:
        """The run completed."""
        self.flush()
        fields: dict[str, Any] = {"state": "final", "stopReason": stop_reason, "message": message}
        if usage is not None:
            fields["usage"] = usage
        self._chat(self._next(), **fields)

    def taken_in(self, run_id: str) -> None:
        """A message steered into this run (its own run ``run_id``) was taken in: that run
        ends here, as the real gateway ends it (``chat`` ``final``, seq 1, no message)."""
        payload = {"runId": run_id, "sessionKey": self.session_key, "seq": 1, "state": "final"}
        self._broadcast(EventName.CHAT, payload, False)

    def aborted(self, message: dict[str, Any] | None, stop_reason: str = "aborted") -> None:
        """The run was stopped by the user."""
        self.flush()
        fields: dict[str, Any] = {"state": "aborted", "stopReason": stop_reason}
        if message is not None:
            fields["message"] = message
        self._chat(self._next(), **fields)

    def error(self, message: str, kind: str, detail: dict[str, Any] | None = None) -> None:
        """The run failed."""
        self.flush()
        fields: dict[str, Any] = {"state": "error", "errorMessage": message, "errorKind": kind}
        if detail:
            fields["errorDetail"] = detail
        self._chat(self._next(), **fields)
