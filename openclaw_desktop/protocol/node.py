"""Node invoke and node event payloads."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import Field, StrictInt

from openclaw_desktop.protocol.base import ClosedModel, OpenModel

__all__ = [
    "NodeError",
    "NodeEventParams",
    "NodeEventResult",
    "NodeInvokeCancel",
    "NodeInvokeParams",
    "NodeInvokeProgressParams",
    "NodeInvokeRequest",
    "NodeInvokeResponse",
    "NodeInvokeResultParams",
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


class NodeError(ClosedModel):
    """``{code, message}`` of a failed invoke."""

    code: str
    message: str


class NodeInvokeResultParams(ClosedModel):
    """RPC ``node.invoke.result`` params (node -> gateway)."""

    id: str = Field(min_length=1)
    node_id: str
    ok: bool
    payload: Any = None
    payload_json: str | None = Field(default=None, alias="payloadJSON")
    error: NodeError | None = None


class NodeInvokeProgressParams(ClosedModel):
    """RPC ``node.invoke.progress`` params; ``chunk`` is at most 16 KiB of UTF-8."""

    invoke_id: str
    node_id: str
    seq: StrictInt = Field(ge=0)
    chunk: str = Field(max_length=16384)


class NodeInvokeParams(ClosedModel):
    """Operator RPC ``node.invoke`` params."""

    node_id: str = Field(min_length=1)
    command: str = Field(min_length=1)
    params: Any = None
    timeout_ms: StrictInt | None = Field(default=None, ge=0)
    idempotency_key: str = Field(min_length=1)
    session_key: str | None = None


class NodeInvokeResponse(OpenModel):
    """Operator result of ``node.invoke``."""

    ok: bool = True
    node_id: str
    command: str
    payload: Any = None
    payload_json: str | None = Field(default=None, alias="payloadJSON")


class NodeEventParams(ClosedModel):
    """RPC ``node.event`` params."""

    event: str = Field(min_length=1)
    payload: Any = None
    payload_json: str | None = Field(default=None, alias="payloadJSON")


class NodeEventResult(OpenModel):
    """Result of ``node.event``: ``{ok, event, handled, reason?}`` (older: ``{ok}``)."""

    ok: bool
    event: str | None = None
    handled: bool | None = None
    reason: str | None = None
