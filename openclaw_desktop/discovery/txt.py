"""Turn a resolved ``_openclaw-gw._tcp`` service into a typed :class:`GatewayEndpoint`.

One pure function, in the manner of Home Assistant's ``info_from_service``: link-local and
unspecified addresses are skipped, a service without a usable address or port gives None,
TXT keys are decoded as ASCII and values as UTF-8 (anything undecodable is skipped).

Everything in TXT is an unauthenticated **hint** (``docs/gateway/bonjour.md``): connect to
the resolved SRV port and A/AAAA addresses, and never let ``gatewayTlsSha256`` replace or
create a stored pin without the user confirming it.
"""

from __future__ import annotations

import ipaddress
import logging
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from openclaw_desktop.trust.fingerprint import normalize_fingerprint

__all__ = [
    "DOMAIN",
    "SERVICE_TYPE",
    "GatewayEndpoint",
    "decode_bonjour_escapes",
    "endpoint_from_service",
    "stable_gateway_id",
]

log = logging.getLogger("openclaw.discovery")

SERVICE_TYPE = "_openclaw-gw._tcp.local."
DOMAIN = "local."
_STABLE_TYPE = "_openclaw-gw._tcp."
_MAX_TXT_STRING = 255
"""One TXT character-string holds at most 255 bytes; anything longer did not come off a wire."""
_MAX_DISPLAY_CHARS = 128
_TRUE_VALUES = frozenset({"1", "true", "yes"})


