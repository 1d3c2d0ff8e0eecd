"""A stable identifier for a gateway, used to key its stored credentials."""

from __future__ import annotations

from urllib.parse import urlsplit

from openclaw_desktop.protocol import DEFAULT_GATEWAY_PORT

__all__ = ["DEFAULT_GATEWAY_PORT", "gateway_key"]


def gateway_key(url: str) -> str:
    """A stable id for a gateway: ``host:port``.

    The host is lowercased (an IPv6 address loses its brackets), the port defaults to
    :data:`DEFAULT_GATEWAY_PORT` (18789), and ``ws://`` and ``wss://`` give the same key.
    Path and query are ignored.

    Args:
        url: A ``ws://`` or ``wss://`` URL.

    Returns:
        For example ``"gateway.local:18789"`` or ``"::1:18789"``.

    Raises:
        ValueError: If the URL is not ws(s), has no host, or has a bad port.
    """
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("ws", "wss"):
        raise ValueError(f"not a ws:// or wss:// URL: {parts.scheme or 'no scheme'}")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise ValueError("the gateway URL has no host")
    port = parts.port  # raises ValueError when out of range or not a number
    return f"{host}:{port if port is not None else DEFAULT_GATEWAY_PORT}"
