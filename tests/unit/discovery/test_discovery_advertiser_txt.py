"""Unit tests: what the gateway advertiser puts on the wire (names, host label, TXT limits).

These are the pure helpers of ``gateway.advertise``; the round trip over real multicast is in
``tests/integration/discovery``.
"""

from __future__ import annotations

import logging

import pytest

from gateway.advertise import (
    MAX_INSTANCE_NAME_BYTES,
    MAX_TXT_VALUE_BYTES,
    _renamed,
    build_txt,
    format_instance_name,
    machine_display_name,
    resolve_mdns_hostname,
    truncate_utf8,
)
from openclaw_desktop.discovery.txt import SERVICE_TYPE, endpoint_from_service


@pytest.mark.parametrize(
    ("display", "instance"),
    [
        ("Studio", "Studio (OpenClaw)"),
        ("  Studio Mac  ", "Studio Mac (OpenClaw)"),
        ("My OpenClaw box", "My OpenClaw box"),
        ("openclaw-gw", "openclaw-gw"),
        ("", "OpenClaw"),
        ("   ", "OpenClaw"),
    ],
)
def test_instance_naming(display: str, instance: str) -> None:
    assert format_instance_name(display) == instance


@pytest.mark.parametrize(
    ("env", "system", "label"),
    [
        ({}, "studio", "studio"),
        ({}, "Studio.local", "Studio"),
        ({}, "build-01.example.org", "build-01"),
        ({}, "bad_host", "openclaw"),
        ({}, "-leading", "openclaw"),
        ({}, "", "openclaw"),
        ({}, "x" * 64, "openclaw"),
        ({"OPENCLAW_MDNS_HOSTNAME": "gw-box.local"}, "studio", "gw-box"),
        ({"OPENCLAW_MDNS_HOSTNAME": "  "}, "studio", "studio"),
    ],
)
def test_mdns_hostname(env: dict[str, str], system: str, label: str) -> None:
    assert resolve_mdns_hostname(env, system) == label


def test_machine_display_name() -> None:
    assert machine_display_name("Studio.local") == "Studio"
    assert machine_display_name("") == "openclaw"


def test_minimal_txt_keys_and_order() -> None:
    txt = build_txt(port=18789, hostname="studio", instance_name="Studio (OpenClaw)")
    assert list(txt.items()) == [
        ("role", "gateway"),
        ("gatewayPort", "18789"),
        ("lanHost", "studio.local"),
        ("displayName", "Studio"),
        ("transport", "gateway"),
    ]


def test_tls_and_full_mode_txt() -> None:
    txt = build_txt(
        port=1,
        hostname="h",
        instance_name="My OpenClaw box",
        tls=True,
        tls_fingerprint="ab" * 32,
        direct_reachable=True,
        full=True,
        tailnet_dns=" h.tail.ts.net ",
        cli_path="/usr/bin/openclaw",
    )
    assert list(txt) == [
        "role",
        "gatewayPort",
        "lanHost",
        "displayName",
        "gatewayTls",
        "gatewayTlsSha256",
        "gatewayDirectReachable",
        "tailnetDns",
        "cliPath",
        "transport",
        "sshPort",
    ]
    assert txt["displayName"] == "My OpenClaw box"
    assert txt["gatewayTls"] == "1"
    assert txt["tailnetDns"] == "h.tail.ts.net"
    assert txt["sshPort"] == "22"


def test_tls_without_fingerprint_only_flags_tls() -> None:
    txt = build_txt(port=1, hostname="h", instance_name="x", tls=True)
    assert txt["gatewayTls"] == "1"
    assert "gatewayTlsSha256" not in txt


def test_over_long_txt_values_are_blanked_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    long_name = "é" * (MAX_TXT_VALUE_BYTES // 2 + 1)  # 232 bytes
    with caplog.at_level(logging.WARNING, logger="gateway"):
        txt = build_txt(port=1, hostname="h", instance_name=long_name)
    assert txt["displayName"] == ""
    assert "displayName" in caplog.text
    exactly = "a" * MAX_TXT_VALUE_BYTES
    assert build_txt(port=1, hostname="h", instance_name=exactly)["displayName"] == exactly


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 63, "short"),
        ("a" * 70, 63, "a" * 63),
        ("é" * 40, 63, "é" * 31),  # 2-byte characters are never split
        ("abc-" + "d" * 70, 4, "abc"),  # trailing dashes are trimmed
        ("---" + "x" * 70, 3, "fallback"),
    ],
)
def test_truncate_utf8(text: str, limit: int, expected: str) -> None:
    assert truncate_utf8(text, limit, "fallback") == expected


def test_renaming_keeps_within_63_bytes() -> None:
    base = "Ü" * 40 + " (OpenClaw)"
    first = _renamed(base, 1)
    second = _renamed(base, 2)
    assert len(first.encode()) <= MAX_INSTANCE_NAME_BYTES
    assert len(second.encode()) <= MAX_INSTANCE_NAME_BYTES
    assert second.endswith(" (2)")
    assert _renamed("Studio (OpenClaw)", 3) == "Studio (OpenClaw) (3)"


def test_advertised_txt_parses_back_on_the_client() -> None:
    txt = build_txt(
        port=18789,
        hostname="studio",
        instance_name="Studio (OpenClaw)",
        tls=True,
        tls_fingerprint="AB" * 32,
    )
    properties = {k.encode(): v.encode() for k, v in txt.items()}
    endpoint = endpoint_from_service(
        f"Studio (OpenClaw).{SERVICE_TYPE}", SERVICE_TYPE, ["10.0.0.2"], 18789, properties, None
    )
    assert endpoint is not None
    assert endpoint.tls
    assert endpoint.tls_fingerprint_hint == "ab" * 32
    assert endpoint.display_name == "Studio"
    assert endpoint.lan_host == "studio.local"
