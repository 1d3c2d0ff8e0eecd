"""Answering one request: the request gate (role, scope, method, depth), the declared
params check, the handler, and exactly one response whatever happens.

When asked (:mod:`gateway.wire_check`), each answer is checked against its method's result
model before it is sent.
"""

from __future__ import annotations

import logging
from typing import Any

from gateway.errors import MethodError
from gateway.methods.table import CURRENT_REQUEST_ID, MethodTable
from gateway.peer import Peer
from gateway.request_gate import RequestServices, refuse
from gateway.wire_check import check_result, checking_results
from openclaw_desktop.protocol import ErrorCode, error_shape

__all__ = ["answer_request"]

log = logging.getLogger("gateway.rpc")


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
        if checking_results():
            check_result(method, result)
        peer.respond(request_id, True, result)
