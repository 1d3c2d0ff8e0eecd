"""The SDK's namespaces: sessions, models, nodes, pairing, approvals, agents, tools,
artifacts.

Every answer that has a result model (:data:`openclaw_desktop.protocol.results.RESULTS`) is
read through it (:func:`~openclaw_desktop.sdk.answers.parse_result`): one that does not fit
raises :class:`~openclaw_desktop.sdk.errors.InvalidResult`. The calls return the parsed
answer in its wire form (the dicts and rows the gateway sent, camelCase keys, unknown fields
kept), so code that reads ``row["sessionId"]`` works the same on both gateways.
``tools.*`` and ``artifacts.*`` have no result model (the bundled gateway does not serve
them): their answers are passed through as sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.protocol.base import WireModel
from openclaw_desktop.protocol.chat import ChatSendAck
from openclaw_desktop.protocol.enums import Method
from openclaw_desktop.protocol.methods import (
    ChatAbortParams,
    ChatHistoryParams,
    ChatSendParams,
    EmptyParams,
    SessionsCreateParams,
    SessionsDeleteParams,
    SessionsListParams,
    SessionsPatchParams,
    SessionsResetParams,
)
from openclaw_desktop.protocol.node import NodeInvokeResponse
from openclaw_desktop.protocol.results.agent import (
    AgentsListResult,
    ModelsAuthStatusResult,
    ModelsListResult,
)
from openclaw_desktop.protocol.results.chat import ChatAbortResult, ChatHistoryResult
from openclaw_desktop.protocol.results.devices import (
    DevicePairApproveResult,
    DevicePairRejectResult,
    DeviceSetupCodeResult,
)
from openclaw_desktop.protocol.results.nodes import (
    NodeDescribeResult,
    NodeListResult,
    NodePairResolveResult,
)
from openclaw_desktop.protocol.results.ops import ApprovalListResult
from openclaw_desktop.protocol.results.sessions import (
    SessionsCreateResult,
    SessionsDeleteResult,
    SessionsListResult,
    SessionsPatchResult,
)
from openclaw_desktop.protocol.session_keys import session_key_forms
from openclaw_desktop.sdk.answers import as_wire, parse_result, problems
from openclaw_desktop.sdk.errors import InvalidParams
from openclaw_desktop.sdk.events import Event, now_ms
from openclaw_desktop.sdk.normalize import EXEC_APPROVAL_REQUESTED, Normalizer
from openclaw_desktop.sdk.run import Approval, Run
from openclaw_desktop.sdk.runbook import RunBook

__all__ = [
    "Agents",
    "Approvals",
    "Artifacts",
    "Caller",
    "Models",
    "Nodes",
    "Pairing",
    "PairingKind",
    "Rows",
    "Sessions",
    "Tools",
]

#: A list of gateway objects (the namespaces' ``list`` methods shadow the builtin in class
#: scope, so annotations use this alias).
Rows = list[dict[str, Any]]

#: Who asks to pair: a device (an operator or a phone, ``device.pair.*``) or a node's
#: command surface (``node.pair.*``).
PairingKind = Literal["device", "node"]

log = logging.getLogger("openclaw.sdk")

#: ``chat.history`` ``sessionInfo.status`` of a session with no run going (both gateways).
_IDLE = frozenset({"done", "aborted", "failed", "error", "interrupted"})


class Caller(Protocol):
    """What the namespaces need of the client: one RPC (:meth:`OpenClaw.call
    <openclaw_desktop.sdk.client.OpenClaw.call>`)."""

    async def call(
        self, method: str, params: Any = None, *, timeout: float = 30, unadvertised: bool = False
    ) -> Any: ...


def _built(method: str, model: type[WireModel], fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` (wire names) checked against the method's params model, as sent: what was
    given, ``None`` included (``sessions.patch`` clears with it). A wrong field raises
    :class:`InvalidParams` before anything is sent."""
    try:
        params = model.model_validate(fields, strict=True)
    except ValidationError as exc:
        raise InvalidParams(method, problems(exc, "params")) from None
    return params.model_dump(by_alias=True, exclude_unset=True, mode="json")


