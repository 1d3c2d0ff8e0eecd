"""Forwarded client headers from a peer that is not a trusted proxy, side by side: the REAL
gateway and OUR gateway must give the same HTTP answer to the WebSocket upgrade (status line,
headers and JSON body of the 403 ``proxy_attribution_required``), from 127.0.0.1 and from
another loopback address, and both upgrade a plain request."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import BundledGateway, RawClient, UpgradeAnswer, http_upgrade
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


# ------------------------------------------------------------------ behind a trusted proxy

TRUSTED = ["127.0.0.1"]


@pytest.fixture(scope="module")
def real_proxied(openclaw_install: OpenClawInstall) -> Iterator[RealGateway]:
    """A real gateway with ``gateway.trustedProxies: ["127.0.0.1"]``."""
    factory = GatewayFactory(openclaw_install)
    try:
        yield factory(gateway_extra={"trustedProxies": TRUSTED})
    finally:
        factory.close()


@pytest.fixture(scope="module")
def ours_proxied() -> Iterator[BundledGateway]:
    """Our gateway with ``--trusted-proxy 127.0.0.1``."""
    with BundledGateway.start(args=[a for p in TRUSTED for a in ("--trusted-proxy", p)]) as gw:
        yield gw


def _outcome(res: dict[str, Any]) -> dict[str, Any]:
    """What must match: ok, or the error's code, message and details (requestId and the
    exact retryAfterMs masked)."""
    if res["ok"]:
        return {"ok": True}
    error = dict(res["error"])
    details = dict(error.get("details") or {})
    if "requestId" in details:
        details["requestId"] = "<id>"
    if "retryAfterMs" in error:
        error["retryAfterMs"] = "<ms>"
    error["details"] = details
    return {"ok": False, "error": error}


async def _connect(url: str, token: str, client_ip: str | None, identity: DeviceIdentity) -> Any:
    headers = [("X-Forwarded-For", client_ip)] if client_ip else []
    client = await RawClient.open(url, additional_headers=headers)
    try:
        res = await client.connect(identity, scopes=["operator.read"], auth={"token": token})
        return _outcome(res)
    finally:
        await client.close()


async def _proxy_story(url: str, port: int, token: str, devices: list[DeviceIdentity]) -> list[Any]:
    guesser, neighbour, local = devices
    steps: list[Any] = []
    for headers, source in (
        ([("X-Forwarded-For", "127.0.0.1")], "127.0.0.1"),  # names only loopback
        ([("X-Forwarded-Proto", "https")], "127.0.0.1"),  # names no client at all
        ([("X-Forwarded-For", "203.0.113.7")], "127.0.0.2"),  # not the trusted proxy
    ):
        steps.append(_comparable(await http_upgrade(port, headers, source=source)))
    for _ in range(10):
        steps.append(await _connect(url, "wrong-token", "203.0.113.7", guesser))
    steps.append(await _connect(url, token, "203.0.113.7", guesser))
    # Another client behind the same proxy has its own bucket: it is only asked to pair.
    steps.append(await _connect(url, token, "203.0.113.8", neighbour))
    steps.append(await _connect(url, token, None, local))
    return steps


async def test_trusted_proxy_story_side_by_side(
    real_proxied: RealGateway, ours_proxied: BundledGateway
) -> None:
    """Refusals of what the trusted proxy cannot vouch for, ten wrong tokens for one forwarded
    client, its lockout, a second forwarded client and a direct local one: the same answers."""
    devices = [DeviceIdentity.generate() for _ in range(3)]  # the same devices on both
    theirs = await _proxy_story(real_proxied.url, real_proxied.port, real_proxied.token, devices)
    mine = await _proxy_story(ours_proxied.url, ours_proxied.port, ours_proxied.token, devices)
    for step, (a, b) in enumerate(zip(theirs, mine, strict=True)):
        assert b == a, f"step {step}: {a!r} != {b!r}"
    assert theirs[-3]["error"]["details"]["code"] == "AUTH_RATE_LIMITED"
    assert theirs[-2]["error"]["details"]["code"] != "AUTH_RATE_LIMITED"
