"""Our headless node with Screen and Computer control on, paired with the REAL gateway.

:func:`paired_computer_node` starts ``openclaw-desktop node`` (its own home, the test's X
display), approves its pending pairing/surface requests with the real CLI until the gateway
lists it connected with both ``screen.snapshot`` and ``computer.act``, yields its node id and
stops it on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

from openclaw_desktop.config import NodeSettings, Settings, SettingsStore
from tests.helpers.bundled_gateway import DesktopNode
from tests.helpers.real_openclaw import RealGateway

__all__ = ["COMPUTER_COMMANDS", "approve_pending", "listed_commands", "paired_computer_node"]

COMPUTER_COMMANDS = frozenset({"screen.snapshot", "computer.act"})


def listed_commands(gw: RealGateway, node_id: str) -> set[str] | None:
    """The commands the real gateway lists for a connected node (None when not connected)."""
    for node in gw.cli_json("nodes", "status")["nodes"]:
        if node["nodeId"] == node_id and node.get("connected"):
            return set(node.get("commands") or [])
    return None


def approve_pending(gw: RealGateway, node_id: str) -> None:
    """Approve the node's pending pairing and surface requests with the real CLI."""
    for row in gw.cli_json("nodes", "pending"):
        if row["nodeId"] == node_id:
            gw.cli_json("nodes", "approve", row["requestId"])


@contextlib.asynccontextmanager
async def paired_computer_node(
    gw: RealGateway, display: str, home: Path, timeout: float = 120
) -> AsyncIterator[str]:
    """Our node on ``display``, paired and its surface approved on ``gw``: its node id."""
    store = SettingsStore(home / "config" / "settings.json")
    store.save(Settings(node=NodeSettings(screen=True, computer=True)))
    env = {"DISPLAY": display, "WAYLAND_DISPLAY": "", "XDG_SESSION_TYPE": "x11"}
    node = DesktopNode.start(home, url=gw.url, token=gw.token, env=env)
    try:
        node_id = await asyncio.to_thread(lambda: node.device_id)
        deadline = time.monotonic() + timeout
        while True:
            await asyncio.to_thread(approve_pending, gw, node_id)
            if (
                await asyncio.to_thread(listed_commands, gw, node_id) or set()
            ) >= COMPUTER_COMMANDS:
                break
            assert time.monotonic() < deadline, f"our node never got both commands: {node}"
            await asyncio.sleep(0.5)
        yield node_id
    finally:
        node.stop()
