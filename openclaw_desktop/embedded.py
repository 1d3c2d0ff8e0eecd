"""The embedded default: the bundled gateway on this machine plus this computer as its node.

``openclaw-desktop --headless`` (no subcommand) starts (or attaches to) the bundled gateway on
127.0.0.1 and connects this computer to it as a node. The gateway runs as a child process
(``python -m gateway run``) under the same :class:`~openclaw_desktop.supervisor.GatewaySupervisor`
as the window's: the core never imports it, a gateway crash cannot take the node down with it,
and a gateway that exits or is killed is started again (backoff, a cap per minute). As the
owner of its own bundled gateway, this computer's node surface is approved without a prompt.

:class:`~openclaw_desktop.runtime.DesktopRuntime` builds that wiring for the window and the
headless CLI alike; this module holds the two pieces of it that are the embedded default's
own rules: :func:`approve_own_surface` and :class:`GatewayKeepsStopping`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from openclaw_desktop.config.client_profile import cli_client, user_agent
from openclaw_desktop.config.paths import AppPaths
from openclaw_desktop.errors import ConnectionClosed, OpenClawError
from openclaw_desktop.identity import IdentityStore
from openclaw_desktop.integration.command import EMBEDDED_ALLOW
from openclaw_desktop.protocol import Method, OperatorScope, Role
from openclaw_desktop.session import EventReceived
from openclaw_desktop.supervisor import (
    SupervisorStatus,
)
from openclaw_desktop.transport import ConnectionOptions, GatewayConnection

__all__ = [
    "EMBEDDED_ALLOW",
    "GatewayKeepsStopping",
    "approve_own_surface",
]

log = logging.getLogger("openclaw.cli")


class GatewayKeepsStopping(ConnectionClosed):
    """The supervised bundled gateway stopped too often (the cap per minute): it is not
    started again by itself. Carries the supervisor's last status (reason, last lines)."""

    def __init__(self, status: SupervisorStatus) -> None:
        tail = "\n".join(status.last_lines[-10:])
        super().__init__(
            None,
            f"the bundled gateway keeps stopping ({status.reason})"
            + (f"; its last lines:\n{tail}" if tail else ""),
        )
        self.status = status

    def __str__(self) -> str:
        return self.reason


async def _approve_mine(conn: GatewayConnection, node_id: str) -> int:
    """Approve every pending surface request of this computer's node; returns how many."""
    pending = (await conn.request(Method.NODE_PAIR_LIST, {}))["pending"]
    approved = 0
    for request in pending:
        if request.get("nodeId") != node_id:
            continue
        await conn.request(Method.NODE_PAIR_APPROVE, {"requestId": request["requestId"]})
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
        # operator.admin too: approving system.run / system.execApprovals.* needs it, as on
        # the real gateway (requiredApproveScopes), or Run commands never reaches the agent.
        scopes=(
            OperatorScope.READ.value,
            OperatorScope.WRITE.value,
            OperatorScope.PAIRING.value,
            OperatorScope.ADMIN.value,
        ),
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
