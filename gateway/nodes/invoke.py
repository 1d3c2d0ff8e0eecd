"""Routing ``node.invoke`` to a connected node and its ``node.invoke.result`` back."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson

from gateway.errors import MethodError
from gateway.memory import LARGE_MESSAGE_BYTES, trim_soon
from gateway.nodes.plugin_policy import POLICY_PLUGINS, dispatched_failure
from gateway.nodes.progress import INVOKE_PROGRESS, ProgressOrder
from gateway.peer import Peer
from openclaw_desktop.protocol import ErrorCode, EventName, error_shape

__all__ = ["InvokeError", "InvokeRouter"]

log = logging.getLogger("gateway.invoke")

DEFAULT_TIMEOUT_MS = 30_000
MAX_PENDING_PER_NODE = 1_000
MAX_PENDING_TOTAL = 20_000
#: Bytes of ``paramsJSON`` that may wait for a node's answers: per node connection, and over
#: all nodes. A pending invoke keeps its params (as the operator sent them and as the JSON
#: forwarded to the node) until the node answers or the invoke times out, so a node that never
#: answers would otherwise let operators pin memory without end (30 invokes of 20 MiB params
#: grew the process by about 1 GiB). One invoke of the largest frame (25 MiB) always fits;
#: past either bound an invoke is refused at once (``UNAVAILABLE``, retryable, the limit in
#: its details) instead of queueing.
MAX_PENDING_BYTES_PER_NODE = 64 * 1024 * 1024
MAX_PENDING_BYTES_TOTAL = 256 * 1024 * 1024
#: Duplicate-``idempotencyKey`` dedupe: a completed result is kept this long, for at most
#: this many keys, and at most this many accounted bytes in total (oldest results go first).
IDEMPOTENCY_TTL_S = 300.0
IDEMPOTENCY_ENTRIES = 2_000
IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024
#: A result bigger than this is not kept once it completed: the callers already waiting on
#: its key get it, a later duplicate dispatches again. (Caching it would let a few large
#: invokes - a screenshot, a file fetch - pin most of the budget for five minutes, and a
#: repeated large read is harmless to run twice.)
IDEMPOTENCY_MAX_ENTRY_BYTES = 4 * 1024 * 1024


class InvokeError(MethodError):
    """An invoke failed; ``shape`` is the ErrorShape for the operator."""


@dataclass
class _Cached:
    """One idempotency key's dispatch: in flight, or completed with ``size`` bytes kept."""

    expires: float
    task: asyncio.Task[dict[str, Any]]
    size: int = 0


def _result_bytes(result: dict[str, Any]) -> int:
    """The bytes a completed result accounts for: its JSON size, which counts a node's
    ``payloadJSON`` string and the payload parsed from it both (the result keeps both).
    Python objects take more memory than their JSON, so this is a proxy that grows with the
    real cost; a result that cannot be encoded counts as too big to keep."""
    payload_json = result.get("payloadJSON")
    if isinstance(payload_json, str) and len(payload_json) > IDEMPOTENCY_MAX_ENTRY_BYTES:
        return len(payload_json)  # too big to keep, whatever the rest weighs
    try:
        return len(orjson.dumps(result))
    except (TypeError, orjson.JSONEncodeError):
        return IDEMPOTENCY_MAX_ENTRY_BYTES + 1


@dataclass
class _Pending:
    invoke_id: str
    node_id: str
    command: str
    peer: Peer
    future: asyncio.Future[dict[str, Any]] = field(default_factory=asyncio.Future)
    #: The caller's progress listener (:data:`INVOKE_PROGRESS` where the invoke began).
    progress: ProgressOrder | None = None


def _over_bytes(scope: str, pending: int, size: int, limit: int) -> InvokeError:
    """The refusal of an invoke whose params would pass a pending-bytes bound."""
    where = "this node" if scope == "node" else "all nodes"
    message = (
        f"too many pending invoke bytes for {where}: {pending} bytes wait for answers, "
        f"{size} more would pass the limit of {limit} bytes"
    )
    details = {"scope": scope, "limitBytes": limit, "pendingBytes": pending, "paramsBytes": size}
    return InvokeError(error_shape(ErrorCode.UNAVAILABLE, message, details, retryable=True))


def _retrieve(task: asyncio.Task[Any]) -> None:
    """Mark a dispatch's outcome as seen (every caller may have gone away)."""
    if not task.cancelled():
        task.exception()