class _Namespace:
    def __init__(self, client: Caller) -> None:
        self._client = client

    async def _call(self, method: str, params: Any = None, timeout: float = 30) -> Any:
        return await self._client.call(method, params, timeout=timeout)


class Sessions(_Namespace):
    """Chat sessions (``sessions.*``, ``chat.*``)."""

    def __init__(self, client: Caller, book: RunBook) -> None:
        super().__init__(client)
        self._book = book

    async def list(self, **filters: Any) -> Rows:
        """``sessions.list``: the session rows."""
        answer = await self._call(
            Method.SESSIONS_LIST, _built(Method.SESSIONS_LIST, SessionsListParams, filters)
        )
        result = parse_result(Method.SESSIONS_LIST, answer, SessionsListResult)
        return [as_wire(row) for row in result.sessions]

    async def get(self, key: str) -> dict[str, Any] | None:
        """One session's row by key (``main`` and ``agent:main:main`` alike), or None."""
        wanted = session_key_forms(key)
        for row in await self.list(limit=1000):
            if row.get("key") in wanted:
                return row
        return None

    async def create(self, key: str | None = None, **fields: Any) -> dict[str, Any]:
        """``sessions.create``; returns ``{key, sessionId, entry, ...}``."""
        params = dict(fields)
        if key is not None:
            params["key"] = key
        params = _built(Method.SESSIONS_CREATE, SessionsCreateParams, params)
        answer = await self._call(Method.SESSIONS_CREATE, params)
        return as_wire(parse_result(Method.SESSIONS_CREATE, answer, SessionsCreateResult))

    async def send(
        self,
        key: str,
        message: str,
        *,
        attachments: Rows | None = None,
        thinking: str | None = None,
        queue_mode: str | None = None,
        idempotency_key: str | None = None,
    ) -> Run:
        """``chat.send``: returns the :class:`Run` at once (the key is known before the
        send, so no other stream can mix in)."""
        run_id = idempotency_key or str(uuid.uuid4())
        params: dict[str, Any] = {"sessionKey": key, "message": message, "idempotencyKey": run_id}
        if attachments:
            params["attachments"] = attachments
        if thinking is not None:
            params["thinking"] = thinking
        if queue_mode is not None:
            params["queueMode"] = queue_mode
        params = _built(Method.CHAT_SEND, ChatSendParams, params)
        run = self._book.track(run_id, key)
        try:
            ack = parse_result(
                Method.CHAT_SEND, await self._call(Method.CHAT_SEND, params), ChatSendAck
            )
        except BaseException:
            if not run.done:
                self._book.forget(run_id)
            raise
        if ack.status == "ok" and not run.has_own_events:
            await self._finished_before(run)  # sent before, and finished since
        if queue_mode in ("interrupt", "steer"):
            # Taken into the session's running turn when that one is still going once the
            # ack is here (events and answers come in order): it then ends with it.
            target = self._book.steer_target(key, run_id)
            if target is not None and not run.has_own_events:
                self._book.absorb(run, target)
        return run

    async def _finished_before(self, run: Run) -> None:
        """The gateway says it already finished this run (a send repeated with the same
        idempotency key, ack ``ok``): end it from ``chat.history``."""
        try:
            messages, _ = await self.run_history(run.session_key, run.run_id)
        except Exception as exc:
            log.warning("could not look up finished run %s: %s", run.run_id, exc)
            messages = []
        final = [
            m
            for m in messages
            if m.get("role") == "assistant" and m.get("stopReason") not in (None, "toolUse")
        ]
        if final:
            added = run.finish_from_history(final[-1])
        else:
            done = run.synthesize("run.completed", now_ms(), {"replayed": True})
            added = [done] if done is not None else []
        self._book.settle(run, added)

    async def run_history(self, key: str, run_id: str) -> tuple[Rows, str | None]:
        """One run's transcript messages (its user message onwards, from ``chat.history``),
        and how it ended when the history shows it is over without a final message (the
        session is idle and the run's message is stored): the session's
        ``sessionInfo.status`` when the run was its latest, else ``done``; None while it
        may still be going."""
        params = _built(Method.CHAT_HISTORY, ChatHistoryParams, {"sessionKey": key, "limit": 200})
        result = parse_result(
            Method.CHAT_HISTORY, await self._call(Method.CHAT_HISTORY, params), ChatHistoryResult
        )
        out: Rows = []
        latest = None
        for message in result.messages:
            raw_meta = message.get("__openclaw")
            meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
            ikey = str(message.get("idempotencyKey") or meta.get("idempotencyKey") or "")
            if message.get("role") == "user" and ikey.endswith(":user"):
                latest = ikey[: -len(":user")]
            if meta.get("runId") == run_id or ikey == f"{run_id}:user":
                out.append(message)
        info = result.session_info or {}
        status = info.get("status")
        stored = any(m.get("idempotencyKey") == f"{run_id}:user" for m in out)
        if status not in _IDLE or not stored:
            return out, None
        last = info.get("lastRunId")
        return out, str(status) if (last or latest) == run_id else "done"

    async def abort(self, key: str, run_id: str | None = None) -> dict[str, Any]:
        """``chat.abort``: ``{ok, aborted, runIds}``."""
        params: dict[str, Any] = {"sessionKey": key}
        if run_id is not None:
            params["runId"] = run_id
        params = _built(Method.CHAT_ABORT, ChatAbortParams, params)
        answer = await self._call(Method.CHAT_ABORT, params)
        return as_wire(parse_result(Method.CHAT_ABORT, answer, ChatAbortResult))

    async def patch(self, key: str, **changes: Any) -> dict[str, Any]:
        """``sessions.patch`` (``label``, ``model``, ``thinkingLevel``, ...)."""
        params = _built(Method.SESSIONS_PATCH, SessionsPatchParams, {"key": key, **changes})
        answer = await self._call(Method.SESSIONS_PATCH, params)
        return as_wire(parse_result(Method.SESSIONS_PATCH, answer, SessionsPatchResult))

    async def reset(self, key: str) -> dict[str, Any]:
        """``sessions.reset``: a new session id, an empty transcript."""
        params = _built(Method.SESSIONS_RESET, SessionsResetParams, {"key": key})
        answer = await self._call(Method.SESSIONS_RESET, params)
        return as_wire(parse_result(Method.SESSIONS_RESET, answer, SessionsPatchResult))

    async def delete(self, key: str) -> dict[str, Any]:
        """``sessions.delete``."""
        params = _built(Method.SESSIONS_DELETE, SessionsDeleteParams, {"key": key})
        answer = await self._call(Method.SESSIONS_DELETE, params)
        return as_wire(parse_result(Method.SESSIONS_DELETE, answer, SessionsDeleteResult))

    async def history(self, key: str, limit: int = 200, max_chars: int | None = None) -> Rows:
        """``chat.history``: the visible messages, oldest first."""
        params: dict[str, Any] = {"sessionKey": key, "limit": limit}
        if max_chars is not None:
            params["maxChars"] = max_chars
        answer = await self._call(
            Method.CHAT_HISTORY, _built(Method.CHAT_HISTORY, ChatHistoryParams, params)
        )
        return list(parse_result(Method.CHAT_HISTORY, answer, ChatHistoryResult).messages)


