"""What the gateway sends a node (``node.invoke.request``/``cancel``) and the answers the
node and operator methods return; the node methods' params are in
:mod:`openclaw_desktop.protocol.methods.nodes`."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import Field, StrictInt

from openclaw_desktop.protocol.base import OpenModel

__all__ = [
    "NodeEventResult",
    "NodeInvokeCancel",
    "NodeInvokeRequest",
    "NodeInvokeResponse",
]


class NodeInvokeRequest(OpenModel):
    """Event ``node.invoke.request`` (gateway -> node)."""

    id: str = Field(min_length=1)
    node_id: str
    command: str = Field(min_length=1)
    params_json: str | None = Field(default=None, alias="paramsJSON")
    params: Any = None
    timeout_ms: StrictInt | None = Field(default=None, ge=0)
    idempotency_key: str | None = None

    def decoded_params(self) -> Any:
        """The params, preferring ``paramsJSON`` (older gateways sent ``params``).

        Raises:
            ValueError: ``paramsJSON`` is not valid JSON.
        """
        if self.params_json is not None:
            try:
                return orjson.loads(self.params_json)
            except orjson.JSONDecodeError as exc:
                raise ValueError(f"paramsJSON is not valid JSON: {exc}") from None
        return self.params


class NodeInvokeCancel(OpenModel):
    """Event ``node.invoke.cancel`` (gateway -> node)."""

    node_id: str | None = None
    invoke_id: str | None = None
    id: str | None = None

    @property
    def target_id(self) -> str | None:
        """The invoke being cancelled (``invokeId``, or ``id`` on older gateways)."""
        return self.invoke_id or self.id


class NodeInvokeResponse(OpenModel):
    """Operator result of ``node.invoke``."""

    ok: bool = True
    node_id: str
    command: str
    payload: Any = None
    payload_json: str | None = Field(default=None, alias="payloadJSON")


class NodeEventResult(OpenModel):
    """Result of ``node.event``: ``{ok, event, handled, reason?}`` (older: ``{ok}``)."""

    ok: bool
    event: str | None = None
    handled: bool | None = None
    reason: str | None = None
