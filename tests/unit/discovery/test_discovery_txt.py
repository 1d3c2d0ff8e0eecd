"""Unit tests: resolved mDNS services become GatewayEndpoints; hostile TXT is harmless."""

from __future__ import annotations

import dataclasses

import pytest

from openclaw_desktop.discovery.txt import (
    SERVICE_TYPE,
    GatewayEndpoint,
    decode_bonjour_escapes,
    endpoint_from_service,
    stable_gateway_id,
)

FP = "7270b9b1eec5fe809163ace8c347501d3c6ee850aeb91b4d4e56c03eb4f1fd6b"
NAME = f"Studio (OpenClaw).{SERVICE_TYPE}"
TXT = {
    b"role": b"gateway",
    b"gatewayPort": b"18789",
    b"lanHost": b"studio.local",
    b"displayName": b"Studio",
    b"gatewayTls": b"1",
    b"gatewayTlsSha256": FP.encode(),
    b"transport": b"gateway",
}


def _endpoint(
    *,
    name: str = NAME,
    type_: str = SERVICE_TYPE,
    addresses: list[str] | None = None,
    port: int | None = 18789,
    txt: dict[bytes, bytes | None] | None = None,
    server: str | None = "studio.local.",
) -> GatewayEndpoint | None:
    return endpoint_from_service(
        name,
        type_,
        ["192.168.1.20"] if addresses is None else addresses,
        port,
        TXT if txt is None else txt,
        server,
    )


def test_a_real_gateway_advertisement() -> None:
    endpoint = _endpoint(addresses=["fd00::20", "192.168.1.20"])
    assert endpoint is not None
    assert endpoint.name == "Studio (OpenClaw)"
    assert endpoint.host == "192.168.1.20"  # IPv4 first
    assert endpoint.addresses == ("192.168.1.20", "fd00::20")
    assert endpoint.port == 18789
    assert endpoint.tls is True
    assert endpoint.tls_fingerprint_hint == FP
    assert endpoint.display_name == "Studio"
    assert endpoint.lan_host == "studio.local"
    assert endpoint.server == "studio.local"
    assert endpoint.stable_id == "_openclaw-gw._tcp.|local.|Studio (OpenClaw)"
    assert endpoint.url == "wss://192.168.1.20:18789"
    assert endpoint.txt["transport"] == "gateway"


def test_endpoint_is_immutable_and_hashable() -> None:
    endpoint = _endpoint()
    assert endpoint is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        endpoint.port = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        endpoint.txt["role"] = "x"  # type: ignore[index]
    assert hash(endpoint) == hash(_endpoint())


def test_ipv6_only_gives_a_bracketed_url() -> None:
    endpoint = _endpoint(addresses=["fd00::20"], txt={b"gatewayTls": b"0"})
    assert endpoint is not None
    assert endpoint.url == "ws://[fd00::20]:18789"


@pytest.mark.parametrize("value", [b"1", b"true", b"YES", b" yes "])
def test_gateway_tls_accepts_1_true_yes(value: bytes) -> None:
    endpoint = _endpoint(txt={b"gatewayTls": value})
    assert endpoint is not None
    assert endpoint.tls is True


@pytest.mark.parametrize("value", [b"0", b"false", b"on", b"", None])
def test_gateway_tls_anything_else_is_false(value: bytes | None) -> None:
    endpoint = _endpoint(txt={b"gatewayTls": value})
    assert endpoint is not None
    assert endpoint.tls is False
    assert endpoint.url.startswith("ws://")


def test_link_local_and_unspecified_addresses_are_skipped() -> None:
    endpoint = _endpoint(addresses=["169.254.3.4", "fe80::1%eth0", "0.0.0.0", "::", "10.0.0.7"])
    assert endpoint is not None
    assert endpoint.addresses == ("10.0.0.7",)


def test_only_link_local_addresses_give_none() -> None:
    assert _endpoint(addresses=["169.254.3.4", "fe80::1%2"]) is None


def test_no_address_or_garbage_addresses_give_none() -> None:
    assert _endpoint(addresses=[]) is None
    assert _endpoint(addresses=["not-an-ip", "999.1.1.1"]) is None


def test_loopback_is_usable() -> None:
    endpoint = _endpoint(addresses=["127.0.0.1"])
    assert endpoint is not None
    assert endpoint.host == "127.0.0.1"


@pytest.mark.parametrize("port", [None, 0, -1, 65536])
def test_missing_or_invalid_port_gives_none(port: int | None) -> None:
    assert _endpoint(port=port) is None


