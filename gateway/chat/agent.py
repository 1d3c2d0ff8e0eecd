"""One agent run: model turns with tool calls until the model stops, streamed as events and
recorded in the transcript (``assistant`` / ``toolResult`` messages as in the reference)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.chat.compaction import build_context, maybe_compact
from gateway.chat.events import RunEvents, now_ms
from gateway.chat.failure_words import TERMINAL_ERROR, FailureWords, failure_words
from gateway.chat.providers.base import (
    CompletionRequest,
    Done,
    ModelRef,
    ProviderError,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from gateway.chat.tools import AgentTools, tool_title
from gateway.chat.transcript import Transcript

__all__ = ["ERROR_KINDS", "MAX_TOOL_ROUNDS", "ModelStream", "RunResult", "RunSpec", "run_agent"]

log = logging.getLogger("gateway.chat")

#: Model turns per run at most (a model stuck calling tools is stopped).
MAX_TOOL_ROUNDS = 24
#: ProviderError kind -> the chat event's ``errorKind``.
ERROR_KINDS = {
    "rate_limit": "rate_limit",
    "context_length": "context_length",
    "timeout": "timeout",
    "refusal": "refusal",
}


class ModelStream(Protocol):
    """The provider pool as the agent uses it."""

    def stream(self, request: CompletionRequest) -> AsyncIterator[StreamEvent]:
        """One model turn."""
        ...


@dataclass
class RunSpec:
    """Everything one run needs."""

    events: RunEvents
    transcript: Transcript
    model: ModelRef
    pool: ModelStream
    tools: AgentTools
    system_prompt: Callable[[], str]
    thinking: str | None = None
    #: Messages sent with ``queueMode: "interrupt"`` while this run is going (steer).
    steer: list[dict[str, Any]] = field(default_factory=list)
    on_compacted: Callable[[dict[str, Any]], None] | None = None


@dataclass
class RunResult:
    """How a run ended."""

    status: str  # completed | failed | aborted
    stop_reason: str
    text: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None


async def _append(transcript: Transcript, message: dict[str, Any]) -> dict[str, Any]:
    return await asyncio.to_thread(transcript.append, message)


def _usage_block(usage: Usage | None) -> dict[str, Any]:
    u = usage or Usage()
    return {
        "input": u.input_tokens,
        "output": u.output_tokens,
        "totalTokens": u.input_tokens + u.output_tokens,
        "cacheRead": u.cache_read_tokens,
        "cacheWrite": u.cache_write_tokens,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


async def run_agent(spec: RunSpec) -> RunResult:
    """Run model turns until the model stops; cancellation (abort) keeps the partial reply."""
    ev, model = spec.events, spec.model
    started = now_ms()
    result = RunResult("completed", "stop")
    ev.status("preparing_workspace")
    ev.status("preparing_context")
    ev.lifecycle("start", startedAt=started)
    ev.status("starting_model")
    partial = ""
    try:
        for _round in range(MAX_TOOL_ROUNDS):
            await _take_in(spec)
            path = await asyncio.to_thread(spec.transcript.visible_path)
            compacted = await maybe_compact(spec.pool, model, spec.transcript, path)
            if compacted is not None:
                path = await asyncio.to_thread(spec.transcript.visible_path)
                if spec.on_compacted is not None:
                    spec.on_compacted(compacted)
            request = CompletionRequest(
                model=model,
                system=spec.system_prompt(),
                messages=build_context(path),
                tools=spec.tools.specs(),
                thinking=spec.thinking,
            )
            ev.model_turn(model.provider, model.model)
            partial = ""
            thought = ""
            calls: list[ToolCall] = []
            usage: Usage | None = None
            stop, response_id = "stop", None
            async for item in spec.pool.stream(request):
                if isinstance(item, TextDelta):
                    partial += item.text
                    ev.delta(item.text)
                elif isinstance(item, ThinkingDelta):
                    thought += item.text
                    ev.thinking(item.text)
                elif isinstance(item, ToolCall):
                    calls.append(item)
                elif isinstance(item, Usage):
                    usage = item
                elif isinstance(item, Done):
                    stop, response_id = item.stop_reason, item.response_id
            stop = "toolUse" if calls else stop
            content: list[dict[str, Any]] = (
                [{"type": "thinking", "thinking": thought}] if thought else []
            )
            content += [{"type": "text", "text": partial}] if partial else []
            content += [
                {"type": "toolCall", "id": c.id, "name": c.name, "arguments": c.arguments or {}}
                for c in calls
            ]
            assistant = {
                "role": "assistant",
                "content": content,
                "api": model.api,
                "provider": model.provider,
                "model": model.model,
                "usage": _usage_block(usage),
                "stopReason": stop,
                "timestamp": now_ms(),
                "responseId": response_id,
                "__openclaw": {"runId": ev.run_id},
            }
            await _append(spec.transcript, assistant)
            if usage is not None:
                result.input_tokens += usage.input_tokens
                result.output_tokens += usage.output_tokens
                ev.usage(usage.output_tokens)
            ev.flush()
            result.text, result.stop_reason = partial, stop
            partial = ""
            if not calls and not spec.steer:
                break
            for call in calls:
                await _tool_call(spec, call)
        else:
            result.stop_reason = "max_turns"
        ended = now_ms()
        common = {"stopReason": result.stop_reason, "aborted": False}
        ev.lifecycle("finishing", **common, livenessState="working", endedAt=ended)
        ev.lifecycle("end", **common, endedAt=ended, startedAt=started)
        ev.final(ev.assistant_message(result.text), result.stop_reason, None)
        return result
    except asyncio.CancelledError:
        await asyncio.shield(_record_abort(spec, partial, started))
        raise
    except ProviderError as exc:
        log.warning("run %s failed: %s (%s)", ev.run_id, exc.message, exc.kind)
        words = failure_words(exc, model.provider, model.model)
        await _append(spec.transcript, _failure_record(spec, partial, words))
        detail = {"provider": exc.provider or model.provider, "model": exc.model or model.model}
        if words.reason:
            detail["failoverReason"] = words.reason
        if exc.http_status is not None:
            detail["httpStatus"] = str(exc.http_status)
        ended = now_ms()
        ev.lifecycle("error", error=words.live, endedAt=ended, startedAt=started)
        ev.error(words.live, ERROR_KINDS.get(exc.kind, "unknown"), detail)
        return RunResult("failed", "error", partial, error=words.live)


async def _take_in(spec: RunSpec) -> None:
    """Record the messages steered in so far, before the next model turn (each ends its own
    run). One arriving while the last turn is recorded is seen after it: the run goes on
    with a turn for it, as the real gateway does; one left when the run ends otherwise
    (stopped, failed) is not lost: the service starts it as a turn of its own."""
    while spec.steer:
        message = spec.steer.pop(0)  # taken: a stop from here on does not start it again
        meta = message.get("__openclaw")
        # Which run took it in, as the real gateway records it (a history then shows that
        # run going on to answer it).
        message["__openclaw"] = {
            **(meta if isinstance(meta, dict) else {}),
            "steerTargetRunId": spec.events.run_id,
        }
        key = str(message.get("idempotencyKey") or "")
        try:
            await _append(spec.transcript, message)
        finally:
            if key.endswith(":user"):
                spec.events.taken_in(key[: -len(":user")])


def _partial_message(spec: RunSpec, text: str, stop: str) -> dict[str, Any]:
    model = spec.model
    return {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "api": model.api,
        "provider": model.provider,
        "model": model.model,
        "usage": _usage_block(None),
        "stopReason": stop,
        "timestamp": now_ms(),
        "__openclaw": {"runId": spec.events.run_id},
    }


def _failure_record(spec: RunSpec, partial: str, words: FailureWords) -> dict[str, Any]:
    """How a failed run is kept in the transcript. With nothing streamed, as the reference
    keeps it: an assistant message of key ``<runId>:terminal-error`` whose text is the
    failure in words (``chat.history`` shows it as the run's error after a restart; the
    model never sees it again, see :func:`gateway.chat.compaction.build_context`). With a
    partial reply, that reply with the failure as its ``errorMessage``."""
    if partial:
        return {**_partial_message(spec, partial, "error"), "errorMessage": words.stored}
    key = f"{spec.events.run_id}:{TERMINAL_ERROR}"
    record = _partial_message(spec, words.stored, "error")
    return {
        **record,
        "idempotencyKey": key,
        "__openclaw": {**record["__openclaw"], "idempotencyKey": key},
    }


async def _record_abort(spec: RunSpec, partial: str, started: int) -> None:
    """Keep what was streamed before the abort and tell the clients."""
    ev = spec.events
    if partial:
        await _append(spec.transcript, _partial_message(spec, partial, "aborted"))
    ended = now_ms()
    ev.lifecycle("end", stopReason="aborted", aborted=True, endedAt=ended, startedAt=started)
    ev.aborted(ev.assistant_message(partial) if partial else None)


async def _tool_call(spec: RunSpec, call: ToolCall) -> None:
    ev = spec.events
    started = now_ms()
    args = call.arguments if call.arguments is not None else {}
    title = tool_title(call.name, args)
    ev.tool_start(call.id, call.name, args, title, started)
    began = time.monotonic()
    if call.error is not None:
        outcome_content = [{"type": "text", "text": f"tool call rejected: {call.error}"}]
        is_error = True
    else:

        def update(partial: dict[str, Any]) -> None:
            ev.tool_update(call.id, call.name, partial, title, started)

        outcome = await spec.tools.run(call.name, args, update)
        outcome_content, is_error = outcome.content, outcome.is_error
    log.info(
        "tool %s %s in %.0f ms",
        call.name,
        "failed" if is_error else "ok",
        (time.monotonic() - began) * 1000,
    )
    await _append(
        spec.transcript,
        {
            "role": "toolResult",
            "toolCallId": call.id,
            "toolName": call.name,
            "content": outcome_content,
            "isError": is_error,
            "timestamp": now_ms(),
            "__openclaw": {"runId": ev.run_id},
        },
    )
    visible = [c for c in outcome_content if c.get("type") == "text"]
    ev.tool_end(
        call.id,
        call.name,
        {"content": visible},
        is_error=is_error,
        title=title,
        started_at=started,
    )
