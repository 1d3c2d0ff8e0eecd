"""This computer's node on the bundled gateway, its command surface approved by an operator,
as a person gets there: the node advertises what its settings enable, the gateway holds the
surface until the operator answers ``node.pair.requested`` with ``node.pair.approve``.

    async with approved_node(gw.url, operator, dispatcher, settings) as node:
        shot = await node.invoke("screen.snapshot", {"maxWidth": 640})
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.identity import CredentialStore, DeviceIdentity, MemorySecretStore
from openclaw_desktop.node import InvokeDispatcher, NodeSession
from openclaw_desktop.node.registry import Surface
from openclaw_desktop.transport import GatewayConnection
from tests.helpers.bundled_gateway import node_options, wait_for

__all__ = ["ApprovedNode", "approved_node"]


@dataclass
class ApprovedNode:
    """The node's session, its identity, what it advertised (``surface``), the pairing
    request the operator approved and an operator to invoke it with."""

    session: NodeSession
    identity: DeviceIdentity
    surface: Surface
    requested: dict[str, Any]
    operator: GatewayConnection
    _keys: itertools.count[int] = field(default_factory=itertools.count)

    async def invoke(
        self, command: str, params: Any, *, timeout_s: float = 30, **extra: Any
    ) -> Any:
        """The operator's ``node.invoke`` of ``command`` on this node (a fresh idempotency
        key each time; ``extra`` adds fields such as ``timeoutMs``)."""
        request = {
            "nodeId": self.identity.device_id,
            "command": command,
            "params": params,
            "idempotencyKey": f"{command}-{next(self._keys)}",
            **extra,
        }
        return await self.operator.request("node.invoke", request, timeout_s=timeout_s)


@asynccontextmanager
async def approved_node(
    url: str,
    operator: GatewayConnection,
    dispatcher: InvokeDispatcher,
    settings: NodeSettings,
    **options: Any,
) -> AsyncIterator[ApprovedNode]:
    """Connect ``dispatcher``'s node (its surface for ``settings``) to the gateway at ``url``
    and approve its commands through ``operator`` (ready); closed at the end. ``options``
    go to :func:`~tests.helpers.bundled_gateway.node_options` (``computer_use=…``)."""
    surface = await dispatcher.registry.surface(settings.toggles())
    identity = DeviceIdentity.generate()
    connection = GatewayConnection(
        node_options(
            url,
            surface.commands,
            surface.caps,
            identity=identity,
            credentials=CredentialStore(MemorySecretStore()),
            **options,
        )
    )
    await operator.wait_ready(5)
    requested: list[dict[str, Any]] = []
    operator.on_event(
        lambda e: requested.append(e.payload) if e.event == "node.pair.requested" else None
    )
    session = NodeSession(connection, dispatcher)
    connection.start()
    try:
        await wait_for(lambda: requested, 10)
        await operator.request("node.pair.approve", {"requestId": requested[0]["requestId"]})
        await wait_for(lambda: session.surface == "approved", 10)
        yield ApprovedNode(session, identity, surface, requested[0], operator)
    finally:
        await session.aclose()
        await connection.aclose()