class Models(_Namespace):
    """``models.list`` / ``models.authStatus``."""

    async def list(self) -> Rows:
        """The models the gateway can use."""
        answer = await self._call(Method.MODELS_LIST, {})
        return list(parse_result(Method.MODELS_LIST, answer, ModelsListResult).models)

    async def status(self) -> dict[str, Any]:
        """Provider authentication status."""
        answer = await self._call(Method.MODELS_AUTH_STATUS, {})
        return as_wire(parse_result(Method.MODELS_AUTH_STATUS, answer, ModelsAuthStatusResult))


class Nodes(_Namespace):
    """Device nodes (``node.list``, ``node.describe``, ``node.invoke``)."""

    async def list(self) -> Rows:
        """Paired and connected nodes."""
        result = parse_result(
            Method.NODE_LIST, await self._call(Method.NODE_LIST, {}), NodeListResult
        )
        return [as_wire(node) for node in result.nodes]

    async def describe(self, node_id: str) -> dict[str, Any]:
        """One node's details."""
        answer = await self._call(Method.NODE_DESCRIBE, {"nodeId": node_id})
        return as_wire(parse_result(Method.NODE_DESCRIBE, answer, NodeDescribeResult))

    async def invoke(
        self, node_id: str, command: str, params: Any = None, *, timeout_ms: int | None = None
    ) -> Any:
        """Run a node command; returns its payload (raises GatewayError on failure)."""
        request: dict[str, Any] = {
            "nodeId": node_id,
            "command": command,
            "idempotencyKey": str(uuid.uuid4()),
        }
        if params is not None:
            request["params"] = params
        if timeout_ms is not None:
            request["timeoutMs"] = timeout_ms
        wait = (timeout_ms or 30_000) / 1000 + 10
        answer = await self._call(Method.NODE_INVOKE, request, timeout=wait)
        return parse_result(Method.NODE_INVOKE, answer, NodeInvokeResponse).payload


