"""Unit tests: the LAN URLs of setup codes come from the network adapters, never loopback.

The adapter list (``ifaddr.get_adapters``) is replaced by a made-up machine; the hostname is
never resolved, so a ``/etc/hosts`` mapping it to 127.0.1.1 cannot leak into a setup code.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence

import ifaddr
import pytest

from gateway.advertise import _announce_addresses, lan_addresses
from gateway.cli import lan_urls


def adapter(name: str, *ips: str) -> ifaddr.Adapter:
    """An adapter as ifaddr reports it: IPv6 addresses are ``(ip, flowinfo, scope_id)``."""
    entries = []
    for raw in ips:
        if ":" in raw:
            entries.append(ifaddr.IP((raw, 0, 0), 64, name))
        else:
            entries.append(ifaddr.IP(raw, 24, name))
    return ifaddr.Adapter(name, name, entries)


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> list[ifaddr.Adapter]:
    """The adapters ``ifaddr`` reports (fill the returned list); resolving the hostname
    fails the test."""
    adapters: list[ifaddr.Adapter] = []
    monkeypatch.setattr(ifaddr, "get_adapters", lambda: list(adapters))

    def no_resolving(*_args: object, **_kw: object) -> None:
        raise AssertionError("lan_urls must not resolve the hostname")

    monkeypatch.setattr(socket, "getaddrinfo", no_resolving)
    monkeypatch.setattr(socket, "gethostbyname", no_resolving)
    return adapters


def test_private_ipv4_first_then_other_ipv4_never_loopback_or_link_local(
    machine: list[ifaddr.Adapter],
) -> None:
    machine += [
        adapter("lo", "127.0.0.1", "::1"),
        adapter("docker0", "172.17.0.1"),
        adapter("tailscale0", "100.101.102.103", "fd7a:115c:a1e0::1"),
        adapter("eth0", "203.0.113.7", "192.168.1.20", "fe80::1c2:3ff:fe04:506", "fd00::20"),
        adapter("wlan0", "169.254.10.11", "10.0.0.7", "2001:db8::7"),
    ]

    assert lan_urls(18789, False) == [
        "ws://192.168.1.20:18789",
        "ws://10.0.0.7:18789",
        "ws://172.17.0.1:18789",  # private too, but a container bridge: after the real cards
        "ws://100.101.102.103:18789",
        "ws://203.0.113.7:18789",
    ]
    assert lan_urls(4443, True)[0] == "wss://192.168.1.20:4443"
    # The mDNS announcement uses the same list, IPv6 included (after IPv4).
    assert lan_addresses() == [
        "192.168.1.20",
        "10.0.0.7",
        "172.17.0.1",
        "100.101.102.103",
        "203.0.113.7",
        "fd7a:115c:a1e0::1",
        "fd00::20",
        "2001:db8::7",
    ]
    assert _announce_addresses(None) == lan_addresses()


def test_a_loopback_only_machine_has_no_lan_urls(machine: list[ifaddr.Adapter]) -> None:
    """Only loopback and link-local: nothing (the callers fall back to 127.0.0.1 knowingly);
    the announcement still needs one address."""
    machine += [
        adapter("lo", "127.0.0.1", "127.0.1.1", "::1"),
        adapter("eth0", "169.254.3.4", "fe80::1"),
    ]
    assert lan_urls(18789, False) == []
    assert lan_addresses() == []
    assert _announce_addresses(None) == ["127.0.0.1"]
    assert _announce_addresses(["0.0.0.0", "127.0.0.1"]) == ["127.0.0.1"]


def test_scoped_and_duplicate_addresses_are_listed_once(machine: list[ifaddr.Adapter]) -> None:
    machine += [
        adapter("eth0", "192.168.1.20", "fd00::20%eth0"),
        adapter("eth0:1", "192.168.1.20"),
        adapter("weird", "not-an-address"),
    ]
    assert lan_addresses() == ["192.168.1.20", "fd00::20"]
    assert lan_urls(1, False) == ["ws://192.168.1.20:1"]


def test_at_most_eight_urls(machine: list[ifaddr.Adapter]) -> None:
    """A setup code lists at most 8 routes (the real ``PAIRING_SETUP_MAX_URLS``)."""
    machine += [adapter(f"eth{i}", f"10.0.{i}.1") for i in range(12)]
    urls = lan_urls(18789, False)
    assert urls == [f"ws://10.0.{i}.1:18789" for i in range(8)]


def test_unreadable_adapters_give_no_urls(
    machine: list[ifaddr.Adapter], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> Sequence[ifaddr.Adapter]:
        raise OSError("netlink unavailable")

    monkeypatch.setattr(ifaddr, "get_adapters", broken)
    assert lan_urls(18789, False) == []


def test_this_machine_gives_no_loopback_or_link_local_url() -> None:
    """On the real adapters of the machine running the tests."""
    for url in lan_urls(18789, False):
        host = url.removeprefix("ws://").rsplit(":", 1)[0]
        address = ipaddress.ip_address(host)
        assert address.version == 4
        assert not address.is_loopback and not address.is_link_local, url
