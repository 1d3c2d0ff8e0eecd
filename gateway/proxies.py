"""Who a connection comes from: the socket peer, or the client a trusted proxy vouches for.

The rules of the real gateway's ``gateway.trustedProxies`` and ``gateway.allowRealIpFallback``:

- A request with forwarding headers (``Forwarded``, ``X-Real-IP`` or any ``X-Forwarded-*``) or
  Tailscale identity headers from a peer that is not a trusted proxy cannot be attributed to
  a client. It is refused at the HTTP upgrade with 403 ``proxy_attribution_required``
  (:func:`proxy_attribution_required`), before any credential is looked at, so such a
  client can neither pass for local nor spend another client's failed-auth budget.
- From a trusted proxy the client is the right-most ``X-Forwarded-For`` hop that is neither
  loopback nor a trusted proxy itself (``X-Real-IP`` only with the fallback on). A request
  with no such hop is refused in the same way, and so is one with no forwarding header at
  all unless it came over loopback (then it is a direct local client, as any other). The
  ``Forwarded`` header is not read.
- A client that comes through a proxy is never local, whatever its address.

Trusted proxies are IP addresses or CIDR networks (``10.0.0.1``, ``10.0.0.0/24``, ``::1``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

import orjson
from websockets.datastructures import Headers
from websockets.http11 import Response

__all__ = [
    "PROXY_ATTRIBUTION_GUIDANCE",
    "Attribution",
    "TrustedProxies",
    "has_forwarding_headers",
    "normalize_ip",
    "parse_proxy_entry",
    "proxy_attribution_required",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

PROXY_ATTRIBUTION_GUIDANCE = (
    "Configure gateway.trustedProxies narrowly and make the proxy overwrite or safely rebuild "
    "forwarded client headers."
)
#: Headers that only Tailscale Serve/Funnel sets; the real gateway treats them as proxy headers.
_TAILSCALE_HEADERS = frozenset(
    {
        "tailscale-funnel-request",
        "tailscale-headers-info",
        "tailscale-user-login",
        "tailscale-user-name",
        "tailscale-user-profile-pic",
    }
)


@dataclass(frozen=True, slots=True)
class Attribution:
    """The client a connection is accounted to.

    Attributes:
        client_ip: the key of its failed-auth and pre-auth budgets.
        via_proxy: it came through a trusted proxy (so it is never a local client).
    """

    client_ip: str
    via_proxy: bool = False


def _parse_ip(text: str) -> IPAddress | None:
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def normalize_ip(text: str) -> str:
    """``text`` as a canonical address (zone id dropped, IPv4-mapped IPv6 as IPv4), or as
    given when it is not an IP address."""
    address = _parse_ip(text.strip())
    return text if address is None else str(address)


def _parse_hop(raw: str) -> IPAddress | None:
    """One ``X-Forwarded-For`` / ``X-Real-IP`` entry: an address, maybe ``[v6]:port`` or
    ``v4:port``; anything else is skipped."""
    text = raw.strip()
    if not text:
        return None
    if text.startswith("["):
        end = text.find("]")
        if end != -1:
            text = text[1:end]
    elif text.count(":") == 1 and "." in text:
        text = text.split(":", 1)[0]
    return _parse_ip(text)


def parse_proxy_entry(entry: str) -> IPNetwork:
    """A ``trusted_proxies`` entry as a network (a plain address is a /32 or /128).

    Raises:
        ValueError: not an IP address or CIDR network.
    """
    text = entry.strip()
    try:
        network = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ValueError(f"trusted proxy {entry!r} is not an IP address or CIDR network") from None
    return network


def has_forwarding_headers(headers: Headers | None) -> bool:
    """Whether the request names a forwarded client (``Forwarded``, ``X-Real-IP``,
    ``X-Forwarded-*``) or carries Tailscale identity headers."""
    if headers is None:
        return False
    for name in headers:
        lower = name.lower()
        if lower in ("forwarded", "x-real-ip") or lower.startswith("x-forwarded-"):
            return True
        if lower in _TAILSCALE_HEADERS:
            return True
    return False


class TrustedProxies:
    """The configured proxies and the attribution of a request's client."""

    def __init__(self, entries: Iterable[str] = (), *, allow_real_ip_fallback: bool = False):
        self.networks: tuple[IPNetwork, ...] = tuple(parse_proxy_entry(e) for e in entries)
        self.allow_real_ip_fallback = allow_real_ip_fallback

    def trusts(self, address: IPAddress | str) -> bool:
        """Whether ``address`` is one of the trusted proxies."""
        parsed = _parse_ip(address) if isinstance(address, str) else address
        if parsed is None:
            return False
        return any(parsed.version == n.version and parsed in n for n in self.networks)

    def attribute(self, peer: str, headers: Headers) -> Attribution | None:
        """The client of a request from the socket peer ``peer``; None when it names a
        forwarded client that cannot be trusted (answer :func:`proxy_attribution_required`)."""
        remote = normalize_ip(peer)
        forwarded = has_forwarding_headers(headers)
        address = _parse_ip(remote)
        if not forwarded and address is not None and address.is_loopback:
            return Attribution(remote)  # direct and local, even from a trusted proxy's address
        if address is not None and self.trusts(address):
            client = self._forwarded_client(headers)
            if client is None or client.is_loopback:
                return None
            return Attribution(str(client), via_proxy=True)
        return None if forwarded else Attribution(remote)

    def _forwarded_client(self, headers: Headers) -> IPAddress | None:
        chain: list[IPAddress] = []
        for value in headers.get_all("X-Forwarded-For"):
            chain.extend(hop for hop in map(_parse_hop, value.split(",")) if hop is not None)
        for hop in reversed(chain):
            if hop.is_loopback:
                continue
            if not self.trusts(hop):
                return hop
        if not self.allow_real_ip_fallback:
            return None
        real = headers.get_all("X-Real-IP")
        return _parse_hop(real[0]) if len(real) == 1 else None


def proxy_attribution_required() -> Response:
    """The real gateway's answer to an upgrade it cannot attribute: 403 with a JSON body."""
    body = orjson.dumps(
        {
            "error": {
                "message": f"Proxy client attribution is required. {PROXY_ATTRIBUTION_GUIDANCE}",
                "type": "proxy_attribution_required",
            }
        }
    )
    headers = Headers(
        [
            ("Content-Type", "application/json; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ]
    )
    return Response(403, "Forbidden", headers, body)
