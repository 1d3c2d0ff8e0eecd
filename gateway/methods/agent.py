"""``agents.list``, ``agent`` and ``agent.wait``: one agent turn on the chat engine, the way
``openclaw agent --message`` and SDK clients (``openclaw-node``'s ``chat()``) run one.

``agent`` answers twice, as the reference does: ``{status: "accepted"}`` at once (its run
streams the same ``agent`` and ``chat`` events as a ``chat.send`` run), then, when the run
ends, the result the CLI prints (``result.payloads[].text``). A re-sent idempotency key of a
finished run gets only the result again; ``agent.wait`` waits for a run started either way.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from gateway.chat.events import now_ms
from gateway.chat.outcomes import RunOutcome
from gateway.chat.params import Field, check
from gateway.chat.service import MessageTooLargeError
from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.methods.chat import _attachments, _service, _too_large
from gateway.methods.closed import model_checked
from gateway.methods.table import CURRENT_REQUEST_ID, MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, READ, WRITE
from openclaw_desktop.protocol.methods import EmptyParams

if TYPE_CHECKING:
    from gateway.app import GatewayApp
    from gateway.chat.service import ChatService

__all__ = ["agent_result", "table", "wait_result"]

table = MethodTable()
"""The methods this module declares."""

#: ``/new`` and ``/reset`` through ``agent`` reset the session: admin (the reference's rule).
_RESET_COMMAND = re.compile(r"^/(new|reset)(?:\s+([\s\S]*))?$", re.IGNORECASE)
_FEWER = re.compile(r"must NOT have fewer than (\d+) characters?")
#: ``agent`` without ``timeout`` (seconds): the reference CLI's default.
DEFAULT_TIMEOUT_S = 600
#: ``agent.wait`` without ``timeoutMs``.
DEFAULT_WAIT_MS = 30_000
_NON_EMPTY = Field("string", min_length=1)
_AGENT_FIELDS = {
    "message": Field("string", required=True, min_length=1),
    "agentId": _NON_EMPTY,
    "sessionId": Field("string"),
    "sessionKey": Field("string"),
    "thinking": Field("string"),
    "deliver": Field("boolean"),
    "attachments": Field("array"),
    "timeout": Field("integer", minimum=0),
    "idempotencyKey": Field("string", required=True, min_length=1),
    "label": Field("string", max_length=512),
    # Checked as the reference checks them, but not acted on (one model pool here).
    "provider": Field("string"),
    "model": Field("string"),
}
#: Accepted (the reference's closed schema has them) but not acted on here: there are no
#: channels to deliver to, one model pool, no per-run workspace or prompt modes.
_AGENT_IGNORED = (
    "to",
    "replyTo",
    "expectedExistingSessionId",
    "channel",
    "replyChannel",
    "accountId",
    "replyAccountId",
    "threadId",
    "groupId",
    "groupChannel",
    "groupSpace",
    "bestEffortDeliver",
    "lane",
    "cwd",
    "cleanupBundleMcpOnRunEnd",
    "modelRun",
    "promptMode",
    "extraSystemPrompt",
    "bootstrapContextMode",
    "bootstrapContextRunKind",
    "acpTurnSource",
    "internalRuntimeHandoffId",
    "internalExecutionIdentityRetry",
    "internalExecutionIdentityRecoveryAttempt",
    "execApprovalFollowupExpectedSessionId",
    "internalEvents",
    "inputProvenance",
    "suppressPromptPersistence",
    "sessionEffects",
    "sourceReplyDeliveryMode",
    "disableMessageTool",
    "swarmCollector",
    "swarmOutputSchema",
    "forceRestartSafeTools",
    "forceCodeModeTools",
    "voiceWakeTrigger",
)


def agent_scope(params: Any) -> str:
    """admin for a session reset (``/new``, ``/reset``), else write."""
    message = params.get("message") if isinstance(params, dict) else None
    if isinstance(message, str) and _RESET_COMMAND.match(message):
        return ADMIN
    return WRITE


def _agent_params(params: Any) -> dict[str, Any]:
    try:
        return check("agent", params, _AGENT_FIELDS, ignored=_AGENT_IGNORED)
    except MethodError as exc:
        # This schema's validator words a too-short string its own way (lower case, and
        # always "characters": ``at /message: must not have fewer than 1 characters``).
        message = _FEWER.sub(r"must not have fewer than \1 characters", exc.shape["message"])
        raise MethodError({**exc.shape, "message": message}) from None


@table.method("agents.list", scope=READ)
async def agents_list(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``agents.list``: the one agent this gateway runs, with its default model."""
    model_checked("agents.list", EmptyParams, params)
    service = _service(core)
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


@table.method("agent", scope=agent_scope)
async def agent(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``agent {message, idempotencyKey, sessionKey?, agentId?, timeout?}``: runs one turn;
    answers ``accepted`` at once and the run's result when it ends."""
    p = _agent_params(params)
    service = _service(core)
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


@table.method("agent.wait", scope=WRITE)
async def agent_wait(core: GatewayApp, peer: Peer, params: Any) -> Any:
    """``agent.wait {runId, timeoutMs?}``: the run's end, or ``timeout`` if it is still
    going (or unknown) when ``timeoutMs`` passes."""
    p = check(
        "agent.wait",
        params,
        {
            "runId": Field("string", required=True, min_length=1),
            "timeoutMs": Field("integer", minimum=0),
        },
    )
    service = _service(core)
    run_id = p["runId"]
    finished = service.outcomes.get(run_id)
    if finished is not None:
        return wait_result(finished, live=False)
    timeout_ms = p.get("timeoutMs", DEFAULT_WAIT_MS)
    outcome = await service.outcomes.wait(run_id, timeout_ms / 1000)
    if outcome is None:
        return {"runId": run_id, "status": "timeout"}
    return wait_result(outcome, live=True)
