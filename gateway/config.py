"""The bundled gateway's configuration: one pydantic schema declaring every option.

Field names follow the real OpenClaw config where one exists (``gateway.nodes.commands.allow``
becomes ``nodes_allow``), so the README can point users at the same concepts.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, field_validator

from gateway.proxies import parse_proxy_entry
from openclaw_desktop.protocol import DEFAULT_GATEWAY_PORT

__all__ = ["STATE_ENV", "AuthMode", "BindMode", "GatewayConfig", "default_state_dir"]

STATE_ENV = "OPENCLAW_DESKTOP_GATEWAY_STATE"

AuthMode = Literal["token", "password", "none"]
BindMode = Literal["loopback", "lan"]


def default_state_dir() -> Path:
    """``$OPENCLAW_DESKTOP_GATEWAY_STATE``, else ``<OPENCLAW_DESKTOP_HOME>/gateway``, else the
    platform's user state folder for ``openclaw-desktop/gateway``."""
    explicit = os.environ.get(STATE_ENV)
    if explicit:
        return Path(explicit)
    home = os.environ.get("OPENCLAW_DESKTOP_HOME")
    if home:
        return Path(home) / "state" / "gateway"
    return Path(platformdirs.user_state_dir("openclaw-desktop", appauthor=False)) / "gateway"


class GatewayConfig(BaseModel):
    """Everything the bundled gateway can be told."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    state_dir: Path = Field(default_factory=default_state_dir)
    port: int = Field(default=DEFAULT_GATEWAY_PORT, ge=0, le=65535)
    bind: BindMode = "loopback"
    #: Explicit listen addresses (tests); overrides ``bind`` when set.
    hosts: list[str] | None = None
    auth_mode: AuthMode = "token"
    #: The shared token; generated and persisted on first start when None.
    token: str | None = None
    password: str | None = None
    tls: bool = False
    tick_interval_ms: int = Field(default=30_000, ge=100)
    handshake_timeout_ms: int = Field(default=15_000, ge=100)
    #: Devices connecting from this machine are approved without a prompt.
    auto_approve_local: bool = True
    #: ``gateway.nodes.commands.allow`` / ``.deny``.
    nodes_allow: list[str] = Field(default_factory=list)
    nodes_deny: list[str] = Field(default_factory=list)
    #: mDNS advertising: ``off``, ``minimal`` or ``full``; None = on with ``bind: lan`` only.
    mdns_mode: Literal["off", "minimal", "full"] | None = None
    #: Interface addresses to advertise on (``["127.0.0.1"]`` in tests); None for all.
    mdns_interfaces: list[str] | None = None
    display_name: str | None = None
    #: Look for a local Ollama on 127.0.0.1:11434 when choosing a model provider.
    probe_ollama: bool = True
    #: Failed auth attempts per client address before AUTH_RATE_LIMITED.
    auth_rate_limit_attempts: int = Field(default=10, ge=1)
    auth_rate_limit_window_ms: int = Field(default=60_000, ge=1000)
    auth_rate_limit_lockout_ms: int = Field(default=300_000, ge=1000)
    #: Loopback clients are exempt from rate limiting, as on the real gateway.
    auth_rate_limit_loopback: bool = False
    #: ``gateway.trustedProxies``: reverse proxies (IP addresses or CIDR networks) whose
    #: ``X-Forwarded-For`` names the client; forwarded headers from anyone else get HTTP 403.
    trusted_proxies: list[str] = Field(default_factory=list)
    #: ``gateway.allowRealIpFallback``: from a trusted proxy, ``X-Real-IP`` when
    #: ``X-Forwarded-For`` names no client.
    allow_real_ip_fallback: bool = False

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_parse(cls, value: list[str]) -> list[str]:
        for entry in value:
            parse_proxy_entry(entry)
        return [entry.strip() for entry in value]

    @property
    def listen_hosts(self) -> list[str]:
        """The addresses to bind."""
        if self.hosts:
            return list(self.hosts)
        return ["127.0.0.1", "::1"] if self.bind == "loopback" else ["0.0.0.0", "::"]

    @property
    def advertise(self) -> bool:
        """Whether to advertise over mDNS."""
        if self.mdns_mode is not None:
            return self.mdns_mode != "off"
        return self.bind == "lan"
