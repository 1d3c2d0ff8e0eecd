"""Forwarded client headers from a peer that is not a trusted proxy, side by side: the REAL
gateway and OUR gateway must give the same HTTP answer to the WebSocket upgrade (status line,
headers and JSON body of the 403 ``proxy_attribution_required``), from 127.0.0.1 and from
another loopback address, and both upgrade a plain request."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.bundled_gateway import BundledGateway, UpgradeAnswer, http_upgrade
from tests.helpers.real_openclaw import GatewayFactory, OpenClawInstall, RealGateway

pytestmark = pytest.mark.timeout(300)

HEADERS = [
    ("X-Forwarded-For", "203.0.113.7"),
    ("X-Forwarded-For", "127.0.0.1"),
    ("Forwarded", "for=203.0.113.7;proto=https"),
    ("X-Real-IP", "203.0.113.7"),
    ("X-Forwarded-Proto", "https"),
    ("X-Forwarded-Host", "gateway.example"),
    ("Tailscale-User-Login", "someone@example.com"),
]
SOURCES = ["127.0.0.1", "127.0.0.2"]


@pytest.fixture(scope="module")
def real(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """One real gateway with its default config: no trusted proxies."""
    factory = GatewayFactory(openclaw_install)
    try:
        yield factory()
    finally:
        factory.close()


@pytest.fixture(scope="module")
def ours() -> Iterator[BundledGateway]:
    """Our gateway in a subprocess, no ``--trusted-proxy``."""
    with BundledGateway.start() as gw:
        yield gw


def _comparable(answer: UpgradeAnswer) -> tuple[int, str, list[tuple[str, str]], bytes]:
    # A 101 carries a per-request Sec-WebSocket-Accept and maybe extensions: status only.
    if answer.status == 101:
        return (101, answer.reason, [], b"")
    return (answer.status, answer.reason, answer.headers, answer.body)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize(("name", "value"), HEADERS, ids=[f"{h}={v}" for h, v in HEADERS])
async def test_untrusted_forwarded_headers_same_answer(
    real: RealGateway, ours: BundledGateway, name: str, value: str, source: str
) -> None:
    """The same 403 answer, byte for byte."""
    theirs = await http_upgrade(real.port, [(name, value)], source=source)
    mine = await http_upgrade(ours.port, [(name, value)], source=source)
    assert theirs.status == 403, theirs
    assert _comparable(mine) == _comparable(theirs)


async def test_plain_upgrade_is_accepted_by_both(real: RealGateway, ours: BundledGateway) -> None:
    """Without forwarding headers both gateways switch protocols."""
    theirs = await http_upgrade(real.port)
    mine = await http_upgrade(ours.port)
    assert theirs.status == mine.status == 101
