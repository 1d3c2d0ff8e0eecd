"""Look at a gateway's certificate before trusting it.

:func:`probe_fingerprint` reads the leaf certificate of an endpoint while trusting nothing,
so a trust dialog can show its fingerprint. :func:`system_trusts` asks whether the operating
system's CA store accepts the endpoint. Neither sends a byte of application data.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
from collections.abc import Callable
from typing import TypeVar

from openclaw_desktop.errors import TrustError
from openclaw_desktop.trust.context import (
    peer_fingerprint,
    pinned_client_context,
    system_client_context,
)
from openclaw_desktop.trust.endpoint import format_endpoint, strip_brackets

__all__ = ["probe_fingerprint", "system_trusts"]

_T = TypeVar("_T")

_CLOSE_GRACE = 1.0
"""Seconds to wait for the peer's ``close_notify`` before dropping the connection."""


def _describe_os_error(exc: OSError) -> str:
    """A short reason for a socket error ("connection refused", "name not resolved: ...")."""
    if isinstance(exc, socket.gaierror):
        return f"name not resolved ({exc.strerror or exc})"
    if exc.errno and exc.errno > 0:
        return os.strerror(exc.errno).lower()
    if isinstance(exc, ConnectionResetError):
        return "closed by the peer"
    return str(exc) or type(exc).__name__


class _SilentProtocol(asyncio.Protocol):
    """Ignores incoming data and reports when the connection is gone."""

    def __init__(self) -> None:
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _close(transport: asyncio.BaseTransport, protocol: _SilentProtocol) -> None:
    """Close a TLS connection with ``close_notify``, and abort it if the peer dawdles."""
    transport.close()
    try:
        async with asyncio.timeout(_CLOSE_GRACE + 0.5):
            await protocol.closed
    except TimeoutError:
        if isinstance(transport, asyncio.Transport):
            transport.abort()


async def _handshake(
    host: str,
    port: int,
    context: ssl.SSLContext,
    server_hostname: str,
    timeout: float,
    inspect: Callable[[ssl.SSLObject], _T],
) -> _T:
    """Open a TLS connection, run ``inspect`` on it, and close it.

    Raises:
        ssl.SSLCertVerificationError: The context rejected the certificate.
        TrustError: Kind ``"unavailable"`` for every other failure.
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive, got {timeout!r}")
    endpoint = format_endpoint(host, port)
    loop = asyncio.get_running_loop()
    phase = "connect"
    try:
        async with asyncio.timeout(timeout):
            raw, protocol = await loop.create_connection(
                _SilentProtocol, strip_brackets(host), port
            )
            phase = "handshake"
            tls = await loop.start_tls(
                raw,
                protocol,
                context,
                server_hostname=strip_brackets(server_hostname),
                ssl_handshake_timeout=timeout,
                ssl_shutdown_timeout=_CLOSE_GRACE,
            )
    except ssl.SSLCertVerificationError:
        raise
    except TimeoutError:
        detail = (
            f"unreachable: no TCP connection within {timeout:g}s"
            if phase == "connect"
            else f"no TLS handshake within {timeout:g}s (the endpoint may not speak TLS)"
        )
        raise TrustError("unavailable", endpoint, detail=detail) from None
    except ssl.SSLError as exc:
        reason = (exc.reason or str(exc)).lower().replace("_", " ")
        detail = f"does not speak TLS: handshake failed ({reason})"
        raise TrustError("unavailable", endpoint, detail=detail) from exc
    except OSError as exc:
        if phase == "connect":
            detail = f"unreachable: {_describe_os_error(exc)}"
        else:
            detail = (
                "does not speak TLS: connection dropped during the handshake "
                f"({_describe_os_error(exc)})"
            )
        raise TrustError("unavailable", endpoint, detail=detail) from exc
    if tls is None:  # pragma: no cover - only without the ssl module
        raw.close()
        raise TrustError("unavailable", endpoint, detail="TLS is not supported here")
    try:
        ssl_object = tls.get_extra_info("ssl_object")
        if not isinstance(ssl_object, ssl.SSLObject):  # pragma: no cover - asyncio invariant
            raise TrustError("unavailable", endpoint, detail="no TLS session after handshake")
        return inspect(ssl_object)
    finally:
        await _close(tls, protocol)


async def probe_fingerprint(host: str, port: int, *, timeout: float = 3.0) -> str:
    """Read the fingerprint of an endpoint's TLS certificate without trusting it.

    The connection uses :func:`~openclaw_desktop.trust.context.pinned_client_context`, so
    any certificate is accepted; it is closed right after the handshake and nothing is sent
    on it. The result is only something to show the user (or compare with a pin).

    Args:
        host: Host name or IP literal (IPv6 with or without brackets).
        port: TCP port.
        timeout: Overall limit in seconds for connecting and the handshake.

    Returns:
        The SHA-256 fingerprint of the leaf certificate, 64 lowercase hex characters.

    Raises:
        TrustError: Kind ``"unavailable"`` when the endpoint is unreachable, times out or
            does not speak TLS; ``detail`` says which.
    """
    endpoint = format_endpoint(host, port)
    return await _handshake(
        host,
        port,
        pinned_client_context(),
        host,
        timeout,
        lambda ssl_object: peer_fingerprint(ssl_object, endpoint=endpoint),
    )


async def system_trusts(
    host: str, port: int, *, server_hostname: str | None = None, timeout: float = 3.0
) -> bool:
    """Whether the operating system's CA store accepts an endpoint's certificate.

    Args:
        host: Host name or IP literal to connect to.
        port: TCP port.
        server_hostname: Name the certificate must carry (and SNI); defaults to ``host``.
        timeout: Overall limit in seconds for connecting and the handshake.

    Returns:
        True if a handshake with
        :func:`~openclaw_desktop.trust.context.system_client_context` succeeds (chain and
        host name verified), False if the certificate fails verification.

    Raises:
        TrustError: Kind ``"unavailable"`` when the endpoint is unreachable, times out or
            does not speak TLS.
    """
    name = server_hostname or host
    try:
        return await _handshake(host, port, system_client_context(), name, timeout, _accepted)
    except ssl.SSLCertVerificationError:
        return False


def _accepted(_ssl_object: ssl.SSLObject) -> bool:
    """Inspector for :func:`system_trusts`: reaching it means verification passed."""
    return True
