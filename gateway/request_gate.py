"""What a request gets before its handler runs: refused for a missing role or scope, an
unknown method, or params nested too deep (:func:`refuse`)."""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import orjson

from gateway.methods.table import MethodTable
from gateway.nodes.invoke import InvokeError, InvokeRouter
from gateway.peer import Peer
from openclaw_desktop.protocol import (
    MAX_FRAME_DEPTH,
    ErrorCode,
    error_shape,
    exceeds_depth,
    unparsed_frame_id,
)

__all__ = [
    "RequestServices",
    "may_nest_too_deep",
    "params_too_deep",
    "refuse",
    "too_deep_to_parse",
]


class RequestServices(Protocol):
    """What the gate itself uses: the invoke router, to end an invoke whose node result
    is refused for its depth."""

    @property
    def router(self) -> InvokeRouter: ...


def refuse(
    table: MethodTable,
    services: RequestServices,
    peer: Peer,
    method: str,
    params: Any,
    *,
    may_nest: bool = True,
) -> dict[str, Any] | None:
    """The ErrorShape a request is answered with instead of running its handler, or None
    when the handler may run. Checked in the real gateway's order (role and scope, then the
    method), then the depth, which the real gateway does not bound.

    Params nested deeper than a frame may are ``INVALID_REQUEST invalid <method> params:
    nested deeper than N levels``; when they are a node's ``node.invoke.result``, the operator
    waiting for it gets a typed error at once rather than a timeout. ``may_nest`` False
    (see :func:`may_nest_too_deep`) skips that check.
    """
    denied = table.authorize(peer.role, peer.scopes, method, params)
    if denied is not None:
        return denied
    if method not in table:
        return error_shape(ErrorCode.INVALID_REQUEST, f"unknown method: {method}")
    if may_nest and params_too_deep(method, params):
        if method == "node.invoke.result":
            _fail_deep_result(services.router, peer, params)
        return error_shape(
            ErrorCode.INVALID_REQUEST,
            f"invalid {method} params: nested deeper than {MAX_FRAME_DEPTH} levels",
        )
    return None


def may_nest_too_deep(message: bytes) -> bool:
    """Whether a frame's text has enough brackets to nest past the limit at all: counting
    them runs at memory speed, walking the parsed params does not (a node's result with
    many objects in it). ``payloadJSON`` text is inside, its brackets counted too."""
    return message.count(b"[") + message.count(b"{") > MAX_FRAME_DEPTH


def too_deep_to_parse(peer: Peer, message: bytes, exc: orjson.JSONDecodeError) -> bool:
    """Answer a frame the parser refused for its depth (past orjson's 1,024 levels) with
    ``INVALID_REQUEST`` under its top-level id (``"invalid"`` when none is found); False,
    doing nothing, for any other unparsable frame (those are dropped, as the real gateway
    drops them)."""
    if "depth" not in str(exc):
        return False
    peer.respond(
        unparsed_frame_id(message) or "invalid",
        False,
        error=error_shape(
            ErrorCode.INVALID_REQUEST,
            f"invalid request frame: nested deeper than {MAX_FRAME_DEPTH} levels",
        ),
    )
    return True


def params_too_deep(method: str, params: Any) -> bool:
    """Whether a request's params nest deeper than a frame may (params sit at level 2 of
    the frame); for ``node.invoke.result`` also its ``payloadJSON`` text, whose value is
    forwarded where ``payload`` would be (level 3)."""
    if exceeds_depth(params, MAX_FRAME_DEPTH - 1):
        return True
    if method != "node.invoke.result" or not isinstance(params, dict):
        return False
    text = params.get("payloadJSON")
    # Only a text with more brackets than the limit can be nested that deep.
    if not isinstance(text, str) or text.count("[") + text.count("{") <= MAX_FRAME_DEPTH - 2:
        return False
    try:
        payload = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        # Deeper than the parser reads is too deep; other bad JSON is the router's to judge.
        return "depth" in str(exc)
    return exceeds_depth(payload, MAX_FRAME_DEPTH - 2)


def _fail_deep_result(router: InvokeRouter, peer: Peer, params: Any) -> None:
    """End the operator's invoke with a typed node error (the router checks that the
    invoke is this node's)."""
    if not isinstance(params, dict) or not isinstance(params.get("id"), str):
        return
    message = f"node result nested deeper than {MAX_FRAME_DEPTH} levels"
    with contextlib.suppress(InvokeError):  # another node's invoke: nothing of ours to end
        router.on_result(
            peer,
            {
                "id": params["id"],
                "nodeId": params.get("nodeId"),
                "ok": False,
                "error": {"code": ErrorCode.INVALID_REQUEST, "message": message},
            },
        )
