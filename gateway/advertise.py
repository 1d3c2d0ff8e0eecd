"""Advertise the bundled gateway on the LAN over mDNS / DNS-SD (``_openclaw-gw._tcp``).

What goes on the wire follows the real gateway's bundled ``bonjour`` plugin (npm ``openclaw``
2026.9.6, ``dist/extensions/bonjour/index.js`` and ``dist/advertiser-*.mjs``):

* instance name ``"<display name> (OpenClaw)"``, unless the name already contains
  "openclaw" (any case); an empty name gives ``"OpenClaw"``;
* host ``<label>.local`` where the label comes from ``OPENCLAW_MDNS_HOSTNAME``, else the
  system hostname when its first label is a valid DNS label, else ``openclaw``;
* TXT, in this order: ``role=gateway``, ``gatewayPort``, ``lanHost``, ``displayName`` (the
  instance name without `` (OpenClaw)``), with TLS ``gatewayTls=1`` and
  ``gatewayTlsSha256``, ``gatewayDirectReachable=1`` when asked, ``transport=gateway``, and
  in full mode ``tailnetDns``, ``cliPath`` and ``sshPort``.

Home Assistant's zeroconf limits apply on top: a TXT value longer than 230 bytes is blanked
with a warning, and the instance name is cut to 63 bytes at a UTF-8 boundary. A name taken by
another responder is retried as ``"<name> (2)"``, ``"<name> (3)"``, ... (ciao's renaming).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import socket
from collections.abc import Awaitable, Mapping, Sequence

import ifaddr
from zeroconf import IPVersion, NonUniqueNameException
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

__all__ = [
    "MAX_INSTANCE_NAME_BYTES",
    "MAX_TXT_VALUE_BYTES",
    "SERVICE_TYPE",
    "GatewayAdvertiser",
    "build_txt",
    "format_instance_name",
    "lan_addresses",
    "machine_display_name",
    "resolve_mdns_hostname",
    "truncate_utf8",
]

log = logging.getLogger("gateway")

SERVICE_TYPE = "_openclaw-gw._tcp.local."
MAX_TXT_VALUE_BYTES = 230
"""A TXT string holds at most 255 bytes; 230 leaves room for the key and ``=``."""
MAX_INSTANCE_NAME_BYTES = 63
"""The DNS label limit."""
_MAX_RENAMES = 32
_DNS_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_LOCAL_SUFFIX = re.compile(r"\.local\.?$", re.IGNORECASE)


def truncate_utf8(text: str, limit: int, fallback: str) -> str:
    """Cut ``text`` to at most ``limit`` UTF-8 bytes without splitting a character.

    Trailing dashes and whitespace left by the cut are removed, as the real advertiser does;
    ``fallback`` is returned when nothing remains.
    """
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    cut = encoded[:limit].decode("utf-8", errors="ignore")
    return cut.rstrip("-").strip() or fallback


def _first_label(name: str) -> str:
    """``"Box.local"`` -> ``"Box"``; ``"box.example.org"`` -> ``"box"``."""
    return _LOCAL_SUFFIX.sub("", name.strip()).split(".")[0].strip()


def resolve_mdns_hostname(
    environ: Mapping[str, str] | None = None, system_hostname: str | None = None
) -> str:
    """The label advertised as ``<label>.local``.

    ``OPENCLAW_MDNS_HOSTNAME`` wins; otherwise the system hostname's first label if it is a
    valid DNS label; otherwise ``openclaw``. The result is cut to 63 bytes.
    """
    env = os.environ if environ is None else environ
    override = env.get("OPENCLAW_MDNS_HOSTNAME", "").strip()
    if override:
        raw = override
    else:
        label = _first_label(socket.gethostname() if system_hostname is None else system_hostname)
        raw = label if _DNS_LABEL.fullmatch(label) else "openclaw"
    label = _first_label(raw) or "openclaw"
    return truncate_utf8(label, MAX_INSTANCE_NAME_BYTES, "openclaw")


def machine_display_name(system_hostname: str | None = None) -> str:
    """The machine's name for people: the hostname without ``.local``, else ``openclaw``."""
    raw = socket.gethostname() if system_hostname is None else system_hostname
    return _LOCAL_SUFFIX.sub("", raw.strip()) or "openclaw"


def format_instance_name(display_name: str) -> str:
    """``"Box"`` -> ``"Box (OpenClaw)"``; names already naming OpenClaw are kept."""
    trimmed = display_name.strip()
    if not trimmed:
        return "OpenClaw"
    if "openclaw" in trimmed.lower():
        return trimmed
    return f"{trimmed} (OpenClaw)"


def _pretty_display_name(instance_name: str) -> str:
    """The TXT ``displayName``: the instance name without a trailing `` (OpenClaw)``."""
    normalized = " ".join(instance_name.split())
    pretty = re.sub(r"\s*\(OpenClaw\)\s*$", "", normalized, flags=re.IGNORECASE).strip()
    return pretty or normalized


