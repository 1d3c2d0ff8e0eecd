"""Where LAN discovery (mDNS) may browse: every interface (the default), or only the interface
addresses the user lists (``discovery.interfaces`` in ``settings.json``), overridden for one
run by ``OPENCLAW_DISCOVERY_INTERFACES`` (``127.0.0.1`` keeps discovery on this computer: no
multicast leaves it, which is what tests and locked-down networks need).

An address list that does not parse is an error, never a silent "every interface": a typo
must not send multicast onto a network the user meant to keep out of it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from openclaw_desktop.errors import ConfigError

__all__ = [
    "DISCOVERY_INTERFACES_ENV",
    "MAX_INTERFACES",
    "DiscoverySettings",
    "discovery_interfaces",
    "parse_interfaces",
]

DISCOVERY_INTERFACES_ENV = "OPENCLAW_DISCOVERY_INTERFACES"
MAX_INTERFACES = 16
_SEPARATORS = re.compile(r"[,\s]+")


def parse_interfaces(value: str | Sequence[str]) -> tuple[str, ...]:
    """Interface addresses from ``"127.0.0.1, ::1"`` (or a list of them), normalized and
    without duplicates; empty means every interface.

    Raises:
        ValueError: An entry is not an IPv4/IPv6 address (interface names such as ``lo``
            are not accepted: zeroconf binds to addresses), or there are too many.
    """
    items = _SEPARATORS.split(value) if isinstance(value, str) else list(value)
    addresses: list[str] = []
    for raw in items:
        text = raw.strip() if isinstance(raw, str) else raw
        if not isinstance(text, str):
            raise ValueError(f"an interface address must be text, not {type(raw).__name__}")
        if not text:
            continue
        try:
            address = str(ipaddress.ip_address(text))
        except ValueError:
            raise ValueError(
                f"{text[:64]!r} is not an IP address (give interface addresses, e.g. 127.0.0.1)"
            ) from None
        if address not in addresses:
            addresses.append(address)
    if len(addresses) > MAX_INTERFACES:
        raise ValueError(f"at most {MAX_INTERFACES} interface addresses, got {len(addresses)}")
    return tuple(addresses)


class DiscoverySettings(BaseModel):
    """Finding gateways on the local network."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interfaces: tuple[str, ...] = Field(
        (),
        description="Interface addresses to look for gateways on (e.g. 127.0.0.1,192.168.1.5); "
        f"empty means every interface. {DISCOVERY_INTERFACES_ENV} overrides it",
    )

    @field_validator("interfaces", mode="before")
    @classmethod
    def _addresses(cls, value: object) -> tuple[str, ...]:
        if value is None:
            return ()
        if isinstance(value, str | list | tuple):
            return parse_interfaces(value)
        raise ValueError("expected a list of interface addresses")


def discovery_interfaces(
    settings: DiscoverySettings, environ: Mapping[str, str] | None = None
) -> list[str] | None:
    """The addresses to browse on (None: every interface), the environment variable first.

    Raises:
        ConfigError: ``OPENCLAW_DISCOVERY_INTERFACES`` is set but is not a list of addresses.
    """
    env = os.environ if environ is None else environ
    raw = env.get(DISCOVERY_INTERFACES_ENV, "").strip()
    if raw:
        try:
            chosen = parse_interfaces(raw)
        except ValueError as exc:
            raise ConfigError(f"{DISCOVERY_INTERFACES_ENV}: {exc}") from exc
    else:
        chosen = settings.interfaces
    return list(chosen) or None
