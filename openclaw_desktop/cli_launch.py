"""Which gateway ``openclaw-desktop`` without a subcommand uses: ``--gateway-port``,
``--gateway-url`` and the environment, and whether the command line named one (then it beats
the gateway the window remembers from the last launch)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field

from openclaw_desktop.errors import ConfigError
from openclaw_desktop.protocol import DEFAULT_GATEWAY_PORT
from openclaw_desktop.transport import Endpoint

__all__ = ["GATEWAY_PORT_ENV", "LaunchGateway", "launch_gateway", "port_number"]

#: The bundled gateway's port when ``--gateway-port`` is not given (as the real gateway's
#: ``OPENCLAW_GATEWAY_PORT``): a standing setting, not a choice made for this launch.
GATEWAY_PORT_ENV = "OPENCLAW_GATEWAY_PORT"


def port_number(text: str) -> int:
    """A TCP port (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number (1-65535): {value}")
    return value


@dataclass(frozen=True, slots=True)
class LaunchGateway:
    """The gateway a launch without subcommand uses, from its command line and environment.

    Attributes:
        port: the bundled gateway's port (``--gateway-port``, ``OPENCLAW_GATEWAY_PORT``, 18789).
        url: ``--gateway-url``, or None for the bundled gateway.
        token: ``OPENCLAW_GATEWAY_TOKEN`` for ``url`` (None: the stored one).
        explicit: the gateway was named on the command line (``--gateway-port`` or
            ``--gateway-url``): it is used now, over the window's remembered choice.
    """

    port: int = DEFAULT_GATEWAY_PORT
    url: str | None = None
    token: str | None = field(default=None, repr=False)
    explicit: bool = False


def launch_gateway(args: argparse.Namespace) -> LaunchGateway:
    """What ``--gateway-port``, ``--gateway-url`` and the environment say (see
    :class:`LaunchGateway`).

    Raises:
        ConfigError: ``--gateway-url`` is not a usable gateway URL, or
            ``OPENCLAW_GATEWAY_PORT`` is not a port.
    """
    url: str | None = args.gateway_url
    if url is not None:
        try:
            Endpoint.parse(url)
        except ConfigError as exc:
            raise ConfigError(f"--gateway-url: {exc}") from None
    port: int | None = args.gateway_port
    if port is None:
        raw = os.environ.get(GATEWAY_PORT_ENV, "").strip()
        try:
            port = port_number(raw) if raw else DEFAULT_GATEWAY_PORT
        except argparse.ArgumentTypeError as exc:
            raise ConfigError(f"{GATEWAY_PORT_ENV}: {exc}") from None
    token = (os.environ.get("OPENCLAW_GATEWAY_TOKEN") or None) if url is not None else None
    explicit = args.gateway_port is not None or url is not None
    return LaunchGateway(port=port, url=url, token=token, explicit=explicit)
