"""Binding: a host without a usable IPv6 address still serves IPv4, and says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.helpers.bundled_gateway import bundled_gateway, raw_operator

pytestmark = [pytest.mark.integration, pytest.mark.timeout(30)]

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
