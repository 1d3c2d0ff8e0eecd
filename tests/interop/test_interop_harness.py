"""Self-tests of the real-OpenClaw harness (tests/helpers/real_openclaw.py).

They check that the harness starts a real gateway that speaks the protocol, serves TLS with the
advertised fingerprint, answers the CLI and comes back on the same port after a restart.

The challenge and the CLI tests share the module's default gateway (:func:`real` in
``tests/interop/conftest.py``): the first only reads the first frame of a connection it never
completes, the second pairs no device that stays pending (the real CLI's loopback device is
approved silently), so neither leaves anything the other's assertions could see. The TLS and
the restart tests start their own (another config; a restart).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import ssl
from typing import Any

import pytest
from websockets.asyncio.client import connect

from tests.helpers.real_openclaw import GatewayFactory, RealGateway

pytestmark = pytest.mark.timeout(240)


def _insecure_tls() -> ssl.SSLContext:
    """A client context that accepts the gateway's self-signed certificate (tests only)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def _first_frame(gateway: RealGateway) -> dict[str, Any]:
    tls = _insecure_tls() if gateway.tls else None
    async with connect(gateway.url, ssl=tls, open_timeout=20) as ws:
        raw = await asyncio.wait_for(ws.recv(), timeout=20)
    assert isinstance(raw, str)
    frame = json.loads(raw)
    assert isinstance(frame, dict)
    return frame


def _assert_challenge(frame: dict[str, Any]) -> None:
    assert frame["type"] == "event"
    assert frame["event"] == "connect.challenge"
    payload = frame["payload"]
    assert isinstance(payload["nonce"], str)
    assert payload["nonce"]
    assert isinstance(payload["ts"], int)
    assert not isinstance(payload["ts"], bool)


async def test_gateway_sends_connect_challenge_first(real: RealGateway) -> None:
    gateway = real

    assert gateway.url == f"ws://127.0.0.1:{gateway.port}"
    assert gateway.tls_sha256 is None
    _assert_challenge(await _first_frame(gateway))


async def test_tls_fingerprint_matches_served_certificate(real_gateway: GatewayFactory) -> None:
    gateway = real_gateway(tls=True)

    with (
        socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as raw,
        _insecure_tls().wrap_socket(raw) as tls_sock,
    ):
        der = tls_sock.getpeercert(binary_form=True)
    assert der is not None
    assert gateway.url == f"wss://127.0.0.1:{gateway.port}"
    assert gateway.tls_sha256 == hashlib.sha256(der).hexdigest()
    assert gateway.tls_sha256 is not None
    assert len(gateway.tls_sha256) == 64
    assert gateway.tls_sha256 == gateway.tls_sha256.lower()
    _assert_challenge(await _first_frame(gateway))


def test_cli_json_nodes_pending(real: RealGateway) -> None:
    gateway = real

    pending = gateway.cli_json("nodes", "pending")

    assert pending == []
    devices = gateway.cli_json("devices", "list", "--json")
    assert isinstance(devices, dict)
    assert devices.get("pending") == []


async def test_restart_comes_back_on_same_port(real_gateway: GatewayFactory) -> None:
    gateway = real_gateway()
    port, pid, state_dir = gateway.port, gateway.pid, gateway.state_dir
    _assert_challenge(await _first_frame(gateway))

    gateway.restart()

    assert gateway.running
    assert (gateway.port, gateway.state_dir) == (port, state_dir)
    assert gateway.pid != pid
    assert gateway.logs().count("[gateway] ready") == 2
    _assert_challenge(await _first_frame(gateway))
