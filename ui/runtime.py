"""The desktop runtime: the bundled gateway (or a given one), this computer as its node, and
the operator SDK session the chat window uses. Plain asyncio; the window only observes it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_desktop.config import AppPaths, SettingsStore
from openclaw_desktop.config.client_profile import node_client, user_agent
from openclaw_desktop.embedded import approve_own_surface, bundled_gateway
from openclaw_desktop.errors import OpenClawError
from openclaw_desktop.identity import (
    CredentialStore,
    IdentityStore,
    gateway_key,
    open_secret_store,
)
from openclaw_desktop.protocol import MIN_NODE_PROTOCOL_VERSION, OperatorScope, Role
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.transport import ConnectionOptions, ConnectionStatus
from openclaw_desktop.trust import TrustCallback

if TYPE_CHECKING:  # the node pulls in the device adapters (OpenCV, numpy): loaded on use
    from openclaw_desktop.node.host import NodeHost

__all__ = ["WINDOW_SCOPES", "DesktopRuntime", "RuntimeTarget"]

log = logging.getLogger("openclaw.ui")

#: What the window asks for: chat, sessions, approvals, pairing and talk (not secrets).
WINDOW_SCOPES = tuple(
    scope.value
    for scope in (
        OperatorScope.READ,
        OperatorScope.WRITE,
        OperatorScope.ADMIN,
        OperatorScope.APPROVALS,
        OperatorScope.PAIRING,
        OperatorScope.TALK,
    )
)


@dataclass
class RuntimeTarget:
    """Which gateway: the bundled one on ``port`` (``url`` None), or ``url`` with a token."""

    url: str | None = None
    token: str | None = None
    port: int = 18789
    node: bool = True


class DesktopRuntime:
    """Starts and owns the sessions; :meth:`aclose` stops everything it started."""

    def __init__(
        self, paths: AppPaths, target: RuntimeTarget, trust_callback: TrustCallback | None = None
    ) -> None:
        self.paths = paths
        self.target = target
        self.trust_callback = trust_callback
        #: Operator connection status (connecting, awaiting approval, connected, ...).
        self.operator_status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self.client: OpenClaw | None = None
        self.node: NodeHost | None = None
        self._stack = contextlib.AsyncExitStack()
        self._approver: asyncio.Task[None] | None = None
        self.node_status_listeners: list[Callable[[ConnectionStatus], None]] = []
        #: Called with each node host this runtime starts (at start and on resume).
        self.node_started_listeners: list[Callable[[NodeHost], None]] = []
        #: The user paused the node from the tray (it stays off until resumed).
        self.node_paused = False
        self._gateway: tuple[str, str | None] | None = None

    async def start(self) -> OpenClaw:
        """Connect (starting or attaching to the bundled gateway first, by default)."""
        url, token = self.target.url, self.target.token
        if url is None:
            token = await self._stack.enter_async_context(
                bundled_gateway(self.paths, self.target.port)
            )
            url = f"ws://127.0.0.1:{self.target.port}"
            self._approver = asyncio.create_task(approve_own_surface(self.paths, url, token))
        client = OpenClaw.connect(
            url,
            token=token,
            scopes=WINDOW_SCOPES,
            identity="installation",
            trust_callback=self.trust_callback,
            tls_hint=getattr(self.target, "tls_hint", None),
            bootstrap_token=getattr(self.target, "bootstrap_token", None),
            timeout=24 * 3600,  # waits through pairing approval; the window shows why
        )
        for listener in self.operator_status_listeners:
            client.connection.on_status(listener)
        self.client = await self._stack.enter_async_context(client)
        self._gateway = (url, token)
        if self.target.node:
            await self._start_node()
        return self.client

    @property
    def approves_own_requests(self) -> bool:
        """Whether this runtime approves its own node's pairing requests itself (on the
        bundled gateway it started); elsewhere the user approves them like any device's."""
        return self._approver is not None

    async def _start_node(self) -> NodeHost:
        assert self._gateway is not None
        node = self._node(*self._gateway)
        if self.client is not None:
            # talk.ptt.* gets its transcript from the gateway's recognizer, through the
            # operator session (a node may not open talk sessions itself).
            from openclaw_desktop.voice.transcribe import GatewayTranscriber

            node.ctx.transcriber = GatewayTranscriber(self.client)
        for listener in self.node_status_listeners:
            node.connection.on_status(listener)
        self.node = node
        for started in self.node_started_listeners:
            started(node)
        await node.start()
        return node

    async def pause_node(self) -> None:
        """Disconnect this computer's node: the agent cannot use it until :meth:`resume_node`
        (the chat stays connected). Running captures are cancelled by the close."""
        self.node_paused = True
        node, self.node = self.node, None
        if node is not None:
            await node.aclose()

    async def resume_node(self) -> NodeHost | None:
        """Reconnect the node after a pause (with the current settings)."""
        self.node_paused = False
        if self.node is not None or self._gateway is None or not self.target.node:
            return self.node
        return await self._start_node()

    def _node(self, url: str, token: str | None) -> NodeHost:
        identity = IdentityStore(self.paths.identity_file).load_or_create()
        options = ConnectionOptions(
            url=url,
            role=Role.NODE,
            client=node_client(self._display_name()),
            signer=identity,
            credentials=CredentialStore(open_secret_store(self.paths.secrets_file)),
            shared_token=token,
            min_protocol=MIN_NODE_PROTOCOL_VERSION,
            wait_for_pairing=True,
            user_agent=user_agent(),
        )
        from openclaw_desktop.node.host import NodeHost

        return NodeHost(options, SettingsStore(self.paths.settings_file))

    def replace_pin(self, fingerprint: str) -> None:
        """The user replaced a changed TLS pin: store it and reconnect both sessions now."""
        url = self.target.url
        if url is None:
            return
        CredentialStore(open_secret_store(self.paths.secrets_file)).save_tls_pin(
            gateway_key(url), fingerprint
        )
        log.warning("TLS pin of %s replaced by the user", gateway_key(url))
        for connection in (
            self.client.connection if self.client else None,
            self.node.connection if self.node else None,
        ):
            if connection is not None:
                connection.resume()

    def _display_name(self) -> str | None:
        """The user's name for this computer (``node.display_name``), if set and readable."""
        try:
            return SettingsStore(self.paths.settings_file).load().node.display_name
        except OpenClawError:
            return None  # a broken settings file is reported by the node host itself

    async def aclose(self) -> None:
        """Stop the node, the operator session and (if we started it) the gateway."""
        if self._approver is not None:
            self._approver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._approver
        if self.node is not None:
            await self.node.aclose()
        await self._stack.aclose()