def build_txt(
    *,
    port: int,
    hostname: str,
    instance_name: str,
    tls: bool = False,
    tls_fingerprint: str | None = None,
    direct_reachable: bool = False,
    full: bool = False,
    tailnet_dns: str | None = None,
    cli_path: str | None = None,
    ssh_port: int = 22,
) -> dict[str, str]:
    """The TXT record of the gateway service, keys in the real gateway's order.

    Values longer than :data:`MAX_TXT_VALUE_BYTES` bytes are blanked, with a warning.
    """
    txt = {
        "role": "gateway",
        "gatewayPort": str(port),
        "lanHost": f"{hostname}.local",
        "displayName": _pretty_display_name(instance_name),
    }
    if tls:
        txt["gatewayTls"] = "1"
        if tls_fingerprint:
            txt["gatewayTlsSha256"] = tls_fingerprint
    if direct_reachable:
        txt["gatewayDirectReachable"] = "1"
    if full and tailnet_dns and tailnet_dns.strip():
        txt["tailnetDns"] = tailnet_dns.strip()
    if full and cli_path and cli_path.strip():
        txt["cliPath"] = cli_path.strip()
    txt["transport"] = "gateway"
    if full:
        txt["sshPort"] = str(ssh_port)
    for key, value in txt.items():
        if len(value.encode("utf-8")) > MAX_TXT_VALUE_BYTES:
            log.warning(
                "mDNS TXT value for %r is longer than %d bytes; advertising it empty",
                key,
                MAX_TXT_VALUE_BYTES,
            )
            txt[key] = ""
    return txt


def _label_safe(name: str) -> str:
    """python-zeroconf splits names on dots, so an instance label must not contain any."""
    return name.replace(".", "-")


def _renamed(base: str, attempt: int) -> str:
    """``base`` for the first attempt, then ``"base (2)"``, ``"base (3)"``, ... in 63 bytes."""
    if attempt == 1:
        return truncate_utf8(base, MAX_INSTANCE_NAME_BYTES, "OpenClaw")
    suffix = f" ({attempt})"
    room = MAX_INSTANCE_NAME_BYTES - len(suffix.encode("utf-8"))
    return truncate_utf8(base, room, "OpenClaw") + suffix


_RFC1918 = tuple(
    ipaddress.ip_network(net) for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)
_ULA = ipaddress.ip_network("fc00::/7")
#: Adapters of containers, VMs and bridges: listed after the machine's own network cards.
_VIRTUAL_ADAPTERS = re.compile(
    r"^(docker|br-|veth|virbr|vnet|lxc|lxd|podman|cni|flannel|vboxnet|vmnet|zt|tun|tap)",
    re.IGNORECASE,
)


