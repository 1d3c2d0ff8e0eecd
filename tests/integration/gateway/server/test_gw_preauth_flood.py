"""The pre-auth budget under floods from many loopback addresses (issue #14, items 5 and 6).

127.0.0.0/8 is all loopback on Linux, so binding the client socket to 127.0.0.2 ... 127.0.0.21
gives twenty distinct source addresses. Every socket is closed at the end of each test.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from websockets.asyncio.client import ClientConnection, connect

from gateway.preauth import PER_ADDRESS, RESERVED, SILENT_AFTER_S, TOTAL
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import RawClient, bundled_gateway, wait_for

pytestmark = pytest.mark.timeout(60)

ATTACKERS = [f"127.0.0.{i}" for i in range(2, 22)]


@contextlib.asynccontextmanager
async def silent_sockets(url: str, sources: list[str], each: int) -> AsyncIterator[list[Any]]:
    """``each`` WebSocket connections from every source address that read the challenge and
    then say nothing; all closed on exit."""
    sockets: list[ClientConnection] = []

    async def open_one(source: str) -> None:
        with contextlib.suppress(OSError, websockets.InvalidHandshake, TimeoutError):
            sockets.append(
                await connect(
                    url,
                    open_timeout=10,
                    close_timeout=1,
                    ping_interval=None,
                    local_addr=(source, 0),
                )
            )

    try:
        await asyncio.gather(*(open_one(s) for s in sources for _ in range(each)))
        yield sockets
    finally:
        for ws in sockets:
            ws.transport.abort()
        await asyncio.gather(*(ws.wait_closed() for ws in sockets))


async def signed_connect(url: str, source: str = "127.0.0.1") -> dict[str, Any]:
    """A fresh device's operator ``connect`` from ``source``; its ``res`` (the socket is
    closed afterwards)."""
    client = await RawClient.open(url, local_addr=(source, 0))
    try:
        return await client.connect(DeviceIdentity.generate(), scopes=["operator.read"])
    finally:
        await client.close()


async def test_silent_flood_from_twenty_addresses_leaves_room_for_another(tmp_path: Path) -> None:
    """640 silent sockets, 32 from each of 20 addresses, stay open; a client from 127.0.0.1
    and one from yet another address get hello-ok while the flood holds, without evicting
    anyone (the newcomers' share of the budget is kept free for them)."""
    async with bundled_gateway(tmp_path) as gw:
        # Nothing turns silent during this test: only the reserved share can let them in.
        gw.preauth.silent_after_s = 600
        async with silent_sockets(gw.url, ATTACKERS, 32) as flood:
            await wait_for(lambda: gw.preauth.pending >= TOTAL - RESERVED, 20)
            assert len(flood) == len(ATTACKERS) * PER_ADDRESS
            assert all(gw.preauth.held_by(a) <= PER_ADDRESS for a in ATTACKERS)
            for source in ("127.0.0.1", "127.0.0.99"):
                res = await signed_connect(gw.url, source)
                assert res["ok"] is True, res
            assert gw.preauth.evicted == 0
            assert all(ws.close_code is None for ws in flood)


async def test_silent_flood_is_evicted_once_silent(tmp_path: Path) -> None:
    """With the budget full of silent sockets, the newcomers' share used up too, a new client
    gets in by pushing out a socket that has been silent past the challenge window, taken from
    the address holding the most."""
    async with bundled_gateway(tmp_path) as gw:
        gw.preauth.reserved = 0
        gw.preauth.silent_after_s = 0.5
        async with silent_sockets(gw.url, ATTACKERS, 32):
            await wait_for(lambda: gw.preauth.pending >= TOTAL, 20)
            res = await signed_connect(gw.url)
            assert res["ok"] is True, res
            assert gw.preauth.evicted >= 1
            assert gw.preauth.pending <= TOTAL


async def test_fifty_concurrent_signed_connects_from_one_address_all_succeed(
    tmp_path: Path,
) -> None:
    """50 signed connects at once from one address (more than its 32 slots): the extra ones
    wait for a slot instead of anyone being cut off mid-handshake."""
    async with bundled_gateway(tmp_path) as gw:
        results = await asyncio.gather(*(signed_connect(gw.url) for _ in range(50)))
        assert [r["ok"] for r in results] == [True] * 50, [r for r in results if not r["ok"]]
        assert gw.preauth.evicted == 0
        await wait_for(lambda: not gw.preauth.pending and not gw.preauth.waiting, 5)


async def test_signed_connects_push_out_only_the_silent_sockets(tmp_path: Path) -> None:
    """32 silent sockets fill an address's slots; once they have been silent past the
    challenge window, 50 concurrent signed connects from that address all succeed: only the
    silent ones are evicted (dropped without a close frame), no handshaking client is."""
    source = "127.0.0.9"
    async with bundled_gateway(tmp_path) as gw, silent_sockets(gw.url, [source], 32) as silent:
        await wait_for(lambda: gw.preauth.held_by(source) == PER_ADDRESS, 10)
        await asyncio.sleep(SILENT_AFTER_S + 0.2)
        results = await asyncio.gather(*(signed_connect(gw.url, source) for _ in range(50)))
        assert [r["ok"] for r in results] == [True] * 50, [r for r in results if not r["ok"]]
        assert 1 <= gw.preauth.evicted <= len(silent)
        await wait_for(lambda: sum(ws.close_code is not None for ws in silent) >= 1, 5)
        assert {ws.close_code for ws in silent if ws.close_code is not None} == {1006}


async def test_a_socket_that_talks_is_never_evicted(tmp_path: Path) -> None:
    """A client that sent part of its connect before the window ran out keeps its slot while
    newcomers from its address wait; it then finishes its handshake."""
    source = "127.0.0.10"
    async with bundled_gateway(tmp_path) as gw:
        gw.preauth.silent_after_s = 0.3
        slow = await RawClient.open(gw.url, local_addr=(source, 0))
        try:
            await slow.ws.ping()  # a byte from the client: no longer silent
            async with silent_sockets(gw.url, [source], PER_ADDRESS - 1):
                await wait_for(lambda: gw.preauth.held_by(source) == PER_ADDRESS, 10)
                await asyncio.sleep(0.5)
                results = await asyncio.gather(
                    *(signed_connect(gw.url, source) for _ in range(PER_ADDRESS))
                )
                assert all(r["ok"] for r in results), results
                res = await slow.connect(DeviceIdentity.generate(), scopes=["operator.read"])
                assert res["ok"] is True, res
                assert gw.preauth.evicted == PER_ADDRESS - 1
        finally:
            await slow.close()
