"""Real TLS endpoints on loopback for tests: self-signed certificates and tiny servers.

The certificate mirrors what the real gateway generates with ``gateway.tls.autoGenerate``
(``openssl req -x509 -newkey rsa:2048 -subj /CN=openclaw-gateway``), plus subject alternative
names for ``127.0.0.1`` and ``localhost``. The fingerprint is computed by ``cryptography``,
independently of ``openclaw_desktop.trust``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import ipaddress
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

__all__ = [
    "LoopbackServer",
    "SelfSignedCert",
    "make_self_signed_cert",
    "plain_tcp_server",
    "tls_server",
    "unused_port",
]

_CLOSE_TIMEOUT = 5.0

_Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@dataclass(frozen=True)
class SelfSignedCert:
    """A certificate and key written to disk, with the certificate's fingerprint."""

    cert_path: Path
    key_path: Path
    der: bytes
    fingerprint: str


def make_self_signed_cert(
    directory: Path,
    *,
    common_name: str = "openclaw-gateway",
    key_type: Literal["rsa", "ec"] = "rsa",
    name: str = "gateway",
) -> SelfSignedCert:
    """Generate a self-signed certificate for 127.0.0.1 / localhost into ``directory``."""
    key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
    if key_type == "rsa":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    public_key = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    cert_path = directory / f"{name}-cert.pem"
    key_path = directory / f"{name}-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return SelfSignedCert(
        cert_path=cert_path,
        key_path=key_path,
        der=cert.public_bytes(serialization.Encoding.DER),
        fingerprint=cert.fingerprint(hashes.SHA256()).hex(),
    )


def unused_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on (bound once, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
    return port


@dataclass
class LoopbackServer:
    """A running test server and what it saw."""

    host: str
    port: int
    connections: int = 0
    writers: set[asyncio.StreamWriter] = field(default_factory=set)
    handlers: set[asyncio.Task[None]] = field(default_factory=set)


async def _close_writer(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(OSError, TimeoutError):
        async with asyncio.timeout(_CLOSE_TIMEOUT):
            await writer.wait_closed()


@contextlib.asynccontextmanager
async def _serve(
    handler_body: _Handler, *, ssl_context: ssl.SSLContext | None
) -> AsyncIterator[LoopbackServer]:
    state = LoopbackServer(host="127.0.0.1", port=0)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        state.connections += 1
        state.writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            state.handlers.add(task)
        try:
            async with asyncio.timeout(_CLOSE_TIMEOUT * 2):
                await handler_body(reader, writer)
        except (OSError, TimeoutError):
            pass
        finally:
            state.writers.discard(writer)
            await _close_writer(writer)
            if task is not None:
                state.handlers.discard(task)

    server = await asyncio.start_server(
        handle,
        state.host,
        0,
        ssl=ssl_context,
        ssl_handshake_timeout=_CLOSE_TIMEOUT if ssl_context else None,
    )
    try:
        state.port = server.sockets[0].getsockname()[1]
        yield state
    finally:
        server.close()
        for writer in list(state.writers):
            await _close_writer(writer)
        if state.handlers:
            await asyncio.wait(list(state.handlers), timeout=_CLOSE_TIMEOUT)
        async with asyncio.timeout(_CLOSE_TIMEOUT):
            await server.wait_closed()


async def _read_until_eof(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while await reader.read(65536):
        pass


def tls_server(cert: SelfSignedCert) -> contextlib.AbstractAsyncContextManager[LoopbackServer]:
    """Serve TLS 1.3 (minimum, like the real gateway) with ``cert`` on 127.0.0.1:<random>.

    Each connection is kept open until the client closes it.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(cert.cert_path, cert.key_path)
    return _serve(_read_until_eof, ssl_context=context)


def plain_tcp_server(
    reply: bytes | None = b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n",
) -> contextlib.AbstractAsyncContextManager[LoopbackServer]:
    """Serve plain TCP on 127.0.0.1:<random>: read the first bytes, then answer ``reply``.

    With ``reply=None`` the server never answers and holds the connection open until the
    client goes away (or the server stops).
    """

    async def body(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(65536)
        if reply is None:
            await _read_until_eof(reader, writer)
            return
        writer.write(reply)
        await writer.drain()

    return _serve(body, ssl_context=None)
