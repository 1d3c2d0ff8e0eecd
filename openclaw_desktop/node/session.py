"""The node side of a gateway connection: answers ``node.invoke.request``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.results import InvokeResult
from openclaw_desktop.protocol import (
    EventName,
    Method,
    NodeErrorCode,
    NodeInvokeCancel,
    NodeInvokeRequest,
)
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import GatewayConnection

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
        self._unsubscribe = connection.on_event(self._on_event)
        self.handled = 0

    async def aclose(self) -> None:
        """Stop listening and cancel running invokes."""
        self._unsubscribe()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _on_event(self, event: EventReceived) -> None:
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
        except ValueError:
            log.warning("ignored malformed node.invoke.request")
            return
        if request.id in self._tasks:
            return
        task = asyncio.create_task(self._run(request), name=f"invoke-{request.command}")
        self._tasks[request.id] = task
        rid = request.id

        def forget(_task: asyncio.Task[None]) -> None:
            self._tasks.pop(rid, None)

        task.add_done_callback(forget)

    async def _run(self, request: NodeInvokeRequest) -> None:
        timeout_ms = (
            request.timeout_ms if request.timeout_ms is not None else DEFAULT_INVOKE_TIMEOUT_MS
        )
        try:
            params = request.decoded_params()
        except ValueError as exc:
            result = InvokeResult.error(NodeErrorCode.INVALID_REQUEST, str(exc))
        else:
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
        await self._reply(request, result)

    async def _reply(self, request: NodeInvokeRequest, result: InvokeResult) -> None:
        params = result.to_wire(request.id, request.node_id)
        try:
            await self.connection.request(Method.NODE_INVOKE_RESULT, params, timeout_s=15)
        except OpenClawError as exc:
            log.warning("could not deliver the result of %s: %s", request.command, exc)
