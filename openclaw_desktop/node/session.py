"""The node side of a gateway connection: answers ``node.invoke.request``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from openclaw_desktop.errors import GatewayError, OpenClawError, PayloadTooLarge
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.progress import INVOKE_PROGRESS
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import (
    EventName,
    FrameEncodeError,
    Method,
    NodeErrorCode,
    NodeInvokeCancel,
    NodeInvokeRequest,
)
from openclaw_desktop.protocol.methods.nodes import NodeInvokeProgressParams
from openclaw_desktop.protocol.results.nodes import (
    NodeAckResult,
    NodeInvokeProgressResult,
    NodePendingPullResult,
)
from openclaw_desktop.sdk.answers import parse_result
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import ConnectionState, ConnectionStatus, GatewayConnection

__all__ = ["NodeSession"]

log = logging.getLogger("openclaw.node")

#: Default execution deadline when the request names none (same as the gateway's).
DEFAULT_INVOKE_TIMEOUT_MS = 30_000


class NodeSession:
    """Runs each invoke as its own task, honours ``node.invoke.cancel`` and the request's
    ``timeoutMs``, and always answers with exactly one ``node.invoke.result``."""

    def __init__(self, connection: GatewayConnection, dispatcher: InvokeDispatcher) -> None:
        self.connection = connection
        self.dispatcher = dispatcher
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._unsubscribe = [
            connection.on_event(self._on_event),
            connection.on_status(self._on_status),
        ]
        self._surface_check: asyncio.Task[None] | None = None
        self.handled = 0
        #: ``"pending"`` while the gateway holds the command surface for operator approval,
        #: ``"approved"`` once it is active, ``"unknown"`` before the first check.
        self.surface = "unknown"
        self._surface_generation = 0
        self.surface_listeners: list[Callable[[str], None]] = []
        #: ``(command, result code)`` of every handled invoke (the activity view; never
        #: payloads).
        self.invoke_listeners: list[Callable[[str, str], None]] = []
        #: Hear the user's Stop (the command prefix), before the running invokes are cancelled.
        self.stop_listeners: list[Callable[[str], None]] = []

    async def aclose(self) -> None:
        """Stop listening and cancel running invokes."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        tasks = list(self._tasks.values())
        if self._surface_check is not None:
            tasks.append(self._surface_check)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def cancel_running(self, prefix: str) -> int:
        """Cancel the running invokes whose command starts with ``prefix`` (the user stopped
        a capture from the indicator); each answers ``CANCELLED``. Returns how many."""
        for listener in list(self.stop_listeners):
            try:
                listener(prefix)
            except Exception:
                log.exception("stop listener failed")
        cancelled = 0
        for task in list(self._tasks.values()):
            if task.get_name().startswith(f"invoke-{prefix}"):
                task.cancel()
                cancelled += 1
        return cancelled

    def _on_status(self, status: ConnectionStatus) -> None:
        if status.state is ConnectionState.CONNECTED and self._surface_check is None:
            self._surface_check = asyncio.create_task(self._check_surface(), name="node-surface")

    async def _check_surface(self) -> None:
        """Ask whether the command surface is active yet.

        Gateways hold a new or widened surface for approval and answer the node's pending
        queue with ``PAIRING_CHANGED`` meanwhile; ``node.pair.resolved`` ends the wait.
        """
        generation = self._surface_generation
        try:
            answer = await self.connection.request(Method.NODE_PENDING_PULL, {}, timeout_s=15)
            parse_result(Method.NODE_PENDING_PULL, answer, NodePendingPullResult)
        except GatewayError as exc:
            if exc.detail_code == "PAIRING_CHANGED" and generation == self._surface_generation:
                self._set_surface("pending")
        except OpenClawError as exc:
            log.debug("surface check failed: %s", exc)
        else:
            if generation == self._surface_generation:
                self._set_surface("approved")
        finally:
            self._surface_check = None

    def _set_surface(self, state: str) -> None:
        if state == self.surface:
            return
        self.surface = state
        for listener in list(self.surface_listeners):
            listener(state)

    def _on_event(self, event: EventReceived) -> None:
        if event.event == EventName.NODE_PAIR_RESOLVED:
            # Newer than any answer still in flight: a late pull result must not undo it.
            self._surface_generation += 1
            payload = event.payload if isinstance(event.payload, dict) else {}
            if payload.get("decision") == "approved":
                self._set_surface("approved")
            elif payload.get("decision") is not None:
                self._set_surface(f"{payload.get('decision')}")
            return
        if event.event == EventName.NODE_INVOKE_REQUEST:
            self._start_invoke(event.payload)
        elif event.event == EventName.NODE_INVOKE_CANCEL:
            try:
                cancel = NodeInvokeCancel.model_validate(event.payload)
            except ValueError:
                log.warning("ignored malformed node.invoke.cancel")
                return
            task = self._tasks.get(cancel.target_id or "")
            if task is not None:
                log.info("invoke %s cancelled by the gateway", cancel.target_id)
                task.cancel()

    def _start_invoke(self, payload: Any) -> None:
        try:
            request = NodeInvokeRequest.model_validate(payload)
        except ValidationError as exc:
            self._refuse_malformed(payload, exc)
            return
        if request.id in self._tasks:
            return
        task = asyncio.create_task(self._run(request), name=f"invoke-{request.command}")
        self._tasks[request.id] = task
        rid = request.id

        def forget(_task: asyncio.Task[None]) -> None:
            self._tasks.pop(rid, None)

        task.add_done_callback(forget)

    def _refuse_malformed(self, payload: Any, exc: ValidationError) -> None:
        """A request with an id but a bad field (``timeoutMs: "soon"``, an empty ``command``)
        is answered ``INVALID_REQUEST`` naming the field, so the gateway does not wait out
        its timeout; one without a usable id cannot be answered and is logged."""
        invoke_id = payload.get("id") if isinstance(payload, dict) else None
        if not isinstance(invoke_id, str) or not invoke_id or invoke_id in self._tasks:
            log.warning("ignored malformed node.invoke.request")
            return
        node_id = payload.get("nodeId")
        if not isinstance(node_id, str) or not node_id:
            node_id = self._own_node_id()
        command = payload.get("command")
        command = command if isinstance(command, str) and command else "?"
        request = NodeInvokeRequest.model_construct(id=invoke_id, node_id=node_id, command=command)
        result = InvokeResult.error(NodeErrorCode.INVALID_REQUEST, _first_problem(exc))
        log.warning("refused malformed node.invoke.request: %s", result.error_message)
        task = asyncio.create_task(self._reply(request, result), name="invoke-refused")
        self._tasks[invoke_id] = task
        task.add_done_callback(lambda _task: self._tasks.pop(invoke_id, None))

    def _own_node_id(self) -> str:
        """This node's id (its device id), for answering a request that named none."""
        options = getattr(self.connection, "options", None)
        signer = getattr(options, "signer", None)
        return str(getattr(signer, "device_id", "") or "")

    async def _run(self, request: NodeInvokeRequest) -> None:
        timeout_ms = (
            request.timeout_ms if request.timeout_ms is not None else DEFAULT_INVOKE_TIMEOUT_MS
        )
        try:
            params = request.decoded_params()
        except ValueError as exc:
            result = InvokeResult.error(NodeErrorCode.INVALID_REQUEST, str(exc))
        else:
            INVOKE_PROGRESS.set(functools.partial(self._progress, request))  # this task's own
            try:
                async with asyncio.timeout(timeout_ms / 1000 if timeout_ms > 0 else None):
                    result = await self.dispatcher.dispatch(request.command, params)
            except TimeoutError:
                result = InvokeResult.error(NodeErrorCode.TIMEOUT, "node invoke timed out")
            except asyncio.CancelledError:
                result = InvokeResult.error(NodeErrorCode.CANCELLED, "invoke cancelled")
                await self._reply(request, result)
                raise
        log.info("invoke %s -> %s", request.command, "ok" if result.ok else result.error_code)
        self.handled += 1
        for listener in list(self.invoke_listeners):
            listener(request.command, "ok" if result.ok else str(result.error_code))
        await self._reply(request, result)

    async def _progress(
        self, request: NodeInvokeRequest, seq: int, chunk: str
    ) -> NodeInvokeProgressResult:
        """One ``node.invoke.progress`` of a running invoke (a handler's stream), its params
        built by the method's model (a chunk it refuses raises, as a refused request does)
        and its answer read through the result model (a misfit raises ``InvalidResult``)."""
        params = NodeInvokeProgressParams(
            invoke_id=request.id, node_id=request.node_id, seq=seq, chunk=chunk
        ).to_wire()
        answer = await self.connection.request(Method.NODE_INVOKE_PROGRESS, params, timeout_s=15)
        return parse_result(Method.NODE_INVOKE_PROGRESS, answer, NodeInvokeProgressResult)

    async def _reply(self, request: NodeInvokeRequest, result: InvokeResult) -> None:
        params = result.to_wire(request.id, request.node_id)
        try:
            answer = await self.connection.request(Method.NODE_INVOKE_RESULT, params, timeout_s=15)
            parse_result(Method.NODE_INVOKE_RESULT, answer, NodeAckResult)
        except PayloadTooLarge as exc:
            # The gateway would otherwise wait for an answer until its own timeout: tell it
            # why there is none (Android answers oversized captures the same way).
            log.warning("result of %s is too large to send: %s", request.command, exc)
            if result.error_code != NodeErrorCode.PAYLOAD_TOO_LARGE:  # sent at most once
                message = (
                    f"result of {exc.size} bytes exceeds the gateway's frame limit of "
                    f"{exc.limit} bytes (policy.maxPayload); ask for less"
                )
                too_large = InvokeResult.error(NodeErrorCode.PAYLOAD_TOO_LARGE, message)
                await self._reply(request, too_large)
        except FrameEncodeError as exc:
            # A payload nested past the frame limit (or not JSON) cannot go out: the gateway
            # gets a typed error instead of waiting until its timeout.
            log.warning("result of %s cannot be sent: %s", request.command, exc)
            if result.ok:  # the error result is shallow: sent at most once
                message = f"result of {request.command} cannot be sent: {exc.detail}"
                await self._reply(request, InvokeResult.error(NodeErrorCode.UNAVAILABLE, message))
        except OpenClawError as exc:
            log.warning("could not deliver the result of %s: %s", request.command, exc)


def _first_problem(exc: ValidationError) -> str:
    """``invalid node.invoke.request: <field>: <problem>`` for the first bad field."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return "invalid node.invoke.request"
    first = errors[0]
    where = ".".join(str(part) for part in first.get("loc", ())) or "payload"
    return f"invalid node.invoke.request: {where}: {first.get('msg', 'invalid')}"
