"""Unit tests: the gateway configuration's defaults and when it advertises over mDNS."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from gateway.cli import _parser
from gateway.config import STATE_ENV, GatewayConfig, default_state_dir


def test_defaults_match_the_real_gateway() -> None:
    """127.0.0.1:18789 (and ::1), shared token, 15 s handshake, 30 s tick, no mDNS."""
    config = GatewayConfig()
    assert config.port == 18789
    assert config.bind == "loopback"
    assert config.hosts is None
    assert config.listen_hosts == ["127.0.0.1", "::1"]
    assert config.auth_mode == "token"
    assert config.tls is False
    assert config.handshake_timeout_ms == 15_000
    assert config.tick_interval_ms == 30_000  # the real hello-ok policy.tickIntervalMs
    assert config.mdns_mode is None
    assert config.mdns_interfaces is None
    assert config.advertise is False
    assert config.auto_approve_local is True


def test_lan_binds_every_interface_and_advertises() -> None:
    config = GatewayConfig(bind="lan")
    assert config.listen_hosts == ["0.0.0.0", "::"]
    assert config.advertise is True


@pytest.mark.parametrize(
    ("bind", "mdns_mode", "advertise"),
    [
        ("loopback", None, False),
        ("lan", None, True),
        ("loopback", "off", False),
        ("lan", "off", False),
        ("loopback", "minimal", True),
        ("lan", "minimal", True),
        ("loopback", "full", True),
        ("lan", "full", True),
    ],
)
def test_advertise_follows_bind_unless_mdns_mode_says_otherwise(
    bind: str, mdns_mode: str | None, advertise: bool
) -> None:
    assert GatewayConfig(bind=bind, mdns_mode=mdns_mode).advertise is advertise


def test_explicit_hosts_override_bind_but_not_advertising() -> None:
    """Tests listen on 127.0.0.1 only with ``bind: lan``: still advertised by default."""
    config = GatewayConfig(bind="lan", hosts=["127.0.0.1"])
    assert config.listen_hosts == ["127.0.0.1"]
    assert config.advertise is True
    assert GatewayConfig(hosts=["127.0.0.1"]).advertise is False


def test_assignment_is_validated_and_unknown_options_refused() -> None:
    config = GatewayConfig()
    config.bind = "lan"
    assert config.advertise is True
    with pytest.raises(ValidationError):
        config.bind = "everywhere"  # type: ignore[assignment]
    with pytest.raises(ValidationError):
        config.mdns_mode = "on"  # type: ignore[assignment]
    with pytest.raises(ValidationError):
        GatewayConfig(port=70000)
    with pytest.raises(ValidationError):
        GatewayConfig(handshake_timeout_ms=10)
    with pytest.raises(ValidationError):
        GatewayConfig(mdns=True)  # type: ignore[call-arg]


def test_state_dir_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(STATE_ENV, raising=False)
    monkeypatch.setenv("OPENCLAW_DESKTOP_HOME", str(tmp_path / "home"))
    assert default_state_dir() == tmp_path / "home" / "state" / "gateway"
    assert GatewayConfig().state_dir == tmp_path / "home" / "state" / "gateway"
    monkeypatch.setenv(STATE_ENV, str(tmp_path / "explicit"))
    assert default_state_dir() == tmp_path / "explicit"


def test_run_options_default_to_the_config_defaults() -> None:
    """``gateway run`` without options: loopback, 18789, token auth, mDNS left to ``bind``."""
    args = _parser().parse_args(["run"])
    assert (args.bind, args.port, args.auth, args.tls) == ("loopback", 18789, "token", False)
    assert args.mdns is None
    lan = _parser().parse_args(["run", "--bind", "lan"])
    assert GatewayConfig(bind=lan.bind, mdns_mode=lan.mdns).advertise is True
    off = _parser().parse_args(["run", "--bind", "lan", "--mdns", "off"])
    assert GatewayConfig(bind=off.bind, mdns_mode=off.mdns).advertise is False
