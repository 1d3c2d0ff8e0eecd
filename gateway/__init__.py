"""The bundled OpenClaw gateway (asyncio + websockets server).

It imports only :mod:`openclaw_desktop.protocol`, identity verification and service units
from the core. Run it with ``python -m gateway run`` (``gateway.cli``), or in-process with
:class:`gateway.server.GatewayServer`. This package module holds only the version, so
importing any part of the gateway does not import the rest.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
