"""Integration tests: the gateway certificate is made once, reused, and served as TLS 1.3 only."""

from __future__ import annotations

import asyncio
import hashlib
import os
import ssl
import stat
import sys
from pathlib import Path

import pytest
from cryptography import x509

from gateway.tls import (
    CERT_FILENAME,
    KEY_FILENAME,
    TlsMaterial,
    TlsMaterialError,
    ensure_certificate,
    server_context,
)

BOUND = 10.0


def test_generated_once_and_reused(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path)
    assert first.cert_path == tmp_path / "tls" / CERT_FILENAME
    assert first.key_path == tmp_path / "tls" / KEY_FILENAME
    stamp = (first.cert_path.stat().st_mtime_ns, first.key_path.stat().st_mtime_ns)
    cert_pem = first.cert_path.read_bytes()

    again = ensure_certificate(tmp_path)
    assert again == first
    assert (again.cert_path.stat().st_mtime_ns, again.key_path.stat().st_mtime_ns) == stamp
    assert again.cert_path.read_bytes() == cert_pem


def test_fingerprint_is_sha256_of_the_der(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path)
    der = ssl.PEM_cert_to_DER_cert(material.cert_path.read_text())
    assert material.fingerprint == hashlib.sha256(der).hexdigest()
    assert len(material.fingerprint) == 64
    assert material.fingerprint == material.fingerprint.lower()


def test_certificate_contents(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path, hostname="studio-box")
    cert = x509.load_pem_x509_certificate(material.cert_path.read_bytes())
    assert cert.subject.rfc4514_string() == "CN=openclaw-gateway"
    assert cert.issuer == cert.subject
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {"localhost", "studio-box", "studio-box.local"} <= set(
        san.get_values_for_type(x509.DNSName)
    )
    assert {str(ip) for ip in san.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert 3649 <= lifetime.days <= 3651


def test_invalid_hostnames_are_left_out(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path, hostname="not a host!")
    cert = x509.load_pem_x509_certificate(material.cert_path.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_key_is_private(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path)
    assert stat.S_IMODE(material.key_path.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "tls").stat().st_mode) & 0o077 == 0


def test_a_key_without_certificate_is_replaced(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path)
    first.cert_path.unlink()
    second = ensure_certificate(tmp_path)
    assert second.fingerprint != first.fingerprint
    assert ensure_certificate(tmp_path) == second


def test_a_broken_key_is_an_error_not_a_silent_new_pin(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path)
    material.key_path.write_text("garbage")
    with pytest.raises(TlsMaterialError, match="cannot read the gateway key"):
        ensure_certificate(tmp_path)
    assert material.cert_path.exists()


def test_a_mismatched_key_is_an_error(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path / "a")
    other = ensure_certificate(tmp_path / "b")
    os.replace(other.key_path, material.key_path)
    with pytest.raises(TlsMaterialError, match="does not match"):
        ensure_certificate(tmp_path / "a")


def test_a_broken_certificate_is_an_error(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path)
    material.cert_path.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    with pytest.raises(TlsMaterialError, match="cannot read the gateway certificate"):
        ensure_certificate(tmp_path)


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    data = await reader.read(100)
    writer.write(data)
    await writer.drain()
    writer.close()


async def _serve(material: TlsMaterial) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0, ssl=server_context(material))
    return server, server.sockets[0].getsockname()[1]


def _client(maximum: ssl.TLSVersion | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if maximum is not None:
        context.maximum_version = maximum
    return context


async def test_server_context_accepts_tls13(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path)
    server, port = await _serve(material)
    try:
        async with asyncio.timeout(BOUND):
            reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=_client())
            ssl_object = writer.get_extra_info("ssl_object")
            assert ssl_object.version() == "TLSv1.3"
            der = ssl_object.getpeercert(binary_form=True)
            assert hashlib.sha256(der).hexdigest() == material.fingerprint
            writer.write(b"ping")
            assert await reader.read(100) == b"ping"
            writer.close()
            await writer.wait_closed()
    finally:
        server.close()
        await server.wait_closed()


async def test_server_context_refuses_tls12(tmp_path: Path) -> None:
    material = ensure_certificate(tmp_path)
    server, port = await _serve(material)
    try:
        async with asyncio.timeout(BOUND):
            # The server aborts the handshake: an SSL alert, or a reset when it is quicker.
            with pytest.raises((ssl.SSLError, ConnectionResetError)):
                await asyncio.open_connection(
                    "127.0.0.1", port, ssl=_client(maximum=ssl.TLSVersion.TLSv1_2)
                )
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("server_hostname", ["localhost", "127.0.0.1"])
async def test_certificate_verifies_when_trusted_explicitly(
    tmp_path: Path, server_hostname: str
) -> None:
    """With the certificate as the trust anchor, full verification (incl. hostname) passes."""
    material = ensure_certificate(tmp_path)
    server, port = await _serve(material)
    context = ssl.create_default_context(cafile=str(material.cert_path))
    try:
        async with asyncio.timeout(BOUND):
            _reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=context, server_hostname=server_hostname
            )
            assert writer.get_extra_info("ssl_object").version() == "TLSv1.3"
            writer.close()
            await writer.wait_closed()
    finally:
        server.close()
        await server.wait_closed()
