"""OpenClaw Desktop: the core runtime (headless, no Qt).

Subpackages, bottom to top: ``protocol`` (wire models), ``identity`` (device key,
signatures, secret storage), ``session`` (sans-I/O gateway client), ``trust`` (TLS pins),
``config`` (paths and settings), ``transport`` (asyncio + websockets), ``node`` (node
command registry and dispatcher), ``cli`` (the ``openclaw-desktop`` command).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
