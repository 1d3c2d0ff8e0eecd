"""``agents.list``, ``agent`` and ``agent.wait``: one agent turn on the chat engine, the way
``openclaw agent --message`` and SDK clients (``openclaw-node``'s ``chat()``) run one.

``agent`` answers twice, as the reference does: ``{status: "accepted"}`` at once (its run
streams the same ``agent`` and ``chat`` events as a ``chat.send`` run), then, when the run
ends, the result the CLI prints (``result.payloads[].text``). A re-sent idempotency key of a
finished run gets only the result again; ``agent.wait`` waits for a run started either way.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.events import now_ms
from gateway.chat.outcomes import RunOutcome
from gateway.chat.service import MessageTooLargeError
from gateway.errors import invalid_params, invalid_request
from gateway.methods.chat import ChatEngine, _attachments, _service, _too_large
from gateway.methods.table import CURRENT_REQUEST_ID, MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, READ, WRITE
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods import EmptyParams
from openclaw_desktop.protocol.methods.agent import AgentParams, AgentWaitParams

if TYPE_CHECKING:
    from gateway.chat.service import ChatService

__all__ = ["AgentServices", "agent_result", "table", "wait_result"]

table = MethodTable()
"""The methods this module declares."""


class AgentServices(ChatEngine, Protocol):
    """What ``agents.list``, ``agent`` and ``agent.wait`` use of the gateway: the chat
    engine (its runs and their outcomes)."""


#: ``/new`` and ``/reset`` through ``agent`` reset the session: admin (the reference's rule).
_RESET_COMMAND = re.compile(r"^/(new|reset)(?:\s+([\s\S]*))?$", re.IGNORECASE)
#: ``agent`` without ``timeout`` (seconds): the reference CLI's default.
DEFAULT_TIMEOUT_S = 600
#: ``agent.wait`` without ``timeoutMs``.
DEFAULT_WAIT_MS = 30_000


def agent_scope(params: Any) -> str:
    """admin for a session reset (``/new``, ``/reset``), else write."""
    message = params.get("message") if isinstance(params, dict) else None
    if isinstance(message, str) and _RESET_COMMAND.match(message):
        return ADMIN
    return WRITE


@table.method(Method.AGENTS_LIST, scope=READ, params=EmptyParams)
async def agents_list(gw: AgentServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``agents.list``: the one agent this gateway runs, with its default model."""
    service = _service(gw)
    agent: dict[str, Any] = {"id": service.agent_id, "thinkingDefault": "off"}
    model = service.providers.model
    if model is not None:
        agent["model"] = {"primary": model.ref}
    return {
        "defaultId": service.agent_id,
        "ownership": "sole",
        "selectionRequired": False,
        "mainKey": "main",
        "scope": "per-sender",
        "agents": [agent],
    }


def _session_key(service: ChatService, p: dict[str, Any], run_id: str) -> tuple[str, bool]:
    """The canonical session of the run, and whether the caller named it (a run without
    ``sessionKey``, ``sessionId`` or ``agentId`` gets a session of its own, as on the
    reference: ``agent:<id>:explicit:<runId>``)."""
    agent_id = service.agent_id
    raw = (p.get("sessionKey") or "").strip()
    session_id = (p.get("sessionId") or "").strip()
    if raw:
        key = raw
    elif session_id:
        key = f"agent:{agent_id}:explicit:{session_id}"
    elif "agentId" in p:
        key = f"agent:{agent_id}:main"
    else:
        key = f"agent:{agent_id}:explicit:{run_id}"
    try:
        return service.canonical(key), bool(raw or session_id) or "agentId" in p
    except ValueError as exc:
        raise invalid_request(f"invalid sessionKey: {exc}") from None


def _usage(outcome: RunOutcome) -> dict[str, Any]:
    total = outcome.input_tokens + outcome.output_tokens
    return {
        "input": outcome.input_tokens,
        "output": outcome.output_tokens,
        "cacheRead": 0,
        "cacheWrite": 0,
        "total": total,
    }


def _answer_status(outcome: RunOutcome) -> tuple[str, str]:
    """``(status, summary)`` of the final answer: ok/completed, error/failed, or, for a
    stopped run, timeout/aborted (the reference's words)."""
    if outcome.status == "completed":
        return "ok", "completed"
    if outcome.status == "aborted":
        return "timeout", "aborted"
    return "error", "failed"