@dataclass(frozen=True)
class GatewayEndpoint:
    """A gateway found on the LAN.

    ``host``/``port``/``addresses`` come from the SRV and A/AAAA records and are what to
    connect to. ``tls``, ``tls_fingerprint_hint``, ``display_name`` and ``lan_host`` come
    from TXT and are hints only.
    """

    name: str
    """The instance name, unescaped (``"Studio (OpenClaw)"``)."""
    host: str
    """The address to connect to: the first usable IPv4 address, else the first IPv6 one."""
    port: int
    addresses: tuple[str, ...]
    tls: bool
    tls_fingerprint_hint: str | None
    display_name: str
    lan_host: str | None
    stable_id: str
    """``"_openclaw-gw._tcp.|local.|<instance name>"``, as the Android app keys gateways."""
    txt: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), compare=False)
    """Every decoded TXT entry (read-only)."""
    server: str | None = None
    """The SRV target host name, without the trailing dot."""

    @property
    def url(self) -> str:
        """``ws://host:port`` or, when TXT says TLS, ``wss://host:port`` (IPv6 bracketed)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'wss' if self.tls else 'ws'}://{host}:{self.port}"


def decode_bonjour_escapes(text: str) -> str:
    """Undo DNS-SD decimal escapes: ``"Studio\\\\032Mac"`` -> ``"Studio Mac"``.

    ``\\DDD`` (0-255) stands for one byte; the bytes are read back as UTF-8 (invalid
    sequences become U+FFFD), everything else is kept as is.
    """
    if "\\" not in text:
        return text
    out = bytearray()
    i = 0
    while i < len(text):
        digits = text[i + 1 : i + 4]
        if text[i] == "\\" and len(digits) == 3 and digits.isascii() and digits.isdigit():
            value = int(digits)
            if value <= 255:
                out.append(value)
                i += 4
                continue
        out += text[i].encode("utf-8", errors="surrogatepass")
        i += 1
    return out.decode("utf-8", errors="replace")


def stable_gateway_id(instance_name: str, domain: str = DOMAIN) -> str:
    """The stable id of a discovered gateway: type, domain and normalized instance name.

    The name is unescaped and its whitespace collapsed, so ``"A\\\\032B "`` and ``"A B"`` map to
    the same id.
    """
    normalized = " ".join(decode_bonjour_escapes(instance_name).split())
    return f"{_STABLE_TYPE}|{domain}|{normalized}"


def _usable_addresses(addresses: list[str]) -> tuple[str, ...]:
    """Parsed, de-duplicated addresses without link-local or unspecified ones, IPv4 first."""
    parsed: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    for raw in addresses:
        try:
            address = ipaddress.ip_address(raw.split("%", 1)[0])
        except ValueError:
            log.debug("ignoring an unparsable discovered address %r", raw)
            continue
        if address.is_link_local or address.is_unspecified or address in parsed:
            continue
        parsed.append(address)
    parsed.sort(key=lambda a: a.version)
    return tuple(str(a) for a in parsed)


def _decode_properties(properties: Mapping[bytes, bytes | None]) -> dict[str, str]:
    """TXT as text: ASCII keys, UTF-8 values; undecodable or oversized entries skipped."""
    txt: dict[str, str] = {}
    for raw_key, raw_value in properties.items():
        value_bytes = raw_value or b""
        if len(raw_key) + len(value_bytes) + 1 > _MAX_TXT_STRING:
            log.debug("ignoring an oversized TXT entry (%d bytes)", len(value_bytes))
            continue
        try:
            key = raw_key.decode("ascii").strip()
            value = value_bytes.decode("utf-8")
        except UnicodeDecodeError:
            log.debug("ignoring an undecodable TXT entry")
            continue
        if key and key not in txt:
            txt[key] = value
    return txt


def _clean_text(value: str) -> str:
    """Drop control characters, collapse whitespace and cap the length of a name for display."""
    kept = "".join(ch for ch in value if not unicodedata.category(ch).startswith("C"))
    return " ".join(kept.split())[:_MAX_DISPLAY_CHARS]


def _fingerprint_hint(value: str | None) -> str | None:
    """The normalized fingerprint, or None when absent or malformed."""
    if not value:
        return None
    try:
        return normalize_fingerprint(value)
    except ValueError:
        log.debug("ignoring a malformed gatewayTlsSha256 hint")
        return None


def endpoint_from_service(
    name: str,
    type_: str,
    addresses: list[str],
    port: int | None,
    properties: Mapping[bytes, bytes | None],
    server: str | None,
) -> GatewayEndpoint | None:
    """Build a :class:`GatewayEndpoint` from a resolved service, or None if it is unusable.

    Args:
        name: The full service name (``"Studio (OpenClaw)._openclaw-gw._tcp.local."``).
        type_: The service type it was found under.
        addresses: The resolved addresses as text (scoped IPv6 allowed).
        port: The SRV port.
        properties: The raw TXT mapping.
        server: The SRV target host.

    Returns:
        None when the type is not ``_openclaw-gw._tcp.local.``, the name does not belong to
        it, the port is missing or invalid, or no usable address remains.
    """
    if type_.lower() != SERVICE_TYPE:
        log.debug("ignoring a service of another type: %r", type_)
        return None
    suffix = "." + type_
    if not name.lower().endswith(suffix.lower()) or len(name) <= len(suffix):
        log.debug("ignoring a service name outside %s: %r", type_, name)
        return None
    if port is None or not 0 < port <= 65535:
        log.debug("ignoring %r: no usable port", name)
        return None
    usable = _usable_addresses(addresses)
    if not usable:
        log.debug("ignoring %r: no usable address", name)
        return None
    instance = decode_bonjour_escapes(name[: -len(suffix)])
    txt = _decode_properties(properties)
    display = _clean_text(txt.get("displayName", "")) or _clean_text(instance) or usable[0]
    return GatewayEndpoint(
        name=instance,
        host=usable[0],
        port=port,
        addresses=usable,
        tls=txt.get("gatewayTls", "").strip().lower() in _TRUE_VALUES,
        tls_fingerprint_hint=_fingerprint_hint(txt.get("gatewayTlsSha256")),
        display_name=display,
        lan_host=_clean_text(txt.get("lanHost", "")) or None,
        stable_id=stable_gateway_id(instance),
        txt=MappingProxyType(txt),
        server=server.rstrip(".") if server else None,
    )
