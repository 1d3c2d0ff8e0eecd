"""Client attribution behind trusted proxies (``gateway.trustedProxies`` semantics)."""

from __future__ import annotations

import json

import pytest
from websockets.datastructures import Headers

from gateway.config import GatewayConfig
from gateway.proxies import (
    Attribution,
    TrustedProxies,
    has_forwarding_headers,
    normalize_ip,
    proxy_attribution_required,
)


def attribute(proxies: TrustedProxies, peer: str, *pairs: tuple[str, str]) -> Attribution | None:
    return proxies.attribute(peer, Headers(list(pairs)))


@pytest.mark.parametrize(
    "name",
    [
        "Forwarded",
        "X-Forwarded-For",
        "x-forwarded-proto",
        "X-Forwarded-Anything",
        "X-Real-IP",
        "Tailscale-User-Login",
        "Tailscale-Funnel-Request",
    ],
)
def test_forwarding_headers_are_recognised(name: str) -> None:
    assert has_forwarding_headers(Headers([(name, "x")]))


def test_ordinary_headers_are_not_forwarding_headers() -> None:
    headers = Headers([("Origin", "http://x"), ("X-Request-Id", "1"), ("User-Agent", "u")])
    assert not has_forwarding_headers(headers)
    assert not has_forwarding_headers(None)


def test_direct_clients_are_their_socket_address() -> None:
    proxies = TrustedProxies()
    assert attribute(proxies, "127.0.0.1") == Attribution("127.0.0.1")
    assert attribute(proxies, "::ffff:192.0.2.4") == Attribution("192.0.2.4")
    assert attribute(proxies, "fe80::1%eth0") == Attribution("fe80::1")


def test_forwarded_headers_without_a_trusted_proxy_cannot_be_attributed() -> None:
    proxies = TrustedProxies()
    assert attribute(proxies, "127.0.0.1", ("X-Forwarded-For", "203.0.113.7")) is None
    assert attribute(proxies, "192.0.2.1", ("Forwarded", "for=203.0.113.7")) is None


def test_the_right_most_untrusted_hop_is_the_client() -> None:
    proxies = TrustedProxies(["10.0.0.0/8", "192.0.2.10"])
    got = attribute(
        proxies, "192.0.2.10", ("X-Forwarded-For", "198.51.100.1, 203.0.113.7, 10.1.2.3")
    )
    assert got == Attribution("203.0.113.7", via_proxy=True)


def test_loopback_hops_are_skipped_and_ports_stripped() -> None:
    proxies = TrustedProxies(["127.0.0.1"])
    got = attribute(proxies, "127.0.0.1", ("X-Forwarded-For", "203.0.113.7:5555, 127.0.0.1"))
    assert got == Attribution("203.0.113.7", via_proxy=True)
    v6 = attribute(proxies, "127.0.0.1", ("X-Forwarded-For", "[2001:db8::7]:443"))
    assert v6 == Attribution("2001:db8::7", via_proxy=True)


def test_repeated_forwarded_for_headers_form_one_chain() -> None:
    proxies = TrustedProxies(["127.0.0.1"])
    got = attribute(
        proxies,
        "127.0.0.1",
        ("X-Forwarded-For", "203.0.113.7"),
        ("X-Forwarded-For", "198.51.100.2"),
    )
    assert got == Attribution("198.51.100.2", via_proxy=True)


def test_a_trusted_proxy_that_names_no_client_is_refused() -> None:
    proxies = TrustedProxies(["127.0.0.1", "10.0.0.0/8"])
    assert attribute(proxies, "10.0.0.5", ("X-Forwarded-Proto", "https")) is None
    assert attribute(proxies, "10.0.0.5", ("X-Forwarded-For", "127.0.0.1")) is None
    assert attribute(proxies, "10.0.0.5", ("X-Forwarded-For", "10.0.0.6, garbage")) is None
    # The Forwarded header is not read.
    assert attribute(proxies, "10.0.0.5", ("Forwarded", "for=203.0.113.7")) is None


def test_a_trusted_non_loopback_proxy_without_headers_is_refused() -> None:
    """Its own address says nothing about the client it relays (as on the real gateway)."""
    assert attribute(TrustedProxies(["10.0.0.5"]), "10.0.0.5") is None


def test_a_direct_loopback_client_stays_local_beside_a_loopback_proxy() -> None:
    assert attribute(TrustedProxies(["127.0.0.1"]), "127.0.0.1") == Attribution("127.0.0.1")


def test_real_ip_only_with_the_fallback() -> None:
    strict = TrustedProxies(["10.0.0.5"])
    relaxed = TrustedProxies(["10.0.0.5"], allow_real_ip_fallback=True)
    assert attribute(strict, "10.0.0.5", ("X-Real-IP", "203.0.113.7")) is None
    got = attribute(relaxed, "10.0.0.5", ("X-Real-IP", "203.0.113.7"))
    assert got == Attribution("203.0.113.7", via_proxy=True)
    preferred = attribute(
        relaxed, "10.0.0.5", ("X-Forwarded-For", "198.51.100.2"), ("X-Real-IP", "203.0.113.7")
    )
    assert preferred == Attribution("198.51.100.2", via_proxy=True)


def test_normalize_ip_keeps_non_addresses() -> None:
    assert normalize_ip("not an ip") == "not an ip"
    assert normalize_ip("::FFFF:127.0.0.1") == "127.0.0.1"


def test_the_403_answer() -> None:
    response = proxy_attribution_required()
    assert (response.status_code, response.reason_phrase) == (403, "Forbidden")
    assert list(response.headers.raw_items()) == [
        ("Content-Type", "application/json; charset=utf-8"),
        ("Content-Length", str(len(response.body))),
        ("Connection", "close"),
    ]
    assert json.loads(response.body)["error"]["type"] == "proxy_attribution_required"


def test_config_refuses_an_entry_that_is_not_an_address() -> None:
    with pytest.raises(ValueError, match="not an IP address or CIDR network"):
        GatewayConfig(trusted_proxies=["proxy.example"])
    assert GatewayConfig(trusted_proxies=[" 10.0.0.0/8 "]).trusted_proxies == ["10.0.0.0/8"]
