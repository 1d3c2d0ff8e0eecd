"""The node.invoke idempotency cache: duplicate keys are dispatched once, and the completed
results it keeps are bounded by count, age and accounted bytes (not wall time)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from gateway.nodes import invoke as invoke_module
from gateway.nodes.invoke import (
    IDEMPOTENCY_MAX_BYTES,
    IDEMPOTENCY_MAX_ENTRY_BYTES,
    InvokeError,
    InvokeRouter,
)
from gateway.peer import Peer

MIB = 1024 * 1024


class _Node:
    """A fake node peer that answers every ``node.invoke.request`` on the next loop turn
    with ``payloadJSON`` of ``size`` bytes (or an error for a ``fail`` command)."""

    def __init__(self, router: InvokeRouter, size: int = 16) -> None:
        self.device_id = "node-1"
        self.router = router
        self.size = size
        self.dispatched = 0
        self.answer = True

    def send_event(self, name: str, payload: dict[str, Any], seq: bool = True) -> None:
        if name != "node.invoke.request":
            return
        self.dispatched += 1
        if not self.answer:
            return
        result: dict[str, Any] = {"id": payload["id"], "nodeId": self.device_id}
        if payload["command"] == "fail":
            result.update(ok=False, error={"code": "X", "message": "no"})
        else:
            result.update(ok=True, payloadJSON='"' + "x" * (self.size - 2) + '"')
        loop = asyncio.get_running_loop()
        loop.call_soon(self.router.on_result, cast(Peer, self), result)

    async def invoke(self, key: str, command: str = "probe.echo") -> dict[str, Any]:
        return await self.router.invoke(
            cast(Peer, self), command, None, timeout_ms=5_000, idempotency_key=key
        )


async def test_many_one_mib_results_stay_within_the_byte_budget() -> None:
    """100 invokes with distinct keys answering 1 MiB each: the kept results never account
    for more than the budget, and the newest ones are still deduplicated."""
    router = InvokeRouter()
    node = _Node(router, size=MIB)
    peak = 0
    for i in range(100):
        result = await node.invoke(f"k{i}")
        assert len(result["payloadJSON"]) == MIB
        peak = max(peak, router.cached_bytes)
        assert router.cached_bytes <= IDEMPOTENCY_MAX_BYTES
    assert node.dispatched == 100
    assert IDEMPOTENCY_MAX_BYTES // 2 < peak <= IDEMPOTENCY_MAX_BYTES
    assert router.cached_count < 100
    await node.invoke("k99")  # the newest result is kept: not dispatched again
    assert node.dispatched == 100
    await node.invoke("k0")  # the oldest was evicted: dispatched again
    assert node.dispatched == 101
    assert router.cached_bytes <= IDEMPOTENCY_MAX_BYTES


async def test_duplicate_key_of_a_normal_result_is_dispatched_once() -> None:
    """Concurrent and later duplicates of a small result share one dispatch."""
    router = InvokeRouter()
    node = _Node(router, size=1_000)
    a, b = await asyncio.gather(node.invoke("same"), node.invoke("same"))
    c = await node.invoke("same")
    assert a is b is c
    assert node.dispatched == 1
    assert 1_000 < router.cached_bytes < 4_000


async def test_a_result_over_the_entry_cap_is_not_kept() -> None:
    """Callers waiting on a too-big result get it; a later duplicate dispatches again."""
    router = InvokeRouter()
    node = _Node(router, size=IDEMPOTENCY_MAX_ENTRY_BYTES + 1)
    a, b = await asyncio.gather(node.invoke("big"), node.invoke("big"))
    assert a is b
    assert node.dispatched == 1
    assert (router.cached_bytes, router.cached_count) == (0, 0)
    await node.invoke("big")
    assert node.dispatched == 2


async def test_accounting_follows_failures_expiry_and_the_entry_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Failed invokes cost nothing; expired and count-evicted results give their bytes back."""
    router = InvokeRouter()
    node = _Node(router, size=10_000)
    with pytest.raises(InvokeError):
        await node.invoke("bad", "fail")
    assert (router.cached_bytes, router.cached_count) == (0, 0)
    monkeypatch.setattr(invoke_module, "IDEMPOTENCY_ENTRIES", 3)
    for i in range(5):
        await node.invoke(f"k{i}")
    assert router.cached_count == 3
    one = router.cached_bytes // 3
    assert 10_000 < one < 30_000
    assert router.cached_bytes == 3 * one
    router._expire_idempotent(float("inf"))
    assert (router.cached_bytes, router.cached_count) == (0, 0)


