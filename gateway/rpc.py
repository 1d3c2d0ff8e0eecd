"""Answering one request: the request gate (role, scope, method, depth), the declared
params check, the handler, and exactly one response whatever happens.

With ``OPENCLAW_GATEWAY_CHECK_RESULTS=1`` in the environment (the test suite sets it), each
answer is also checked against the method's result model
(:data:`openclaw_desktop.protocol.results.RESULTS`); a misfit is logged at ERROR with the
method and field names only (answers may hold tokens and message text), and still sent.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from gateway.errors import MethodError
from gateway.hub import WIRE_MISFIT
from gateway.methods.table import CURRENT_REQUEST_ID, MethodTable
from gateway.peer import Peer
from gateway.request_gate import RequestServices, refuse
from openclaw_desktop.protocol import ErrorCode, error_shape
from openclaw_desktop.protocol.events import payload_errors
from openclaw_desktop.protocol.results import result_model

__all__ = ["CHECK_RESULTS_ENV", "answer_request", "check_result"]

log = logging.getLogger("gateway.rpc")

#: Set to ``1`` to check every answer against its result model (:func:`check_result`).
CHECK_RESULTS_ENV = "OPENCLAW_GATEWAY_CHECK_RESULTS"


def check_result(method: str, result: Any) -> bool:
    """Whether ``result`` fits ``method``'s result model; each misfit is logged at ERROR
    (method and field names, never values)."""
    model = result_model(method)
    if model is None:
        log.error("method %s has no result model", method, extra=WIRE_MISFIT)
        return False
    errors = payload_errors(model, result)
    for field, kind in errors:
        log.error(
            "method %s answer does not fit %s: %s (%s)",
            method,
            model.__name__,
            field,
            kind,
            extra=WIRE_MISFIT,
        )
    return not errors


async def answer_request(
    table: MethodTable,
    services: RequestServices,
    peer: Peer,
    frame: dict[str, Any],
    *,
    may_nest: bool = True,
) -> None:
    """Authorize, run and answer the request ``frame`` of ``peer`` with ``table``'s handler,
    which gets ``services`` (each family types the part it uses). ``may_nest`` False says
    the frame's text has too few brackets to nest too deep, which spares walking its
    params."""
    request_id: str = frame["id"]
    method: str = frame["method"]
    params = frame.get("params")
    try:
        refusal = refuse(table, services, peer, method, params, may_nest=may_nest)
        if refusal is not None:
            peer.respond(request_id, False, error=refusal)
            return
        CURRENT_REQUEST_ID.set(request_id)  # this request's own task: no reset needed
        spec = table[method]
        result = await spec.handler(services, peer, spec.checked_params(params))
    except MethodError as exc:
        peer.respond(request_id, False, error=exc.shape)
    except Exception:
        log.exception("method %s failed", method)
        peer.respond(
            request_id, False, error=error_shape(ErrorCode.UNAVAILABLE, f"{method} failed")
        )
    else:
        if os.environ.get(CHECK_RESULTS_ENV) == "1":
            check_result(method, result)
        peer.respond(request_id, True, result)
