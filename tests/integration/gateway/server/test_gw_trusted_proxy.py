"""Forwarded client headers (issue #14, item 7): refused with HTTP 403 unless a configured
trusted proxy sent them, and then the failed-auth buckets are keyed on the client the proxy
vouches for, so one forwarded client's failures do not lock out another.

The "proxy" is this test process on 127.0.0.1 setting ``X-Forwarded-For`` itself, exactly as
a same-host reverse proxy would; 127.0.0.2 plays a peer that is not trusted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.hub import now_ms
from gateway.server import GatewayServer
from openclaw_desktop.identity import DeviceIdentity
from tests.helpers.bundled_gateway import (
    TOKEN,
    BundledGateway,
    RawClient,
    bundled_gateway,
    http_upgrade,
    run_gateway_cli,
    wait_for,
)

pytestmark = pytest.mark.timeout(60)

PROXY_BODY = {
    "error": {
        "message": "Proxy client attribution is required. Configure gateway.trustedProxies "
        "narrowly and make the proxy overwrite or safely rebuild forwarded client headers.",
        "type": "proxy_attribution_required",
    }
}
FORWARDING = [
    ("X-Forwarded-For", "203.0.113.7"),
    ("Forwarded", "for=203.0.113.7"),
    ("X-Real-IP", "203.0.113.7"),
    ("X-Forwarded-Proto", "https"),
    ("X-Forwarded-Host", "gateway.example"),
]


async def assert_refused(port: int, headers: list[tuple[str, str]], source: str) -> None:
    answer = await http_upgrade(port, headers, source=source)
    assert (answer.status, answer.reason) == (403, "Forbidden"), answer
    assert answer.headers == [
        ("Content-Type", "application/json; charset=utf-8"),
        ("Content-Length", str(len(answer.body))),
        ("Connection", "close"),
    ]
    assert json.loads(answer.body) == PROXY_BODY


@pytest.mark.parametrize(("name", "value"), FORWARDING, ids=[h for h, _ in FORWARDING])
async def test_forwarded_headers_from_an_untrusted_peer_get_403(
    tmp_path: Path, name: str, value: str
) -> None:
    """No trusted proxy configured: any forwarding header is refused at the upgrade, before a
    challenge, a pre-auth slot or a rate-limit bucket is spent on it."""
    async with bundled_gateway(tmp_path) as gw:
        await assert_refused(gw.port, [(name, value)], "127.0.0.1")
        assert gw.preauth.pending == 0
        plain = await http_upgrade(gw.port)
        assert plain.status == 101


async def test_only_the_configured_proxy_is_trusted(tmp_path: Path) -> None:
    """With 127.0.0.1 trusted, the same header from 127.0.0.2 is still refused, and a trusted
    proxy that names no client beyond itself or loopback is refused too."""
    async with bundled_gateway(tmp_path, trusted_proxies=["127.0.0.1"]) as gw:
        await assert_refused(gw.port, [("X-Forwarded-For", "203.0.113.7")], "127.0.0.2")
        await assert_refused(gw.port, [("X-Forwarded-For", "127.0.0.1")], "127.0.0.1")
        await assert_refused(gw.port, [("X-Forwarded-Proto", "https")], "127.0.0.1")
        vouched = await http_upgrade(gw.port, [("X-Forwarded-For", "203.0.113.7")])
        assert vouched.status == 101


def pair(gw: GatewayServer, identity: DeviceIdentity) -> None:
    """Approve ``identity`` as an operator (``operator.read``), as its owner would."""
    gw.state.devices.approve(
        identity.device_id,
        identity.public_key,
        role="operator",
        scopes=["operator.read"],
        approved_via="owner",
        now_ms=now_ms(),
        client_id="cli",
        client_mode="cli",
        platform="linux",
        device_family="Linux",
    )


async def connect_as(
    gw: GatewayServer, client_ip: str | None, identity: DeviceIdentity, token: str
) -> dict[str, Any]:
    """One signed operator connect through the "proxy" on behalf of ``client_ip`` (or
    directly, for None); its ``res``."""
    headers = [("X-Forwarded-For", client_ip)] if client_ip else []
    client = await RawClient.open(gw.url, additional_headers=headers)
    try:
        return await client.connect(identity, scopes=["operator.read"], auth={"token": token})
    finally:
        await client.close()


async def test_failures_are_counted_per_vouched_client(tmp_path: Path) -> None:
    """Ten wrong-token connects forwarded for 203.0.113.7 lock out 203.0.113.7 only: a
    different forwarded client with the right token gets hello-ok (and is recorded under its
    own address), and so does a direct loopback client."""
    async with bundled_gateway(tmp_path, trusted_proxies=["127.0.0.1"]) as gw:
        guesser, other, local = (DeviceIdentity.generate() for _ in range(3))
        pair(gw, guesser)
        pair(gw, other)
        for _ in range(gw.config.auth_rate_limit_attempts):
            res = await connect_as(gw, "203.0.113.7", guesser, "wrong-token")
            assert res["error"]["details"]["code"] == "AUTH_TOKEN_MISMATCH", res
        locked = await connect_as(gw, "203.0.113.7", guesser, TOKEN)
        assert locked["error"]["details"]["code"] == "AUTH_RATE_LIMITED", locked

        res = await connect_as(gw, "203.0.113.8", other, TOKEN)
        assert res["ok"] is True, res
        await wait_for(lambda: getattr(gw.state.devices.get(other.device_id), "remote_ip", None))
        record = gw.state.devices.get(other.device_id)
        assert record is not None and record.remote_ip == "203.0.113.8"

        res = await connect_as(gw, None, local, TOKEN)
        assert res["ok"] is True, res


async def test_a_forwarded_loopback_client_is_not_local(tmp_path: Path) -> None:
    """A client behind the trusted proxy is remote even though the proxy is on loopback: an
    unpaired device is not approved silently as a local one would be."""
    async with bundled_gateway(tmp_path, trusted_proxies=["127.0.0.1"]) as gw:
        identity = DeviceIdentity.generate()
        res = await connect_as(gw, "203.0.113.9", identity, TOKEN)
        assert res["ok"] is False
        assert res["error"]["details"]["code"] == "PAIRING_REQUIRED", res
        assert gw.state.devices.get(identity.device_id) is None


async def test_the_cli_option_names_the_trusted_proxies() -> None:
    """``gateway run --trusted-proxy 127.0.0.0/8``: a forwarded client is upgraded; without
    the option the same request gets the 403."""
    headers = [("X-Forwarded-For", "203.0.113.7")]
    with BundledGateway.start(args=["--trusted-proxy", "127.0.0.0/8"]) as gw:
        assert (await http_upgrade(gw.port, headers, source="127.0.0.3")).status == 101
    with BundledGateway.start() as gw:
        assert (await http_upgrade(gw.port, headers)).status == 403


def test_the_cli_refuses_an_entry_that_is_not_an_address() -> None:
    result = run_gateway_cli("run", "--port", "0", "--trusted-proxy", "proxy.example")
    assert result.returncode == 2
    assert "not an IP address or CIDR network" in result.stderr
