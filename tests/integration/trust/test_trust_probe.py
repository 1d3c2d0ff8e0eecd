"""Integration tests: probing real TLS endpoints on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust import probe_fingerprint, system_trusts
from tests.helpers.tls import (
    SelfSignedCert,
    make_self_signed_cert,
    plain_tcp_server,
    tls_server,
    unused_port,
)

BOUND = 10.0
"""Upper limit for any test body."""


@pytest.fixture(scope="module")
def cert(tmp_path_factory: pytest.TempPathFactory) -> SelfSignedCert:
    return make_self_signed_cert(tmp_path_factory.mktemp("tls"))


async def test_probe_returns_the_certificate_fingerprint(cert: SelfSignedCert) -> None:
    """The probe reads the leaf certificate of a TLS 1.3 server and hashes its DER."""
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        fp = await probe_fingerprint(server.host, server.port, timeout=3.0)
        assert fp == cert.fingerprint
        assert server.connections == 1


async def test_probe_works_with_an_ec_certificate(tmp_path: Path) -> None:
    """An ECDSA certificate is fingerprinted the same way."""
    ec_cert = make_self_signed_cert(tmp_path, key_type="ec")
    async with asyncio.timeout(BOUND), tls_server(ec_cert) as server:
        assert await probe_fingerprint(server.host, server.port) == ec_cert.fingerprint


async def test_probe_twice_sees_the_same_fingerprint(cert: SelfSignedCert) -> None:
    """Probes close their connection cleanly, so a second probe works the same."""
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        first = await probe_fingerprint(server.host, server.port)
        second = await probe_fingerprint("[127.0.0.1]", server.port)
        assert first == second == cert.fingerprint


async def test_probe_closed_port_is_unavailable_quickly() -> None:
    """Nothing listening: TrustError('unavailable') saying unreachable, well before the timeout."""
    port = unused_port()
    started = time.monotonic()
    async with asyncio.timeout(BOUND):
        with pytest.raises(TrustError) as info:
            await probe_fingerprint("127.0.0.1", port, timeout=3.0)
    assert time.monotonic() - started < 2.0
    assert info.value.kind == "unavailable"
    assert info.value.endpoint == f"127.0.0.1:{port}"
    assert "unreachable" in info.value.detail
    assert f"127.0.0.1:{port}" in str(info.value)


async def test_probe_plain_tcp_server_is_unavailable_quickly() -> None:
    """A plain-TCP (HTTP-ish) server: TrustError('unavailable') saying it does not speak TLS."""
    started = time.monotonic()
    async with asyncio.timeout(BOUND), plain_tcp_server() as server:
        with pytest.raises(TrustError) as info:
            await probe_fingerprint(server.host, server.port, timeout=3.0)
    assert time.monotonic() - started < 2.0
    assert info.value.kind == "unavailable"
    assert "does not speak TLS" in info.value.detail


async def test_probe_plain_tcp_server_that_closes_is_unavailable() -> None:
    """A server that hangs up on the ClientHello does not speak TLS either."""
    async with asyncio.timeout(BOUND), plain_tcp_server(reply=b"") as server:
        with pytest.raises(TrustError) as info:
            await probe_fingerprint(server.host, server.port, timeout=3.0)
    assert info.value.kind == "unavailable"
    assert "does not speak TLS" in info.value.detail


async def test_probe_silent_server_times_out() -> None:
    """A server that never answers the ClientHello: unavailable after the timeout."""
    started = time.monotonic()
    async with asyncio.timeout(BOUND), plain_tcp_server(reply=None) as server:
        with pytest.raises(TrustError) as info:
            await probe_fingerprint(server.host, server.port, timeout=0.3)
    assert time.monotonic() - started < 3.0
    assert info.value.kind == "unavailable"
    assert "no TLS handshake within 0.3s" in info.value.detail


async def test_probe_rejects_non_positive_timeout() -> None:
    """A zero timeout is a programming error."""
    with pytest.raises(ValueError, match="timeout"):
        await probe_fingerprint("127.0.0.1", 1, timeout=0)


async def test_system_does_not_trust_a_self_signed_server(cert: SelfSignedCert) -> None:
    """The system CA store rejects the self-signed gateway certificate."""
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        assert await system_trusts(server.host, server.port) is False


async def test_system_trusts_a_certificate_from_its_store(
    cert: SelfSignedCert, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With the certificate in the (test) system store, chain and IP SAN verify."""
    monkeypatch.setenv("SSL_CERT_FILE", str(cert.cert_path))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    async with asyncio.timeout(BOUND), tls_server(cert) as server:
        assert await system_trusts(server.host, server.port) is True
        assert await system_trusts("localhost", server.port) is True
        wrong_name = await system_trusts(server.host, server.port, server_hostname="other.test")
        assert wrong_name is False


async def test_system_trusts_unreachable_raises() -> None:
    """An unreachable endpoint is not a verification failure: it raises unavailable."""
    async with asyncio.timeout(BOUND):
        with pytest.raises(TrustError) as info:
            await system_trusts("127.0.0.1", unused_port())
    assert info.value.kind == "unavailable"


async def test_system_trusts_plain_tcp_raises() -> None:
    """A non-TLS endpoint raises unavailable rather than answering False."""
    async with asyncio.timeout(BOUND), plain_tcp_server() as server:
        with pytest.raises(TrustError) as info:
            await system_trusts(server.host, server.port)
    assert info.value.kind == "unavailable"