def _address_rank(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> int:
    """0 private (RFC 1918) IPv4, 1 other IPv4, 2 unique-local IPv6, 3 other IPv6."""
    if isinstance(address, ipaddress.IPv4Address):
        return 0 if any(address in net for net in _RFC1918) else 1
    return 2 if address in _ULA else 3


def lan_addresses(*, ipv6: bool = True) -> list[str]:
    """This machine's addresses other machines may reach it on, best first.

    Every address of every network adapter (read with ``ifaddr``; nothing is sent and no
    name is resolved, so ``/etc/hosts`` mapping the hostname to 127.0.1.1 does not matter),
    except loopback, link-local, multicast and unspecified ones. Private (RFC 1918) IPv4
    comes first, then other IPv4 (tailnet, public), then unique-local and other IPv6 (left
    out with ``ipv6=False``); within each group the machine's own adapters come before
    container/VM bridges (``docker0``, ``virbr0``...), otherwise in adapter order.
    """
    found: dict[str, tuple[int, bool, int]] = {}
    order = 0
    for adapter in ifaddr.get_adapters():
        virtual = bool(_VIRTUAL_ADAPTERS.match(adapter.nice_name or adapter.name or ""))
        for ip in adapter.ips:
            raw = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            try:
                address = ipaddress.ip_address(raw.split("%")[0])
            except ValueError:
                continue
            if (
                address.is_loopback
                or address.is_link_local
                or address.is_multicast
                or address.is_unspecified
                or (not ipv6 and address.version == 6)
            ):
                continue
            text = str(address)
            if text not in found:
                found[text] = (_address_rank(address), virtual, order)
                order += 1
    return sorted(found, key=found.__getitem__)


def _announce_addresses(interfaces: Sequence[str] | None) -> list[str]:
    """The addresses to put in A/AAAA records.

    With explicit interface addresses, those (the unspecified ones skipped). Otherwise
    :func:`lan_addresses`, falling back to loopback when nothing else exists.
    """
    if interfaces is not None:
        picked = [a for a in interfaces if not ipaddress.ip_address(a).is_unspecified]
        return picked or ["127.0.0.1"]
    return lan_addresses() or ["127.0.0.1"]


def _open_zeroconf(interfaces: Sequence[str] | None) -> AsyncZeroconf:
    """A zeroconf on the listed interface addresses, or on every interface over IPv4.

    IPv4 multicast reaches every client the real gateway serves; AAAA records are still
    announced over it.
    """
    if interfaces is None:
        return AsyncZeroconf(ip_version=IPVersion.V4Only)
    versions = {ipaddress.ip_address(a).version for a in interfaces}
    if versions == {6}:
        version = IPVersion.V6Only
    else:
        version = IPVersion.All if versions == {4, 6} else IPVersion.V4Only
    return AsyncZeroconf(interfaces=list(interfaces), ip_version=version)


class GatewayAdvertiser:
    """Registers the gateway's ``_openclaw-gw._tcp`` service and withdraws it on stop.

    Args:
        zeroconf: A shared :class:`AsyncZeroconf` to register on (it is not closed by
            :meth:`stop`); by default the advertiser opens and closes its own.
    """

    def __init__(self, *, zeroconf: AsyncZeroconf | None = None) -> None:
        self._shared = zeroconf
        self._zc: AsyncZeroconf | None = None
        self._info: AsyncServiceInfo | None = None
        self.txt: dict[str, str] = {}
        self.hostname = ""

    @property
    def instance_name(self) -> str | None:
        """The registered instance name (after any renaming), or None when not advertising."""
        if self._info is None:
            return None
        return self._info.name[: -len(SERVICE_TYPE) - 1]

    @property
    def service_name(self) -> str | None:
        """The registered full service name, or None when not advertising."""
        return None if self._info is None else self._info.name

    async def start(
        self,
        *,
        port: int,
        display_name: str | None,
        tls_fingerprint: str | None,
        interfaces: Sequence[str] | None = None,
        hostname: str | None = None,
        tls: bool | None = None,
        direct_reachable: bool = False,
        full: bool = False,
        tailnet_dns: str | None = None,
        cli_path: str | None = None,
        ssh_port: int = 22,
    ) -> None:
        """Register the service and announce it.

        Args:
            port: The gateway's WebSocket port (SRV and ``gatewayPort``).
            display_name: The machine's display name; None uses :func:`machine_display_name`.
            tls_fingerprint: The certificate fingerprint when serving TLS, else None.
            interfaces: Interface addresses to advertise on (``["127.0.0.1"]`` in tests);
                None for all of them.
            hostname: The mDNS host label; None uses :func:`resolve_mdns_hostname`.
            tls: Whether TLS is served; defaults to "a fingerprint was given".
            direct_reachable: Add ``gatewayDirectReachable=1``.
            full: ``discovery.mdns.mode: "full"``: add ``tailnetDns``, ``cliPath``, ``sshPort``.
            tailnet_dns: The MagicDNS name (full mode).
            cli_path: The CLI path (full mode).
            ssh_port: The SSH port (full mode).

        Raises:
            RuntimeError: If already started.
            NonUniqueNameException: If every rename attempt was taken.
        """
        if self._zc is not None:
            raise RuntimeError("the gateway advertiser is already started")
        label = _first_label(hostname) if hostname else resolve_mdns_hostname()
        label = truncate_utf8(label or "openclaw", MAX_INSTANCE_NAME_BYTES, "openclaw")
        name = display_name if display_name is not None else machine_display_name()
        instance = format_instance_name(name)
        self.hostname = label
        self.txt = build_txt(
            port=port,
            hostname=label,
            instance_name=instance,
            tls=tls_fingerprint is not None if tls is None else tls,
            tls_fingerprint=tls_fingerprint,
            direct_reachable=direct_reachable,
            full=full,
            tailnet_dns=tailnet_dns,
            cli_path=cli_path,
            ssh_port=ssh_port,
        )
        zc = self._shared or _open_zeroconf(interfaces)
        self._zc = zc
        try:
            self._info, announced = await self._register(
                zc, _label_safe(instance), label, port, interfaces
            )
            await announced
        except BaseException:
            await self.stop()
            raise
        log.info("advertising %r on mDNS (host %s.local, port %d)", self.instance_name, label, port)

    async def _register(
        self,
        zc: AsyncZeroconf,
        base: str,
        label: str,
        port: int,
        interfaces: Sequence[str] | None,
    ) -> tuple[AsyncServiceInfo, Awaitable[object]]:
        """Register under ``base``, renaming on conflicts; returns the pending announcements."""
        addresses = _announce_addresses(interfaces)
        for attempt in range(1, _MAX_RENAMES + 1):
            instance = _renamed(base, attempt)
            info = AsyncServiceInfo(
                SERVICE_TYPE,
                f"{instance}.{SERVICE_TYPE}",
                port=port,
                properties=dict(self.txt),
                server=f"{label}.local.",
                parsed_addresses=addresses,
            )
            try:
                announced = await zc.async_register_service(info)
            except NonUniqueNameException:
                log.warning("mDNS name %r is taken; trying another", instance)
                continue
            return info, announced
        raise NonUniqueNameException(f"no free mDNS name for {base!r}")

    async def stop(self) -> None:
        """Withdraw the service (goodbye packets) and close our own zeroconf. Idempotent."""
        zc, info = self._zc, self._info
        self._zc, self._info = None, None
        if zc is None:
            return
        try:
            if info is not None:
                goodbyes = await zc.async_unregister_service(info)
                await goodbyes
        finally:
            if self._shared is None:
                await zc.async_close()
        log.info("stopped advertising on mDNS")
