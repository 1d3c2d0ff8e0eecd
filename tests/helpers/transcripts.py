"""Chat sessions as a transcript *and* the gateway frames that produced it, in the event shapes
of both gateways, for the tests that prove the live stream and ``chat.history`` agree.

A :class:`RunPlan` says what one run did: its user message, its assistant messages (text,
tool calls with results), the messages steered into it, and how it ended (``stop``,
``aborted`` by the user, ``error``, or ``interrupted``: the gateway was killed and, once
restarted, recorded what the checkpoint of the cut reply held). :func:`session_steps` turns a
list of plans into the steps a client lives through, in order:

* ``("send", run_id, text)`` / ``("steer", run_id, text)`` / ``("stop", run_id)``: what the
  window does (send a message, steer a queued one in, press Stop);
* ``("frame", event, payload)``: one ``chat`` / ``agent`` event, shaped like the real
  gateway 2026.9.6's (``tests/fixtures/gateway/real-chat-trace.json``: per-run ``seq`` shared
  by both families, ``agent`` ``assistant`` items numbered ``<stream>:<n>``, ``chat`` deltas
  carrying the whole run's text, its messages joined by a blank line) or the bundled
  gateway's (``gateway/chat/events.py``: items ``<runId>:<n>``, ``chat`` deltas of the current
  message only, the final of the last message);
* ``("persist", message)``: the gateway stores one transcript message (what a
  ``chat.history`` asked for from then on returns);
* ``("crash", run_id)``: the gateway is killed here (nothing more of the run is sent).

Timestamps and ids are fixed per plan, so the same plans give the same steps.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "INTERRUPTED_ERROR",
    "SESSION",
    "CallPlan",
    "Ending",
    "MessagePlan",
    "RunPlan",
    "Step",
    "session_steps",
    "transcript",
]

Flavor = Literal["real", "bundled"]
Ending = Literal["stop", "aborted", "error", "interrupted"]
Step = tuple[Any, ...]
SESSION = "agent:main:main"
#: What the bundled gateway records for a reply cut by ``kill -9`` (``gateway/chat/checkpoint.py``).
INTERRUPTED_ERROR = "the gateway stopped before this reply finished (interrupted)"


@dataclass(frozen=True)
class CallPlan:
    """One tool call and its result."""

    call_id: str
    name: str
    args: dict[str, Any]
    result: str
    is_error: bool = False


@dataclass(frozen=True)
class MessagePlan:
    """One assistant message: its text (streamed in ``chunks``) and the tools it calls."""

    chunks: tuple[str, ...] = ()
    calls: tuple[CallPlan, ...] = ()

    @property
    def text(self) -> str:
        return "".join(self.chunks)


@dataclass(frozen=True)
class RunPlan:
    """One run (see the module docstring). ``steers[j]`` are messages taken in before
    assistant message ``j``; with an ending other than ``stop`` the last message is the one
    cut (its text as far as it was streamed, no calls); ``checkpoint`` is how much of that
    text the gateway had saved when it was killed."""

    run_id: str
    text: str
    messages: tuple[MessagePlan, ...]
    ending: Ending = "stop"
    error: str = "the model failed"
    steers: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    checkpoint: int = 1


def _user(run_id: str, text: str, ts: int) -> dict[str, Any]:
    key = f"{run_id}:user"
    return {
        "role": "user",
        "content": text,
        "timestamp": ts,
        "idempotencyKey": key,
        "__openclaw": {"id": f"m-{key}", "idempotencyKey": key},
    }


def _assistant(
    run_id: str, n: int, text: str, calls: tuple[CallPlan, ...], ts: int, **extra: Any
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [
        {"type": "toolCall", "id": c.call_id, "name": c.name, "arguments": c.args} for c in calls
    ]
    message = {
        "role": "assistant",
        "content": content,
        "api": "openai-completions",
        "provider": "fake",
        "model": "fake-model",
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": ts,
        "__openclaw": {"runId": run_id, "id": f"m-{run_id}-{n}"},
    }
    message.update(extra)
    return message


def _tool_result(run_id: str, call: CallPlan, ts: int) -> dict[str, Any]:
    return {
        "role": "toolResult",
        "toolCallId": call.call_id,
        "toolName": call.name,
        "content": [{"type": "text", "text": call.result}],
        "isError": call.is_error,
        "timestamp": ts,
        "__openclaw": {"runId": run_id, "id": f"m-{run_id}-{call.call_id}"},
    }


class _Run:
    """Frames of one run, with its per-run ``seq``."""

    def __init__(self, plan: RunPlan, flavor: Flavor, ts: int) -> None:
        self.plan, self.flavor, self.ts = plan, flavor, ts
        self.seq = 0
        self.stream = plan.run_id if flavor == "bundled" else f"stream-{plan.run_id[:8]}"
        self.said: list[str] = []  # the texts of the run's messages so far (real chat deltas)

    def payload(self, **fields: Any) -> dict[str, Any]:
        return {"runId": self.plan.run_id, "sessionKey": SESSION, "agentId": "main", **fields}

    def agent(self, stream: str, data: dict[str, Any], seq: int | None = None) -> Step:
        if seq is None:
            self.seq += 1
            seq = self.seq
        body = self.payload(stream=stream, data=data, seq=seq, ts=self.ts + seq)
        return ("frame", "agent", body)

    def chat(self, state: str, seq: int | None = None, **fields: Any) -> Step:
        if seq is None:
            self.seq += 1
            seq = self.seq
        return ("frame", "chat", self.payload(seq=seq, state=state, **fields))

    def whole(self, current: str) -> str:
        return "\n\n".join(t for t in [*self.said, current] if t)

    def text(self, n: int, message: MessagePlan) -> Iterator[Step]:
        cumulative = ""
        for piece in message.chunks:
            cumulative += piece
            self.seq += 1
            item = f"{self.stream}:{n}"
            yield self.agent(
                "assistant", {"text": cumulative, "delta": piece, "itemId": item}, self.seq
            )
            shown = cumulative if self.flavor == "bundled" else self.whole(cumulative)
            body = {"role": "assistant", "content": [{"type": "text", "text": shown}]}
            yield self.chat("delta", self.seq, deltaText=piece, message=body)
        if message.text:
            self.said.append(message.text)

    def tool(self, call: CallPlan) -> Iterator[Step]:
        item = {"itemId": f"tool:{call.call_id}", "toolCallId": call.call_id, "name": call.name}
        yield self.agent("item", {**item, "kind": "tool", "phase": "start", "status": "running"})
        yield self.agent(
            "tool",
            {"phase": "start", "name": call.name, "toolCallId": call.call_id, "args": call.args},
        )
        yield ("persist", _tool_result(self.plan.run_id, call, self.ts))
        result = {"content": [{"type": "text", "text": call.result}]}
        yield self.agent(
            "tool",
            {
                "phase": "result",
                "name": call.name,
                "toolCallId": call.call_id,
                "isError": call.is_error,
                "result": result,
            },
        )
        status = "failed" if call.is_error else "completed"
        yield self.agent("item", {**item, "kind": "tool", "phase": "end", "status": status})


def _run_steps(plan: RunPlan, flavor: Flavor, ts: int) -> Iterator[Step]:
    run = _Run(plan, flavor, ts)
    rid = plan.run_id
    yield ("send", rid, plan.text)
    yield ("persist", _user(rid, plan.text, ts))
    yield run.chat("status", phase="preparing_workspace")
    yield run.agent("lifecycle", {"phase": "start", "startedAt": ts})
    last = len(plan.messages) - 1
    for j, message in enumerate(plan.messages):
        n = j + 1
        for steer_id, steer_text in plan.steers.get(j, ()):
            yield ("steer", steer_id, steer_text)
            yield ("persist", _user(steer_id, steer_text, ts))
        cut = j == last and plan.ending != "stop"
        if cut and plan.ending == "aborted":
            yield from run.text(n, message)
            yield ("stop", rid)
            if message.text:
                yield ("persist", _assistant(rid, n, message.text, (), ts, stopReason="aborted"))
            yield run.agent("lifecycle", {"phase": "end", "stopReason": "aborted", "aborted": True})
            partial = {"role": "assistant", "content": [{"type": "text", "text": message.text}]}
            extra: dict[str, Any] = {"message": partial} if message.text else {}
            yield run.chat("aborted", stopReason="aborted", **extra)
            return
        if cut and plan.ending == "error":
            yield from run.text(n, message)
            failed = _assistant(
                rid, n, message.text, (), ts, stopReason="error", errorMessage=plan.error
            )
            yield ("persist", failed)
            yield run.agent("lifecycle", {"phase": "error", "error": plan.error})
            yield run.chat("error", errorMessage=plan.error, errorKind="unknown")
            return
        if cut:  # interrupted: killed while streaming, the checkpoint recorded on restart
            yield from run.text(n, message)
            yield ("crash", rid)
            saved = message.text[: max(plan.checkpoint, 1)]
            if not saved:
                return  # nothing streamed, no checkpoint: the history never says
            marker = _assistant(
                rid,
                n,
                saved,
                (),
                ts,
                stopReason="aborted",
                errorMessage=INTERRUPTED_ERROR,
                openclawAbort={"aborted": True, "origin": "interrupted", "runId": rid},
            )
            yield ("persist", marker)
            return
        yield from run.text(n, message)
        yield ("persist", _assistant(rid, n, message.text, message.calls, ts))
        for call in message.calls:
            yield from run.tool(call)
    yield run.agent("lifecycle", {"phase": "end", "stopReason": "stop", "aborted": False})
    final = run.whole("") if flavor == "real" else plan.messages[-1].text
    body = {"role": "assistant", "content": [{"type": "text", "text": final}]}
    yield run.chat("final", stopReason="stop", message=body)


def session_steps(plans: list[RunPlan], flavor: Flavor) -> list[Step]:
    """Every step of the runs, one after the other."""
    steps: list[Step] = []
    for i, plan in enumerate(plans):
        steps += _run_steps(plan, flavor, 1_796_000_000_000 + i * 10_000)
    return steps


def transcript(steps: list[Step], upto: int | None = None) -> list[dict[str, Any]]:
    """The messages stored by the steps before ``upto`` (all of them by default)."""
    return [s[1] for s in steps[:upto] if s[0] == "persist"]