def agent_result(outcome: RunOutcome) -> dict[str, Any]:
    """The final ``agent`` answer for a finished run."""
    status, summary = _answer_status(outcome)
    agent_meta: dict[str, Any] = {
        "sessionId": outcome.session_id,
        "sessionFile": outcome.session_key,
        "provider": outcome.provider,
        "model": outcome.model,
        "usage": _usage(outcome),
        "assistantTurns": outcome.model_calls,
    }
    meta: dict[str, Any] = {
        "durationMs": max(0, outcome.ended_at - outcome.started_at),
        "agentMeta": agent_meta,
        "aborted": outcome.status == "aborted",
        "finalAssistantVisibleText": outcome.text,
        "finalAssistantRawText": outcome.text,
        "livenessState": "working",
        "stopReason": outcome.stop_reason,
        "completion": {"stopReason": outcome.stop_reason, "finishReason": outcome.stop_reason},
    }
    if outcome.error:
        meta["error"] = {"message": outcome.error}
    payloads = [{"text": outcome.text, "mediaUrl": None}] if outcome.text else []
    answer: dict[str, Any] = {"runId": outcome.run_id, "status": status, "summary": summary}
    if status != "ok":
        answer["stopReason"] = outcome.stop_reason
    # No channel took the reply back to a source (there are none here): "missing".
    answer["result"] = {"payloads": payloads, "meta": meta, "sourceReplyDeliveryState": "missing"}
    return answer


def wait_result(outcome: RunOutcome, *, live: bool) -> dict[str, Any]:
    """The ``agent.wait`` answer for a finished run (``startedAt`` only when the wait saw
    the run going, as the reference)."""
    status, _summary = _answer_status(outcome)
    answer: dict[str, Any] = {"runId": outcome.run_id, "status": status}
    if live:
        answer["startedAt"] = outcome.started_at
    answer.update(
        {"endedAt": outcome.ended_at, "stopReason": outcome.stop_reason, "livenessState": "working"}
    )
    if outcome.error:
        answer["error"] = outcome.error
    if outcome.text:
        answer["terminalReply"] = {"disposition": "visible", "text": outcome.text}
    return answer


@table.method(Method.AGENT, scope=agent_scope, params=AgentParams)
async def agent(gw: AgentServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``agent {message, idempotencyKey, sessionKey?, agentId?, timeout?}``: runs one turn;
    answers ``accepted`` at once and the run's result when it ends."""
    service = _service(gw)
    if "agentId" in p and p["agentId"] != service.agent_id:
        raise invalid_params("agent", f'unknown agent id "{p["agentId"]}"')
    run_id = p["idempotencyKey"]
    finished = service.outcomes.get(run_id)
    if finished is not None:
        return agent_result(finished)
    key, named = _session_key(service, p, run_id)
    attachments = _attachments(p.get("attachments") or [])
    sender = {
        "transport": {"clients": [{"id": peer.client.get("id"), "mode": peer.client.get("mode")}]}
    }
    try:
        service.send(
            key,
            run_id,
            p["message"],
            attachments=attachments,
            thinking=p.get("thinking"),
            sender=sender,
        )
    except MessageTooLargeError as exc:
        raise _too_large(exc) from None
    accepted: dict[str, Any] = {"runId": run_id}
    if named:
        accepted["sessionKey"] = key
    accepted.update({"agentId": service.agent_id, "status": "accepted", "acceptedAt": now_ms()})
    request_id = CURRENT_REQUEST_ID.get()
    if request_id is not None:  # None only when called outside the dispatcher
        peer.respond(request_id, True, accepted)
    timeout_s = p.get("timeout") or DEFAULT_TIMEOUT_S
    outcome = await service.outcomes.wait(run_id, float(timeout_s))
    if outcome is None:  # over its time: stopped, as the reference stops it
        service.abort(key, run_id)
        outcome = await service.outcomes.wait(run_id, 10.0)
    if outcome is None:
        return {"runId": run_id, "status": "timeout", "summary": "aborted"}
    return agent_result(outcome)


@table.method(Method.AGENT_WAIT, scope=WRITE, params=AgentWaitParams)
async def agent_wait(gw: AgentServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``agent.wait {runId, timeoutMs?}``: the run's end, or ``timeout`` if it is still
    going (or unknown) when ``timeoutMs`` passes."""
    service = _service(gw)
    run_id = p["runId"]
    finished = service.outcomes.get(run_id)
    if finished is not None:
        return wait_result(finished, live=False)
    timeout_ms = p.get("timeoutMs", DEFAULT_WAIT_MS)
    outcome = await service.outcomes.wait(run_id, timeout_ms / 1000)
    if outcome is None:
        return {"runId": run_id, "status": "timeout"}
    return wait_result(outcome, live=True)