class Pairing(_Namespace):
    """Pairing: setup codes for a phone (``device.pair.setupCode``) and the answers to
    pending device and node pairing requests (``device.pair.*`` / ``node.pair.*``)."""

    async def setup_code(self, *, public_url: str | None = None) -> dict[str, Any]:
        """A fresh single-use setup code (``setupCode``, ``qrDataUrl``, ``expiresAtMs``...),
        naming ``public_url`` as the gateway's address when given (else the gateway's own
        choice: a gateway bound to loopback only may refuse). Needs ``operator.admin``.

        Asked whether or not the gateway advertises it: the real gateway serves it but
        leaves it out of ``features.methods`` on purpose."""
        params = {} if public_url is None else {"publicUrl": public_url}
        answer = await self._client.call(Method.DEVICE_PAIR_SETUP_CODE, params, unadvertised=True)
        return as_wire(parse_result(Method.DEVICE_PAIR_SETUP_CODE, answer, DeviceSetupCodeResult))

    async def approve(self, kind: PairingKind, request_id: str) -> dict[str, Any]:
        """Approve the pending request ``request_id`` of a device or a node."""
        return await self._resolve(kind, request_id, approve=True)

    async def reject(self, kind: PairingKind, request_id: str) -> dict[str, Any]:
        """Reject the pending request ``request_id`` of a device or a node."""
        return await self._resolve(kind, request_id, approve=False)

    async def _resolve(
        self, kind: PairingKind, request_id: str, *, approve: bool
    ) -> dict[str, Any]:
        method, model = _PAIR_RESOLVE[kind, approve]
        answer = await self._call(method, {"requestId": request_id})
        return as_wire(parse_result(method, answer, model))


#: The method answering a pairing request, and its result model, by (kind, approve).
_PAIR_RESOLVE: dict[tuple[PairingKind, bool], tuple[Method, type[BaseModel]]] = {
    ("device", True): (Method.DEVICE_PAIR_APPROVE, DevicePairApproveResult),
    ("device", False): (Method.DEVICE_PAIR_REJECT, DevicePairRejectResult),
    ("node", True): (Method.NODE_PAIR_APPROVE, NodePairResolveResult),
    ("node", False): (Method.NODE_PAIR_REJECT, NodePairResolveResult),
}