async def test_an_in_flight_key_evicted_by_count_is_not_charged() -> None:
    """A dispatch whose key was pushed out while in flight adds nothing when it completes."""
    router = InvokeRouter()
    node = _Node(router, size=10_000)
    node.answer = False
    slow = asyncio.ensure_future(node.invoke("slow"))
    async with asyncio.timeout(5):
        while not node.dispatched:
            await asyncio.sleep(0)
    (key,) = list(router._idempotent)
    router._drop(key)
    (pending,) = list(router._pending.values())
    router.on_result(
        cast(Peer, node),
        {"id": pending.invoke_id, "nodeId": node.device_id, "ok": True, "payload": {"v": 1}},
    )
    assert (await slow)["payload"] == {"v": 1}
    assert (router.cached_bytes, router.cached_count) == (0, 0)


async def test_pending_invoke_bytes_are_bounded_over_all_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nodes that never answer: past the total pending-bytes bound (here 3 KiB, 2 KiB per
    node) an invoke is refused at once with the total scope in its details; a node's answer
    frees its bytes for the next invoke."""
    monkeypatch.setattr(invoke_module, "MAX_PENDING_BYTES_PER_NODE", 2048)
    monkeypatch.setattr(invoke_module, "MAX_PENDING_BYTES_TOTAL", 3072)
    router = InvokeRouter()
    nodes = []
    for index in range(3):
        node = _Node(router)
        node.device_id = f"node-{index}"
        node.answer = False
        nodes.append(node)
    blob = "x" * 1022  # 1024 bytes of JSON

    def start(node: _Node, key: str) -> asyncio.Task[dict[str, Any]]:
        coro = router.invoke(
            cast(Peer, node), "probe.slow", blob, timeout_ms=60_000, idempotency_key=key
        )
        return asyncio.get_running_loop().create_task(coro)

    waiting = [start(nodes[0], "a"), start(nodes[0], "b"), start(nodes[1], "c")]
    await _settle()
    assert router.pending_bytes == 3072
    with pytest.raises(InvokeError) as refused:
        await start(nodes[2], "d")
    details = refused.value.shape["details"]
    assert details == {
        "scope": "total",
        "limitBytes": 3072,
        "pendingBytes": 3072,
        "paramsBytes": 1024,
    }
    with pytest.raises(InvokeError) as per_node:
        await start(nodes[0], "e")
    assert per_node.value.shape["details"]["scope"] == "node"
    router.on_result(
        cast(Peer, nodes[1]),
        {"id": _last_invoke_id(router, "node-1"), "nodeId": "node-1", "ok": True},
    )
    assert (await waiting[2])["ok"] is True
    assert router.pending_bytes == 2048
    fourth = start(nodes[2], "d2")
    await _settle()
    assert router.pending_bytes == 3072
    router.fail_all("shutting down")
    for task in [*waiting[:2], fourth]:
        with pytest.raises(InvokeError):
            await task
    assert router.pending_bytes == 0


async def _settle() -> None:
    """Let the invoke tasks (a caller's, then its dispatch's) reach the node."""
    for _ in range(5):
        await asyncio.sleep(0)


def _last_invoke_id(router: InvokeRouter, node_id: str) -> str:
    """The id of a node's pending invoke (the router's own bookkeeping)."""
    return next(p.invoke_id for p in router._pending.values() if p.node_id == node_id)