#: Commands that the real gateway's bundled ``linux-node`` plugin routes through its node
#: invoke policy. Their failures reach operators differently (observed on 2026.9.6):
#: ``INVALID_REQUEST`` with the node's bare message and ``details {nodeError, code}``.
PLUGIN_POLICY_COMMANDS = frozenset({"camera.list", "camera.snap", "camera.clip", "location.get"})


def _plugin_policy_failure(error: Any) -> InvokeError:
    node_error = error if isinstance(error, dict) else None
    code = str(node_error.get("code") or "") if node_error else ""
    message = str(node_error.get("message") or "") if node_error else ""
    details: dict[str, Any] = {"nodeError": node_error}
    if code:
        details["code"] = code
    shape = error_shape(ErrorCode.INVALID_REQUEST, message or "node command failed", details)
    return InvokeError(shape)


def _node_failure(error: Any, command: str = "") -> InvokeError:
    if command in PLUGIN_POLICY_COMMANDS:
        return _plugin_policy_failure(error)
    if command in POLICY_PLUGINS:  # cua-computer's computer.act
        return InvokeError(dispatched_failure(error))
    node_error = error if isinstance(error, dict) else None
    code = str(node_error.get("code") or "") if node_error else ""
    message = str(node_error.get("message") or "") if node_error else ""
    message = message or "node invoke failed"
    text = f"{code}: {message}" if code else message
    details = {"nodeError": node_error, "nodeCommandDispatched": True}
    return InvokeError(error_shape(ErrorCode.UNAVAILABLE, text, details))


