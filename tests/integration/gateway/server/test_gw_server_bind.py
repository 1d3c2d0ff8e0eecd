"""Binding: a host without a usable IPv6 address still serves IPv4, and says so; the port
opens only once chat is ready."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from gateway.server import GatewayServer
from tests.helpers.bundled_gateway import bundled_gateway, gateway_config, raw_operator
from tests.helpers.ports import free_port, port_open

pytestmark = pytest.mark.timeout(30)

#: A unique-local IPv6 address no test machine has: binding it fails like ``::1`` does on a
#: host with IPv6 disabled (EADDRNOTAVAIL, or EAFNOSUPPORT without IPv6 at all).
ABSENT_IPV6 = "fd00:0:0:dead::beef"


async def test_unbindable_ipv6_falls_back_to_ipv4(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "gateway.server")
    async with bundled_gateway(tmp_path, hosts=["127.0.0.1", ABSENT_IPV6]) as gw:
        assert [s.getsockname()[0] for s in gw._server.sockets] == ["127.0.0.1"]  # type: ignore[union-attr]
        async with raw_operator(gw.url) as op:
            assert (await op.ok("health"))["ok"] is True
    assert "IPv6 is unavailable here" in caplog.text


async def test_an_unbindable_ipv4_address_is_still_an_error(tmp_path: Path) -> None:
    """Only IPv6 is optional: an IPv4 address that cannot be bound stops the start."""
    with pytest.raises(OSError, match=r"192\.0\.2\.1"):
        async with bundled_gateway(tmp_path, hosts=["192.0.2.1", "127.0.0.1"]):
            pass


async def test_the_first_client_in_finds_chat_ready(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window reconnecting after a crash knocks the moment the port opens: its first
    ``chat.history`` must be answered, not refused with "chat is starting". The chat
    service is made slow to start; clients knock all the while."""
    import gateway.chat_host

    real_start = gateway.chat_host.start_chat

    async def slow_start(app: Any) -> Any:
        await asyncio.sleep(0.5)
        return await real_start(app)

    monkeypatch.setattr(gateway.chat_host, "start_chat", slow_start)
    port = free_port()
    server = GatewayServer(gateway_config(tmp_path, port=port))
    starting = asyncio.create_task(server.start())
    try:
        async with asyncio.timeout(10):
            while not port_open(port):
                await asyncio.sleep(0.01)
        async with raw_operator(f"ws://127.0.0.1:{port}") as op:
            answer = await op.call("chat.history", {"sessionKey": "main"})
        assert answer["ok"] is True, answer
        await starting
    finally:
        if not starting.done():
            starting.cancel()
        await server.close()
