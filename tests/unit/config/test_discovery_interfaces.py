"""Where LAN discovery browses: the ``discovery.interfaces`` setting, its command-line form,
and the ``OPENCLAW_DISCOVERY_INTERFACES`` override; a bad list is an error, never "every
interface"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_desktop.config import Settings, SettingsStore, setting_keys
from openclaw_desktop.config.discovery import (
    DISCOVERY_INTERFACES_ENV,
    MAX_INTERFACES,
    DiscoverySettings,
    discovery_interfaces,
    parse_interfaces,
)
from openclaw_desktop.errors import ConfigError


def test_every_interface_by_default() -> None:
    assert Settings().discovery.interfaces == ()
    assert discovery_interfaces(DiscoverySettings(), environ={}) is None
    assert "discovery.interfaces" in setting_keys()


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("127.0.0.1", ("127.0.0.1",)),
        (" 127.0.0.1, ::1 ", ("127.0.0.1", "::1")),
        ("127.0.0.1 127.0.0.1,0:0:0:0:0:0:0:1", ("127.0.0.1", "::1")),
        ("", ()),
        (["192.168.1.5"], ("192.168.1.5",)),
    ],
)
def test_addresses_are_parsed_and_normalized(raw: str | list[str], parsed: tuple[str, ...]) -> None:
    assert parse_interfaces(raw) == parsed


@pytest.mark.parametrize("raw", ["lo", "127.0.0.1,eth0", "300.1.1.1", "127.0.0.1/8"])
def test_names_and_bad_addresses_are_refused(raw: str) -> None:
    with pytest.raises(ValueError, match="is not an IP address"):
        parse_interfaces(raw)


def test_too_many_addresses_are_refused() -> None:
    many = ",".join(f"10.0.0.{i}" for i in range(1, MAX_INTERFACES + 2))
    with pytest.raises(ValueError, match=f"at most {MAX_INTERFACES}"):
        parse_interfaces(many)


def test_set_from_the_command_line_and_cleared(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    updated = store.set("discovery.interfaces", "127.0.0.1,::1")
    assert updated.discovery.interfaces == ("127.0.0.1", "::1")
    saved = json.loads(store.path.read_text(encoding="utf-8"))
    assert saved["discovery"] == {"interfaces": ["127.0.0.1", "::1"]}
    assert store.load().discovery.interfaces == ("127.0.0.1", "::1")
    assert discovery_interfaces(store.load().discovery, environ={}) == ["127.0.0.1", "::1"]
    assert store.set("discovery.interfaces", "none").discovery.interfaces == ()


def test_a_bad_value_changes_nothing(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.set("discovery.interfaces", "127.0.0.1")
    before = store.path.read_bytes()
    with pytest.raises(ConfigError, match=r"discovery\.interfaces: .*'lo' is not an IP address"):
        store.set("discovery.interfaces", "lo")
    assert store.path.read_bytes() == before


def test_a_bad_file_value_fails_loudly(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"discovery": {"interfaces": ["wlan0"]}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"discovery\.interfaces"):
        SettingsStore(path).load()


def test_the_environment_overrides_the_setting() -> None:
    settings = DiscoverySettings(interfaces=("192.168.1.5",))
    env = {DISCOVERY_INTERFACES_ENV: "127.0.0.1"}
    assert discovery_interfaces(settings, environ=env) == ["127.0.0.1"]
    assert discovery_interfaces(settings, environ={DISCOVERY_INTERFACES_ENV: "  "}) == [
        "192.168.1.5"
    ]


def test_a_bad_environment_value_is_an_error_naming_the_variable() -> None:
    env = {DISCOVERY_INTERFACES_ENV: "loopback"}
    with pytest.raises(ConfigError, match=f"{DISCOVERY_INTERFACES_ENV}: 'loopback' is not"):
        discovery_interfaces(DiscoverySettings(), environ=env)