class InvokeRouter:
    """Pending invokes by id, with per-request deadlines, cancel and idempotency."""

    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}
        self._per_node: dict[str, int] = {}
        self._bytes_per_node: dict[str, int] = {}
        self._pending_bytes = 0
        self._idempotent: OrderedDict[tuple[str, str], _Cached] = OrderedDict()
        self._cached_bytes = 0

    @property
    def pending_count(self) -> int:
        """Invokes waiting for a node."""
        return len(self._pending)

    @property
    def pending_bytes(self) -> int:
        """Bytes of params the pending invokes hold (at most :data:`MAX_PENDING_BYTES_TOTAL`)."""
        return self._pending_bytes

    @property
    def cached_count(self) -> int:
        """Idempotency keys remembered (in flight or completed)."""
        return len(self._idempotent)

    @property
    def cached_bytes(self) -> int:
        """Accounted bytes of the completed results kept for duplicate keys (at most
        :data:`IDEMPOTENCY_MAX_BYTES`)."""
        return self._cached_bytes

    async def invoke(
        self,
        peer: Peer,
        command: str,
        params: Any,
        *,
        timeout_ms: int | None,
        idempotency_key: str,
        cancel_on_abandon: bool = False,
    ) -> dict[str, Any]:
        """Send the command to the node and wait for its result.

        Returns the operator result ``{ok, nodeId, command, payload, payloadJSON}``. With
        ``cancel_on_abandon`` (a caller that owns its idempotency key, such as an agent's
        tool call) a cancelled caller cancels the invoke on the node too.

        Raises:
            InvokeError: node error, timeout, disconnect or overload, as ErrorShape.
        """
        node_id = peer.device_id or ""
        key = (node_id, idempotency_key)
        now = time.monotonic()
        self._expire_idempotent(now)
        cached = self._idempotent.get(key)
        if cached is not None:
            task = cached.task
        else:
            # Admitted here, before any task exists, so a refusal is a plain exception
            # that frees the params copy at once (no task, no traceback kept with it).
            encoded = None if params is None else orjson.dumps(params)
            size = 0 if encoded is None else len(encoded)
            if size >= LARGE_MESSAGE_BYTES:
                trim_soon()  # its copies are freed soon (refused or answered): give them back
            refusal = self._over_budget(node_id, size)
            if refusal is not None:
                del encoded, params
                try:
                    raise refusal
                finally:
                    del refusal  # else this frame and its exception form a cycle
            self._reserve(node_id, size)
            request: dict[str, Any] = {}
            if encoded is not None:
                request["paramsJSON"] = encoded.decode("utf-8")
            del encoded
            # The dispatch is a task of its own: a caller that goes away (its connection
            # closed) must not cancel it for the other callers waiting on the same key.
            task = asyncio.get_running_loop().create_task(
                self._run(key, peer, command, request, timeout_ms),
                name=f"invoke-{command}",
            )
            del request
            task.add_done_callback(_retrieve)
            task.add_done_callback(lambda _done: self._release(node_id, size))
            self._idempotent[key] = _Cached(now + IDEMPOTENCY_TTL_S, task)
            while len(self._idempotent) > IDEMPOTENCY_ENTRIES:
                self._drop(next(iter(self._idempotent)))
        del params  # the caller's; this frame may outlive it in a failure's traceback
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if cancel_on_abandon:
                task.cancel()
            raise
        finally:
            # A failed task holds its exception, whose traceback holds this frame: without
            # this the cycle waits for the garbage collector.
            del task

    def _over_budget(self, node_id: str, size: int) -> InvokeError | None:
        """The refusal of ``size`` more params bytes, or None when they fit both bounds."""
        node_bytes = self._bytes_per_node.get(node_id, 0)
        if node_bytes + size > MAX_PENDING_BYTES_PER_NODE:
            return _over_bytes("node", node_bytes, size, MAX_PENDING_BYTES_PER_NODE)
        if self._pending_bytes + size > MAX_PENDING_BYTES_TOTAL:
            return _over_bytes("total", self._pending_bytes, size, MAX_PENDING_BYTES_TOTAL)
        return None

    def _reserve(self, node_id: str, size: int) -> None:
        self._bytes_per_node[node_id] = self._bytes_per_node.get(node_id, 0) + size
        self._pending_bytes += size

    def _release(self, node_id: str, size: int) -> None:
        """The dispatch ended (answered, failed, timed out, cancelled even before it ran)."""
        self._pending_bytes -= size
        left = self._bytes_per_node.get(node_id, 0) - size
        if left <= 0:
            self._bytes_per_node.pop(node_id, None)
        else:
            self._bytes_per_node[node_id] = left
        if size >= LARGE_MESSAGE_BYTES:
            trim_soon()

    async def _run(
        self,
        key: tuple[str, str],
        peer: Peer,
        command: str,
        request: dict[str, Any],
        timeout_ms: int | None,
    ) -> dict[str, Any]:
        try:
            result = await self._dispatch(peer, command, request, timeout_ms, key[1])
        except BaseException:
            entry = self._idempotent.get(key)
            if entry is not None and entry.task is asyncio.current_task():
                self._drop(key)  # failures are not cached: a retry may succeed
            raise
        self._account(key, result)
        return result

    def _account(self, key: tuple[str, str], result: dict[str, Any]) -> None:
        """Charge a completed result to the byte budget, or forget it when it is too big;
        then drop the oldest completed results until the total fits again."""
        entry = self._idempotent.get(key)
        if entry is None or entry.task is not asyncio.current_task():
            return  # already evicted: the cache does not hold this result
        size = _result_bytes(result)
        if size > IDEMPOTENCY_MAX_ENTRY_BYTES:
            self._drop(key)
            return
        entry.size = size
        self._cached_bytes += size
        if self._cached_bytes > IDEMPOTENCY_MAX_BYTES:
            for old in [k for k, e in self._idempotent.items() if e.size]:
                self._drop(old)
                if self._cached_bytes <= IDEMPOTENCY_MAX_BYTES:
                    break

    def _drop(self, key: tuple[str, str]) -> None:
        entry = self._idempotent.pop(key, None)
        if entry is not None:
            self._cached_bytes -= entry.size

    async def _dispatch(
        self, peer: Peer, command: str, request: dict[str, Any], timeout_ms: int | None, key: str
    ) -> dict[str, Any]:
        """Send ``request`` (``paramsJSON`` already in it, admitted by :meth:`invoke`) to the
        node and wait for the answer."""
        node_id = peer.device_id or ""
        if (
            len(self._pending) >= MAX_PENDING_TOTAL
            or self._per_node.get(node_id, 0) >= MAX_PENDING_PER_NODE
        ):
            raise InvokeError(
                error_shape(
                    ErrorCode.UNAVAILABLE, "too many pending invokes for this node", retryable=True
                )
            )
        timeout = DEFAULT_TIMEOUT_MS if timeout_ms is None or timeout_ms <= 0 else timeout_ms
        invoke_id = str(uuid.uuid4())
        pending = _Pending(
            invoke_id, node_id, command, peer, asyncio.get_running_loop().create_future()
        )
        listener = INVOKE_PROGRESS.get()
        pending.progress = ProgressOrder(listener) if listener is not None else None
        self._pending[invoke_id] = pending
        self._per_node[node_id] = self._per_node.get(node_id, 0) + 1
        params_json = request.pop("paramsJSON", None)
        request.update(
            {
                "id": invoke_id,
                "nodeId": node_id,
                "command": command,
                "timeoutMs": timeout,
                "idempotencyKey": key,
            }
        )
        if params_json is not None:
            request["paramsJSON"] = params_json
        del params_json
        try:
            peer.send_event(EventName.NODE_INVOKE_REQUEST, request, seq=False)
            # The frame is encoded and queued: the JSON copy is not needed while waiting
            # (the caller's frame holds the same dict, so it is emptied, not just let go).
            request.clear()
            async with asyncio.timeout(timeout / 1000):
                outcome = await pending.future
        except TimeoutError:
            peer.send_event(
                EventName.NODE_INVOKE_CANCEL, {"invokeId": invoke_id, "nodeId": node_id}, seq=False
            )
            timed_out = {"code": "TIMEOUT", "message": "node invoke timed out"}
            raise _node_failure(timed_out, command) from None
        except asyncio.CancelledError:
            # The caller went away (a chat run was aborted mid tool call): stop the node too.
            peer.send_event(
                EventName.NODE_INVOKE_CANCEL, {"invokeId": invoke_id, "nodeId": node_id}, seq=False
            )
            raise
        finally:
            self._forget(invoke_id)
        if not outcome.get("ok"):
            raise _node_failure(outcome.get("error"), command)
        return self._operator_result(node_id, command, outcome)

    @staticmethod
    def _operator_result(node_id: str, command: str, outcome: dict[str, Any]) -> dict[str, Any]:
        payload_json = outcome.get("payloadJSON")
        payload = outcome.get("payload")
        if isinstance(payload_json, str) and payload_json.strip():
            try:
                payload = orjson.loads(payload_json)
            except orjson.JSONDecodeError:
                payload = {"payloadJSON": payload_json}
        else:
            payload_json = None
        return {
            "ok": True,
            "nodeId": node_id,
            "command": command,
            "payload": payload,
            "payloadJSON": payload_json,
        }

    def on_result(self, peer: Peer, params: dict[str, Any]) -> dict[str, Any]:
        """Handle ``node.invoke.result``; returns the ack payload.

        Raises:
            InvokeError: ``nodeId mismatch``.
        """
        if params.get("nodeId") != peer.device_id:
            raise InvokeError(error_shape(ErrorCode.INVALID_REQUEST, "nodeId mismatch"))
        pending = self._pending.get(str(params.get("id")))
        if pending is None or pending.peer is not peer:
            return {"ok": True, "ignored": True}
        if not pending.future.done():
            pending.future.set_result(params)
        return {"ok": True}

    def on_progress(self, peer: Peer, params: dict[str, Any]) -> bool:
        """Hand one ``node.invoke.progress`` chunk to the invoke's listener; False (ignored)
        when the invoke is not pending from this connection, nobody listens, or the ``seq``
        is stale."""
        pending = self._pending.get(str(params.get("invokeId")))
        if pending is None or pending.peer is not peer or pending.future.done():
            return False
        if pending.progress is None:
            return False
        try:
            return pending.progress.accept(int(params["seq"]), str(params["chunk"]))
        except Exception:  # a listener's fault is not the node's
            log.exception("invoke progress listener failed")
            return False

    def node_disconnected(self, peer: Peer) -> None:
        """Fail the node's pending invokes at once."""
        for pending in list(self._pending.values()):
            if pending.peer is peer and not pending.future.done():
                pending.future.set_result(
                    {
                        "ok": False,
                        "error": {
                            "code": "DISCONNECTED",
                            "message": f"node disconnected ({pending.command})",
                        },
                    }
                )

    def fail_all(self, message: str) -> None:
        """Shutdown: fail every pending invoke."""
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_result(
                    {"ok": False, "error": {"code": "UNAVAILABLE", "message": message}}
                )

    def _forget(self, invoke_id: str) -> None:
        pending = self._pending.pop(invoke_id, None)
        if pending is not None:
            left = self._per_node.get(pending.node_id, 1) - 1
            if left <= 0:
                self._per_node.pop(pending.node_id, None)
            else:
                self._per_node[pending.node_id] = left

    def _expire_idempotent(self, now: float) -> None:
        while self._idempotent:
            key, entry = next(iter(self._idempotent.items()))
            if entry.expires > now or not entry.task.done():
                break
            self._drop(key)
