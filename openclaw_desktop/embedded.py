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
from collections.abc import AsyncIterator

from openclaw_desktop.config.client_profile import cli_client, user_agent
from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.errors import ConfigError, OpenClawError
from openclaw_desktop.identity import IdentityStore
from openclaw_desktop.integration.command import EMBEDDED_ALLOW, bundled_gateway_args, gateway_argv
from openclaw_desktop.protocol import OperatorScope, Role
from openclaw_desktop.session import EventReceived
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection

__all__ = ["EMBEDDED_ALLOW", "approve_own_surface", "bundled_gateway"]

log = logging.getLogger("openclaw.cli")

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
        command = [*gateway_argv(), *bundled_gateway_args(port)]
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


async def _approve_mine(conn: GatewayConnection, node_id: str) -> int:
    """Approve every pending surface request of this computer's node; returns how many."""
    pending = (await conn.request("node.pair.list", {}))["pending"]
    approved = 0
    for request in pending:
        if request.get("nodeId") != node_id:
            continue
        await conn.request("node.pair.approve", {"requestId": request["requestId"]})
        log.info("approved this computer's node surface on its bundled gateway")
        approved += 1
    return approved


async def approve_own_surface(
    paths: AppPaths, url: str, token: str, *, poll_s: float = 10.0
) -> None:
    """Keep this computer's own node surface approved on its bundled gateway (the owner's node).

    Runs until cancelled: connects as a loopback operator with the shared token, approves
    pending surface requests of this device at once and again whenever the gateway announces a
    new one (``node.pair.requested``, e.g. after the user enabled the camera), with a slow poll
    as a safety net. Other devices' requests are left to the user.
    """
    node_id = IdentityStore(paths.identity_file).load_or_create().device_id
    options = ConnectionOptions(
        url=url,
        role=Role.OPERATOR,
        client=cli_client(),
        shared_token=token,
        scopes=(OperatorScope.READ.value, OperatorScope.WRITE.value, OperatorScope.PAIRING.value),
        user_agent=user_agent(),
    )
    wake = asyncio.Event()

    def on_event(event: EventReceived) -> None:
        if event.event == "node.pair.requested":
            wake.set()

    async with GatewayConnection(options) as conn:
        conn.on_event(on_event)
        while True:
            try:
                await conn.wait_ready(30)
                await _approve_mine(conn, node_id)
            except (OpenClawError, TimeoutError) as exc:
                log.debug("own-surface approval attempt failed: %s", exc)
            wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll_s):
                    await wake.wait()
