"""The bundled OpenClaw gateway (asyncio + websockets server).

It imports only :mod:`openclaw_desktop.protocol` and identity verification from the core.
Start it with :func:`gateway.serve` (a coroutine) or ``python -m gateway run``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["GatewayConfig", "__version__", "serve"]

if TYPE_CHECKING:
    from gateway.config import GatewayConfig


async def serve(config: GatewayConfig, **kwargs: Any) -> None:
    """Run the gateway until SIGINT/SIGTERM or cancellation."""
    from gateway.cli import serve as _serve

    await _serve(config, **kwargs)


def __getattr__(name: str) -> Any:
    if name == "GatewayConfig":
        from gateway.config import GatewayConfig

        return GatewayConfig
    raise AttributeError(name)
