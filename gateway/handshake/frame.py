"""The first frame of a connection, judged like the real gateway 2026.9.6 judges it.

Observed live (``tests/interop/test_gw_handshake_probe.py``), in this order:

* more than 64 KiB: close 1009 ``preauth payload too large``, no ``res`` (read, not probed);
* not JSON: close **1000** with an empty reason, no ``res``;
* any JSON object with ``params`` that claim the worker identity (``role: "worker"``,
  ``client.id: "openclaw-worker"`` or ``client.mode: "worker"``), whatever its ``type``:
  close 1008 ``invalid-handshake``, no ``res``;
* not a valid request frame (closed schema: ``type:"req"``, non-empty ``id`` and ``method``,
  optional ``params``, ``traceparent`` <= 128, ``expectedProfileId`` 1..128): close 1008
  ``invalid request frame``, no ``res``;
* a request whose method is not ``connect``: ``res`` INVALID_REQUEST
  ``invalid handshake: first request must be connect``, then close 1008 with that text.

A ``connect`` request passes; its params are checked by
:func:`gateway.handshake.schema.validate_connect_params`.

JSON nested deeper than Python's recursion limit is parsed too (as ``JSON.parse`` does), so a
deep first frame gets the same answer as a shallow one.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from .iterative_json import loads_iterative
from .jsonschema_errors import collect_errors
from .rejection import ConnectRejection
from .schema import REQUEST_FRAME_SCHEMA

__all__ = [
    "MAX_PREAUTH_FRAME_BYTES",
    "ConnectFrame",
    "claims_worker_identity",
    "parse_first_frame",
]

MAX_PREAUTH_FRAME_BYTES = 64 * 1024
"""Frames above this size are refused before ``hello-ok``."""


class ConnectFrame(NamedTuple):
    """A first frame that is a ``connect`` request; unpacks as ``request_id, params``.

    Attributes:
        request_id: The request ``id`` to answer (``hello-ok`` or a rejection).
        params: The raw ``params`` (None when absent), not validated yet: pass them to
            :func:`~gateway.handshake.schema.validate_connect_params`.
    """

    request_id: str
    params: Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(text: str) -> Any:
    """Parse like ``JSON.parse``: no ``NaN``/``Infinity``, no BOM, at any depth (past
    Python's recursion limit, by :func:`~.iterative_json.loads_iterative`)."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return loads_iterative(text)


def claims_worker_identity(params: Any) -> bool:
    """Whether ``params`` claim the worker identity (refused on the normal endpoint)."""
    if not isinstance(params, dict):
        return False
    if params.get("role") == "worker":
        return True
    client = params.get("client")
    if not isinstance(client, dict):
        return False
    return client.get("id") == "openclaw-worker" or client.get("mode") == "worker"


def parse_first_frame(data: str | bytes) -> ConnectFrame:
    """Judge the first WebSocket message of a connection.

    Args:
        data: The message as received (text, or bytes decoded as UTF-8 with replacement).

    Returns:
        The ``connect`` request: ``request_id, params = parse_first_frame(data)``.

    Raises:
        ConnectRejection: The frame is too large, not JSON, claims the worker identity, is
            not a request frame, or is not a ``connect`` request. Only the last one is
            answered: it carries ``request_id``, so ``rejection.response_frame()`` is the
            ``res`` to send before closing.
    """
    size = len(data) if isinstance(data, bytes) else len(data.encode("utf-8", "surrogatepass"))
    if size > MAX_PREAUTH_FRAME_BYTES:
        raise ConnectRejection.preauth_payload_too_large()
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        parsed = _parse_json(text)
    except (ValueError, RecursionError):
        raise ConnectRejection.not_json() from None
    if isinstance(parsed, dict) and "params" in parsed and claims_worker_identity(parsed["params"]):
        raise ConnectRejection.worker_handshake()
    if collect_errors(REQUEST_FRAME_SCHEMA, parsed):
        raise ConnectRejection.invalid_request_frame()
    frame: dict[str, Any] = parsed
    if frame["method"] != "connect":
        raise ConnectRejection.first_request_not_connect(frame["id"])
    return ConnectFrame(frame["id"], frame.get("params"))
