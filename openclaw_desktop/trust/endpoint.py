"""Which hosts may be reached without TLS.

Cleartext ``ws://`` is acceptable only where the traffic cannot leave the machine or the
local network: loopback, private LAN ranges, link-local addresses and mDNS ``.local`` names.
Everything else, including Tailscale CGNAT addresses (``100.64.0.0/10``), ``.ts.net`` names
and any other DNS name, needs ``wss://``. This follows the stricter rule of the OpenClaw
mobile apps (gateway protocol reference, section 4.3).

Names are judged by their text alone and are never resolved: a DNS answer is not proof that
a name is local.

This module is pure: no I/O.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

__all__ = ["cleartext_allowed", "format_endpoint", "is_loopback_host", "strip_brackets"]

_LOOPBACK_NETWORKS: tuple[IPv4Network | IPv6Network, ...] = (
    IPv4Network("127.0.0.0/8"),
    IPv6Network("::1/128"),
)
_LOCAL_NETWORKS: tuple[IPv4Network | IPv6Network, ...] = (
    *_LOOPBACK_NETWORKS,
    IPv4Network("10.0.0.0/8"),  # RFC 1918
    IPv4Network("172.16.0.0/12"),  # RFC 1918
    IPv4Network("192.168.0.0/16"),  # RFC 1918
    IPv4Network("169.254.0.0/16"),  # IPv4 link-local
    IPv6Network("fc00::/7"),  # IPv6 unique local addresses
    IPv6Network("fe80::/10"),  # IPv6 link-local
)
# One or more DNS labels followed by ".local".
_MDNS_NAME = re.compile(r"(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)+local")


def _canonical(host: str) -> str:
    """Trim whitespace, one trailing dot, and lowercase a host."""
    name = host.strip().lower()
    return name[:-1] if name.endswith(".") and not name.endswith("..") else name


def _parse_ip(host: str) -> IPv4Address | IPv6Address | None:
    """Parse an IP literal (IPv6 optionally bracketed); ``None`` if ``host`` is a name.

    IPv4-mapped IPv6 addresses (``::ffff:a.b.c.d``) are judged as the IPv4 address.
    """
    text = host
    bracketed = text.startswith("[") and text.endswith("]")
    if bracketed:
        text = text[1:-1]
    try:
        address = ip_address(text)
    except ValueError:
        return None
    if isinstance(address, IPv6Address):
        return address.ipv4_mapped or address
    return None if bracketed else address


def _in(
    address: IPv4Address | IPv6Address, networks: tuple[IPv4Network | IPv6Network, ...]
) -> bool:
    """Whether ``address`` belongs to one of ``networks`` of the same IP version."""
    return any(address.version == net.version and address in net for net in networks)


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` names this machine.

    Args:
        host: ``localhost``, an IP literal (IPv6 optionally in brackets) or a DNS name.

    Returns:
        True for ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``).
    """
    name = _canonical(host)
    if name == "localhost":
        return True
    address = _parse_ip(name)
    return address is not None and _in(address, _LOOPBACK_NETWORKS)


def cleartext_allowed(host: str) -> bool:
    """Whether a gateway at ``host`` may be reached over cleartext ``ws://``.

    Args:
        host: ``localhost``, an IP literal (IPv6 optionally in brackets, with or without a
            zone id) or a DNS name; a trailing dot is tolerated.

    Returns:
        True for ``localhost``, loopback, RFC 1918 private IPv4, IPv6 unique local
        (``fc00::/7``), link-local (``169.254.0.0/16``, ``fe80::/10``) and ``*.local``
        names; False for everything else.
    """
    name = _canonical(host)
    if name == "localhost":
        return True
    address = _parse_ip(name)
    if address is not None:
        return _in(address, _LOCAL_NETWORKS)
    return _MDNS_NAME.fullmatch(name) is not None


def strip_brackets(host: str) -> str:
    """Remove the brackets around an IPv6 literal (``[::1]`` -> ``::1``); others unchanged.

    Args:
        host: A host as it may appear in a URL.

    Returns:
        The host as socket functions and ``server_hostname`` expect it.
    """
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def format_endpoint(host: str, port: int) -> str:
    """Write ``host:port`` for messages, bracketing IPv6 literals (``[::1]:443``).

    Args:
        host: A host name or IP literal, with or without brackets.
        port: The TCP port.

    Returns:
        The endpoint as people write it in URLs.
    """
    bare = strip_brackets(host)
    return f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"
