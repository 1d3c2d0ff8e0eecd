"""How this app introduces itself to a gateway (``connect.params.client``).

Node sessions use the client id of the desktop OS: ``openclaw-linux`` on Linux,
``openclaw-macos`` on macOS, and ``node-host`` on Windows (the real gateway has no Windows
app id; the official Windows node uses ``node-host`` too), all with mode ``node``.
Operator sessions use ``cli``/``cli`` for the command line and ``openclaw-linux``/``ui``
style ids for the GUI. ``platform`` is the lowercase OS name and ``deviceFamily`` its
capitalised form, which the v3 signature covers.
"""

from __future__ import annotations

import platform
import socket
import sys
import uuid

from openclaw_desktop import __version__
from openclaw_desktop.protocol import ClientId, ClientInfo, ClientMode

__all__ = ["cli_client", "desktop_platform", "node_client", "user_agent"]


def desktop_platform() -> tuple[str, str]:
    """``(platform, deviceFamily)`` for this OS: ``("linux", "Linux")`` and so on."""
    os_name = _os_name()
    if os_name.startswith("linux"):
        return "linux", "Linux"
    if os_name == "darwin":
        return "darwin", "Mac"
    if os_name in ("win32", "cygwin"):
        return "windows", "Windows"
    name = platform.system().lower() or os_name
    return name, name.capitalize()


def _os_name() -> str:
    # A runtime value, so type checkers do not prune the other platforms' branches.
    return str(getattr(sys, "platform", ""))


def _node_client_id() -> ClientId:
    if _os_name().startswith("linux"):
        return ClientId.LINUX
    if _os_name() == "darwin":
        return ClientId.MACOS
    return ClientId.NODE_HOST


def node_client(display_name: str | None = None, instance_id: str | None = None) -> ClientInfo:
    """The client info of the node session."""
    plat, family = desktop_platform()
    return ClientInfo(
        id=_node_client_id(),
        display_name=display_name or socket.gethostname() or "OpenClaw Desktop",
        version=__version__,
        platform=plat,
        device_family=family,
        mode=ClientMode.NODE,
        instance_id=instance_id or uuid.uuid4().hex,
    )


def cli_client(instance_id: str | None = None) -> ClientInfo:
    """The client info of one-shot operator commands (``openclaw-desktop call``)."""
    plat, family = desktop_platform()
    return ClientInfo(
        id=ClientId.CLI,
        version=__version__,
        platform=plat,
        device_family=family,
        mode=ClientMode.CLI,
        instance_id=instance_id or uuid.uuid4().hex,
    )


def user_agent() -> str:
    """``openclaw-desktop/<version> (python <x.y>)``."""
    return f"openclaw-desktop/{__version__} (python {platform.python_version()})"