def test_txt_port_is_never_used_for_connecting() -> None:
    endpoint = _endpoint(port=4444, txt={b"gatewayPort": b"18789"})
    assert endpoint is not None
    assert endpoint.port == 4444
    assert endpoint.url.endswith(":4444")


def test_other_service_types_and_foreign_names_give_none() -> None:
    assert _endpoint(type_="_http._tcp.local.", name="x._http._tcp.local.") is None
    assert _endpoint(name="Studio._other._tcp.local.") is None
    assert _endpoint(name=f".{SERVICE_TYPE}") is None


def test_invalid_utf8_values_and_non_ascii_keys_are_skipped() -> None:
    endpoint = _endpoint(
        txt={
            b"displayName": b"\xff\xfe broken",
            "k\u00e9y".encode(): b"value",
            b"lanHost": b"ok.local",
            b"\x80": b"x",
        }
    )
    assert endpoint is not None
    assert dict(endpoint.txt) == {"lanHost": "ok.local"}
    assert endpoint.display_name == "Studio (OpenClaw)"  # falls back to the instance name


def test_huge_values_are_dropped() -> None:
    endpoint = _endpoint(
        txt={b"displayName": b"A" * 100_000, b"gatewayTlsSha256": b"f" * 5000, b"role": b"gateway"}
    )
    assert endpoint is not None
    assert dict(endpoint.txt) == {"role": "gateway"}
    assert endpoint.display_name == "Studio (OpenClaw)"
    assert endpoint.tls_fingerprint_hint is None


def test_control_characters_are_removed_from_names() -> None:
    endpoint = _endpoint(txt={b"displayName": b"Evil\x1b[2J\nName\x00", b"lanHost": b"\x07"})
    assert endpoint is not None
    assert endpoint.display_name == "Evil[2JName"
    assert endpoint.lan_host is None


def test_valueless_keys_are_kept_as_empty_strings() -> None:
    endpoint = _endpoint(txt={b"gatewayDirectReachable": None, b"role": b"gateway"})
    assert endpoint is not None
    assert endpoint.txt["gatewayDirectReachable"] == ""


@pytest.mark.parametrize(
    "value",
    [b"not-a-fingerprint", b"abc", b"g" * 64, FP[:-1].encode(), b"sha1:" + FP.encode()],
)
def test_bad_fingerprints_are_dropped(value: bytes) -> None:
    endpoint = _endpoint(txt={b"gatewayTls": b"1", b"gatewayTlsSha256": value})
    assert endpoint is not None
    assert endpoint.tls is True
    assert endpoint.tls_fingerprint_hint is None


@pytest.mark.parametrize(
    "value", [FP.upper(), ":".join(FP[i : i + 2] for i in range(0, 64, 2)), f"sha256:{FP}"]
)
def test_fingerprint_hints_are_normalized(value: str) -> None:
    endpoint = _endpoint(txt={b"gatewayTlsSha256": value.encode()})
    assert endpoint is not None
    assert endpoint.tls_fingerprint_hint == FP


def test_bonjour_escapes_in_instance_names() -> None:
    endpoint = _endpoint(name=f"Studio\\032Mac\\032(OpenClaw).{SERVICE_TYPE}", txt={})
    assert endpoint is not None
    assert endpoint.name == "Studio Mac (OpenClaw)"
    assert endpoint.display_name == "Studio Mac (OpenClaw)"
    assert endpoint.stable_id == "_openclaw-gw._tcp.|local.|Studio Mac (OpenClaw)"


@pytest.mark.parametrize(
    ("raw", "decoded"),
    [
        ("plain", "plain"),
        ("A\\032B", "A B"),
        ("caf\\195\\169", "café"),  # escaped UTF-8 bytes
        ("\\999x", "\\999x"),  # over 255: kept literally
        ("x\\03", "x\\03"),  # too short: kept
        ("end\\032", "end "),  # a trailing escape is decoded too
        ("\\255\\255", "\ufffd\ufffd"),  # invalid UTF-8 becomes U+FFFD
        ("ü\\046", "ü."),
    ],
)
def test_decode_bonjour_escapes(raw: str, decoded: str) -> None:
    assert decode_bonjour_escapes(raw) == decoded


def test_stable_id_collapses_whitespace() -> None:
    assert stable_gateway_id("Clawd\\032Gateway   \\032  Node\n") == (
        "_openclaw-gw._tcp.|local.|Clawd Gateway Node"
    )
