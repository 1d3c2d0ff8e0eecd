"""One request answered by a real :class:`~gateway.app.GatewayApp` through the real
dispatcher (:func:`gateway.rpc.answer_request`), without a socket: the params-model tests'
way to see the exact frame the gateway sends back.

    with gateway_app(tmp_path) as app:
        frame = await answer(app, "node.describe", {})
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema
from gateway.peer import Peer
from gateway.rpc import answer_request
from gateway.state import GatewayState
from openclaw_desktop.protocol.methods import PARAMS
from tests.helpers.bundled_gateway import gateway_config

__all__ = ["answer", "assert_hand_read", "gateway_app"]


class _Recorder:
    """The peer's transport: what the gateway answers, decoded."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    async def send(self, data: bytes) -> bool:
        self.frames.append(orjson.loads(data))
        return True

    async def close(self, code: int, reason: str) -> None:
        return None

    def abort(self) -> None:
        return None


@contextlib.contextmanager
def gateway_app(folder: Path, **overrides: Any) -> Iterator[GatewayApp]:
    """A gateway app on a fresh state in ``folder`` (closed after the block), configured as
    :func:`~tests.helpers.bundled_gateway.gateway_config` with ``overrides``."""
    state = GatewayState(folder / "gateway.sqlite3")
    try:
        yield GatewayApp(gateway_config(folder, **overrides), state)
    finally:
        state.close()


async def answer(
    app: GatewayApp, method: str, params: Any, *, role: str = "operator"
) -> dict[str, Any]:
    """The one frame ``app`` answers ``method`` with, asked by an admin operator (or, with
    ``role="node"``, by a node)."""
    transport = _Recorder()
    peer = Peer(
        transport=transport,
        conn_id="conn-method-dispatch",
        role=role,
        scopes=["operator.admin"] if role == "operator" else [],
        client={"id": "test"},
        device_id=None,
        remote_ip="127.0.0.1",
    )
    peer.start()
    await answer_request(TABLE, app, peer, {"id": "r1", "method": method, "params": params})
    await peer.drain(5.0)
    await peer.stop()
    (frame,) = transport.frames
    assert frame["id"] == "r1"
    return frame


def assert_hand_read(method: str, model: type[Any], reads: list[str]) -> None:
    """``method`` is one the reference reads by hand: its registered and declared model is
    ``model``, the dispatcher leaves it unchecked, and the derived schema lists exactly the
    properties ``reads`` (any value of each, any other property)."""
    assert PARAMS[method] is model
    assert TABLE[method].params is model
    assert not TABLE[method].check
    assert derived_schema(model) == {"type": "object", "properties": {key: {} for key in reads}}
