"""Unit tests for Endpoint.parse: gateway URLs and the cleartext rule."""

from __future__ import annotations

import pytest

from openclaw_desktop.errors import ConfigError
from openclaw_desktop.transport import Endpoint


def test_default_port_and_canonical_url() -> None:
    """Without a port the gateway default 18789 is used and written into the URL."""
    endpoint = Endpoint.parse("ws://127.0.0.1")
    assert endpoint == Endpoint("ws://127.0.0.1:18789", "ws", "127.0.0.1", 18789, "")
    assert endpoint.tls is False
    assert endpoint.loopback is True
    assert endpoint.display == "127.0.0.1:18789"


def test_explicit_port_and_path_are_kept() -> None:
    """An explicit port and path survive parsing."""
    endpoint = Endpoint.parse("ws://localhost:19002/")
    assert endpoint.url == "ws://localhost:19002/"
    assert endpoint.port == 19002
    assert endpoint.path == "/"


def test_surrounding_whitespace_and_case_are_normalised() -> None:
    """Pasted URLs are trimmed; scheme and host are lowercased."""
    endpoint = Endpoint.parse("  WS://LocalHost:19002  ")
    assert endpoint.url == "ws://localhost:19002"
    assert endpoint.host == "localhost"


@pytest.mark.parametrize(
    ("url", "host", "canonical", "display"),
    [
        ("ws://[::1]:19002", "::1", "ws://[::1]:19002", "[::1]:19002"),
        ("ws://[::1]", "::1", "ws://[::1]:18789", "[::1]:18789"),
        ("wss://[2001:db8::7]:443", "2001:db8::7", "wss://[2001:db8::7]:443", "[2001:db8::7]:443"),
    ],
)
def test_ipv6_hosts_keep_their_brackets(url: str, host: str, canonical: str, display: str) -> None:
    """IPv6 literals are stored bare and bracketed in the URL and display."""
    endpoint = Endpoint.parse(url)
    assert endpoint.host == host
    assert endpoint.url == canonical
    assert endpoint.display == display


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.9.9.9",
        "localhost",
        "[::1]",
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.254",
        "192.168.1.20",
        "169.254.10.10",
        "[fd00::1]",
        "[fe80::1]",
        "gateway.local",
        "My-Box.local",
    ],
)
def test_cleartext_is_allowed_to_local_hosts(host: str) -> None:
    """ws:// is accepted for loopback, private LAN, link-local and .local hosts."""
    assert Endpoint.parse(f"ws://{host}:18789").scheme == "ws"


@pytest.mark.parametrize(
    "host",
    [
        "example.com",
        "gateway.example.com",
        "8.8.8.8",
        "172.32.0.1",
        "11.0.0.1",
        "0.0.0.0",
        "[2001:db8::1]",
        "local",
        "evil.local.example.com",
    ],
)
def test_cleartext_to_other_hosts_is_refused(host: str) -> None:
    """ws:// to a public or unknown host is a ConfigError that points to wss://."""
    with pytest.raises(ConfigError, match="wss://"):
        Endpoint.parse(f"ws://{host}:18789")


@pytest.mark.parametrize("host", ["example.com", "8.8.8.8", "[2001:db8::1]", "127.0.0.1"])
def test_tls_is_allowed_anywhere(host: str) -> None:
    """wss:// is accepted for any host and defaults to port 18789."""
    endpoint = Endpoint.parse(f"wss://{host}")
    assert endpoint.tls is True
    assert endpoint.port == 18789


@pytest.mark.parametrize(
    "url",
    [
        "",
        "   ",
        "127.0.0.1:18789",
        "http://127.0.0.1:18789",
        "https://gateway.example.com",
        "tcp://127.0.0.1:18789",
        "ws://",
        "ws://:18789",
        "ws:///path",
        "ws://127.0.0.1:port",
        "ws://127.0.0.1:99999",
        "ws://127.0.0.1:-1",
    ],
)
def test_invalid_urls_are_config_errors(url: str) -> None:
    """Anything that is not ws(s)://host[:port] raises ConfigError."""
    with pytest.raises(ConfigError):
        Endpoint.parse(url)


@pytest.mark.parametrize("url", ["ws://[::1", "ws://]:1", "ws://[zz]:1", "ws://[127.0.0.1]:1"])
def test_broken_brackets_are_config_errors(url: str) -> None:
    """A malformed bracketed host is a ConfigError like any other invalid URL."""
    with pytest.raises(ConfigError):
        Endpoint.parse(url)


def test_non_loopback_private_host_is_not_loopback() -> None:
    """A LAN host may use ws:// but is not loopback."""
    assert Endpoint.parse("ws://192.168.1.20").loopback is False
