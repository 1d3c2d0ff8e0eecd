"""Unit tests for openclaw_desktop.trust.endpoint."""

from __future__ import annotations

import pytest

from openclaw_desktop.trust.endpoint import (
    cleartext_allowed,
    format_endpoint,
    is_loopback_host,
    strip_brackets,
)


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "LOCALHOST",
        "localhost.",
        "127.0.0.1",
        "127.1.2.3",
        "::1",
        "[::1]",
        "::ffff:127.0.0.1",
        "10.0.0.1",
        "10.0.2.2",
        "10.255.255.255",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.1.20",
        "[::ffff:192.168.1.20]",
        "169.254.10.20",
        "fc00::1",
        "fd12:3456:789a::1",
        "[fd00::2]",
        "fe80::1",
        "fe80::1%eth0",
        "[fe80::abcd]",
        "febf::1",
        "gateway.local",
        "Gateway.LOCAL",
        "my-mac.local.",
        "a.b.local",
        "openclaw.local",
    ],
)
def test_cleartext_allowed_for_local_hosts(host: str) -> None:
    """Loopback, RFC 1918, ULA, link-local and .local hosts may use ws://."""
    assert cleartext_allowed(host) is True


@pytest.mark.parametrize(
    "host",
    [
        "",
        " ",
        "8.8.8.8",
        "1.1.1.1",
        "172.15.255.255",
        "172.32.0.1",
        "192.169.0.1",
        "100.64.0.1",
        "100.100.100.100",
        "100.127.255.254",
        "2001:4860:4860::8888",
        "[2001:db8::1]",
        "fec0::1",
        "::ffff:8.8.8.8",
        "0.0.0.0",
        "::",
        "example.com",
        "gateway.example.com",
        "host.ts.net",
        "my-gw.tailnet-1234.ts.net",
        "local",
        ".local",
        "localhost.example.com",
        "foo.localhost",
        "gateway.local.example.com",
        "evil.com/.local",
        "user@host.local",
        "host.local:18789",
        "127.0.0.1:18789",
        "[127.0.0.1]",
        "10.1",
        "0x7f000001",
        "010.0.0.1",
        "gateway",
    ],
)
def test_cleartext_refused_elsewhere(host: str) -> None:
    """Public, CGNAT, tailnet and other DNS names need TLS (no name is ever resolved)."""
    assert cleartext_allowed(host) is False


@pytest.mark.parametrize(
    "host",
    ["localhost", "LocalHost.", "127.0.0.1", "127.255.0.9", "::1", "[::1]", "::ffff:127.0.0.1"],
)
def test_is_loopback_host_true(host: str) -> None:
    """localhost and loopback addresses are this machine."""
    assert is_loopback_host(host) is True


@pytest.mark.parametrize(
    "host", ["", "10.0.0.1", "192.168.0.1", "gateway.local", "::2", "fe80::1", "foo.localhost"]
)
def test_is_loopback_host_false(host: str) -> None:
    """LAN addresses and names are not loopback."""
    assert is_loopback_host(host) is False


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        ("127.0.0.1", 18789, "127.0.0.1:18789"),
        ("gateway.local", 443, "gateway.local:443"),
        ("::1", 8443, "[::1]:8443"),
        ("[fe80::1]", 1, "[fe80::1]:1"),
    ],
)
def test_format_endpoint(host: str, port: int, expected: str) -> None:
    """Endpoints print like URL authorities, with IPv6 in brackets."""
    assert format_endpoint(host, port) == expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("gw.local", "gw.local"),
        ("[fe80::1%eth0]", "fe80::1%eth0"),
    ],
)
def test_strip_brackets(host: str, expected: str) -> None:
    """Only the brackets around an IPv6 literal are removed."""
    assert strip_brackets(host) == expected
