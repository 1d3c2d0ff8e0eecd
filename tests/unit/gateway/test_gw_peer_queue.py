"""A :class:`~gateway.peer.Peer` owns a send queue, not the socket: frames, after-send
callbacks and the close go through its transport in the order they were queued. Here the
transport is an in-memory recorder; over a real socket the same is covered by
``tests/integration/gateway/server`` (``test_gw_server_abuse.py``: slow consumers, disconnects)."""

from __future__ import annotations

import asyncio

import orjson

from gateway.peer import Peer


class Recorder:
    """Writes to a list; ``refuse_after`` frames, behaves as a closed connection."""

    def __init__(self, refuse_after: int | None = None) -> None:
        self.log: list[object] = []
        self.refuse_after = refuse_after

    async def send(self, data: bytes) -> bool:
        await asyncio.sleep(0)
        sent = sum(1 for item in self.log if isinstance(item, dict))
        if self.refuse_after is not None and sent >= self.refuse_after:
            return False
        self.log.append(orjson.loads(data))
        return True

    async def close(self, code: int, reason: str) -> None:
        self.log.append(("close", code, reason))

    def abort(self) -> None:
        self.log.append("abort")


def _peer(transport: Recorder) -> Peer:
    return Peer(
        transport=transport,
        conn_id="conn-1",
        role="operator",
        scopes=["operator.read"],
        client={"id": "cli"},
        device_id="dev",
        remote_ip="127.0.0.1",
    )


async def test_frames_callbacks_and_close_go_out_in_queue_order() -> None:
    transport = Recorder()
    peer = _peer(transport)
    peer.start()
    peer.respond("r1", True, {"a": 1})
    peer.after_sent(lambda: transport.log.append("after r1"))
    peer.send_event("tick", {"ts": 1})
    await peer.close(1008, "device removed")
    assert transport.log == [
        {"type": "res", "id": "r1", "ok": True, "payload": {"a": 1}},
        "after r1",
        {"type": "event", "event": "tick", "payload": {"ts": 1}, "seq": 1},
        ("close", 1008, "device removed"),
    ]
    await peer.stop()


async def test_a_closed_connection_stops_the_writer_and_drops_the_rest() -> None:
    transport = Recorder(refuse_after=1)
    peer = _peer(transport)
    peer.start()
    peer.respond("r1", True)
    peer.respond("r2", True)
    peer.after_sent(lambda: transport.log.append("never"))
    await peer.drain(1.0)
    assert transport.log == [{"type": "res", "id": "r1", "ok": True}]
    assert peer.closed
    peer.respond("r3", True)  # queued after the close: ignored
    await peer.stop()
    assert transport.log == [{"type": "res", "id": "r1", "ok": True}]
