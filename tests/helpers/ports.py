"""Loopback port helpers for tests that start real servers."""

from __future__ import annotations

import socket

__all__ = ["free_port", "port_open"]


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago.

    The kernel picks the port (bind to port 0); the socket is closed before returning, so
    another process could in theory grab the port before the caller binds it. Callers that
    start external servers should be prepared to retry with a new port on ``EADDRINUSE``.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``host:port`` right now."""
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False