class Approvals(_Namespace):
    """Exec (and plugin) approvals: ``exec.approval.list`` / ``.resolve``."""

    def __init__(
        self, client: Caller, events: Callable[[], AsyncGenerator[Event, None]] | None = None
    ) -> None:
        super().__init__(client)
        self._events = events

    async def list(self) -> Rows:
        """Pending approvals."""
        answer = await self._call(Method.EXEC_APPROVAL_LIST, {})
        return list(parse_result(Method.EXEC_APPROVAL_LIST, answer, ApprovalListResult).root)

    async def respond(self, approval_id: str, decision: str, *, kind: str = "exec") -> None:
        """Answer one: ``allow-once``, ``allow-always`` or ``deny``."""
        method = (
            Method.PLUGIN_APPROVAL_RESOLVE if kind == "plugin" else Method.EXEC_APPROVAL_RESOLVE
        )
        await self._call(method, {"id": approval_id, "decision": decision})

    async def follow(self) -> AsyncGenerator[Approval, None]:
        """Every approval this connection is asked to decide: the pending ones first
        (``exec.approval.list``; a list that fails is logged and skipped), then each
        ``approval.requested`` event as it comes (from the client's
        :meth:`~openclaw_desktop.sdk.client.OpenClaw.events`). The events are followed from
        before the list is asked, so a request that comes while it is answered is not
        missed, nor asked twice. Ends only when the consumer stops iterating."""
        stream = self._events() if self._events is not None else None
        # The first read subscribes the stream: it runs before the list's answer arrives.
        first = asyncio.ensure_future(anext(stream)) if stream is not None else None
        try:
            backfilled: set[str] = set()
            for approval in await self._pending():
                backfilled.add(approval.id)
                yield approval
            if stream is None or first is None:
                return
            event = await first
            while True:
                if event.type == "approval.requested":
                    approval = Approval.from_event(event)
                    if approval.id not in backfilled:
                        yield approval
                event = await anext(stream)
        finally:
            if first is not None and not first.done():
                first.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await first
            if stream is not None:
                await stream.aclose()

    async def _pending(self) -> tuple[Approval, ...]:
        """The pending approvals as :class:`Approval` objects ([] when the list fails)."""
        try:
            pending = await self.list()
        except OpenClawError as exc:
            log.warning("could not backfill approvals: %s", exc)
            return ()
        backfill = Normalizer()
        return tuple(
            Approval.from_event(event)
            for item in pending
            for event in backfill.feed(EXEC_APPROVAL_REQUESTED, item, now_ms())
        )


class Agents(_Namespace):
    """``agents.list``."""

    async def list(self) -> Rows:
        """The gateway's agents."""
        answer = await self._call(Method.AGENTS_LIST, _built(Method.AGENTS_LIST, EmptyParams, {}))
        return list(parse_result(Method.AGENTS_LIST, answer, AgentsListResult).agents)


class Tools(_Namespace):
    """``tools.catalog`` / ``tools.invoke`` (where the gateway allows)."""

    async def catalog(self) -> Any:
        """The tools the agent has."""
        return await self._call(Method.TOOLS_CATALOG, {})

    async def invoke(self, name: str, args: dict[str, Any] | None = None, **extra: Any) -> Any:
        """Run one tool directly."""
        return await self._call(Method.TOOLS_INVOKE, {"name": name, "args": args or {}, **extra})


class Artifacts(_Namespace):
    """``artifacts.list`` / ``artifacts.get`` where the gateway offers them."""

    async def list(self, **filters: Any) -> Any:
        """Artifacts (files a run produced)."""
        return await self._call(Method.ARTIFACTS_LIST, filters)

    async def get(self, artifact_id: str) -> Any:
        """One artifact."""
        return await self._call(Method.ARTIFACTS_GET, {"id": artifact_id})
