"""The embedded default: the bundled gateway on this machine plus this computer as its node.

``openclaw-desktop`` with no subcommand starts (or attaches to) the bundled gateway on
127.0.0.1 and connects this computer to it as a node. The gateway runs as a child process
(``python -m gateway run``): the core never imports it, and a gateway crash cannot take the
node down with it. As the owner of its own bundled gateway, this computer's node surface is
approved without a prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator

from openclaw_desktop.config.client_profile import cli_client, user_agent
from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.errors import ConfigError, OpenClawError
from openclaw_desktop.identity import IdentityStore
from openclaw_desktop.protocol import OperatorScope, Role
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection

__all__ = ["EMBEDDED_ALLOW", "approve_own_surface", "bundled_gateway"]

log = logging.getLogger("openclaw.cli")

#: Node commands of this app that the bundled gateway allows beyond the Linux defaults.
EMBEDDED_ALLOW = ("device.info", "device.status")
START_TIMEOUT_S = 20.0


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
        return True
    return False


@contextlib.asynccontextmanager
async def bundled_gateway(paths: AppPaths, port: int) -> AsyncIterator[str]:
    """Attach to a gateway already on ``port``, or run the bundled one until the block ends.

    Yields its shared token.
    """
    child: asyncio.subprocess.Process | None = None
    if _listening(port):
        log.warning("using the gateway already running on 127.0.0.1:%d", port)
    else:
        command = [sys.executable, "-m", "gateway", "run", "--port", str(port)]
        command += ["--allow", ",".join(EMBEDDED_ALLOW)]
        child = await asyncio.create_subprocess_exec(
            *command, env=dict(os.environ), stdin=subprocess.DEVNULL
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT_S
        while not _listening(port):
            if child.returncode is not None:
                raise ConfigError(f"the bundled gateway exited (code {child.returncode})")
            if loop.time() > deadline:
                child.kill()
                raise ConfigError(f"the bundled gateway did not start within {START_TIMEOUT_S:g}s")
            await asyncio.sleep(0.05)
    try:
        token = paths.gateway_token_file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"cannot read the bundled gateway's token: {exc}") from None
    try:
        yield token
    finally:
        if child is not None and child.returncode is None:
            child.terminate()
            try:
                await asyncio.wait_for(child.wait(), 5)
            except TimeoutError:
                child.kill()
                await child.wait()


async def _already_approved(conn: GatewayConnection, node_id: str) -> bool:
    nodes = (await conn.request("node.list", {})).get("nodes", [])
    for node in nodes:
        if node.get("nodeId") == node_id and node.get("connected"):
            return node.get("approvalState") == "approved" and not node.get("pendingRequestId")
    return False


async def approve_own_surface(paths: AppPaths, url: str, token: str, timeout_s: float = 60) -> bool:
    """Approve this computer's own node surface on its bundled gateway (the owner's node).

    Connects as a loopback operator with the shared token (no device identity needed there)
    and approves pending surface requests of this device until one is approved.
    """
    node_id = IdentityStore(paths.identity_file).load_or_create().device_id
    options = ConnectionOptions(
        url=url,
        role=Role.OPERATOR,
        client=cli_client(),
        shared_token=token,
        scopes=(OperatorScope.READ.value, OperatorScope.WRITE.value, OperatorScope.PAIRING.value),
        reconnect=False,
        user_agent=user_agent(),
    )
    async with asyncio.timeout(timeout_s):
        while True:
            try:
                async with GatewayConnection(options) as conn:
                    await conn.wait_ready(10)
                    while True:
                        pending = (await conn.request("node.pair.list", {}))["pending"]
                        mine = [p for p in pending if p.get("nodeId") == node_id]
                        for request in mine:
                            approve = {"requestId": request["requestId"]}
                            await conn.request("node.pair.approve", approve)
                            log.info("approved this computer's node surface on its bundled gateway")
                            return True
                        if await _already_approved(conn, node_id):
                            return True
                        await asyncio.sleep(0.25)
            except OpenClawError as exc:
                log.debug("surface approval attempt failed: %s", exc)
                await asyncio.sleep(0.5)
