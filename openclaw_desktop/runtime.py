"""The client's composition root: the bundled gateway (supervised) or a given one, this
computer as its node, and the operator SDK session the chat window uses.

Both front ends compose through it: the window (``ui/app.py``) with
:meth:`DesktopRuntime.start` (the operator session, then the node), the headless CLI
(``openclaw-desktop`` without a display, ``openclaw-desktop node``) with
:meth:`DesktopRuntime.start_node` (the node only). Plain asyncio and Qt-free: both observe it
through listener lists and show or print what they see. It builds and owns; the rules live
below it (restart policy in :mod:`openclaw_desktop.supervisor`, reconnect policy in
:mod:`openclaw_desktop.transport`, cut classification in :mod:`openclaw_desktop.interruption`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from openclaw_desktop.config import AppPaths, SettingsStore
from openclaw_desktop.config.client_profile import cli_client, node_client, user_agent
from openclaw_desktop.embedded import approve_own_surface
from openclaw_desktop.errors import ConfigError, OpenClawError
from openclaw_desktop.identity import (
    CredentialStore,
    IdentityStore,
    gateway_key,
    open_secret_store,
)
from openclaw_desktop.integration.command import bundled_gateway_args, gateway_argv
from openclaw_desktop.interruption import CutCause, Interruption, classify_drop
from openclaw_desktop.protocol import (
    DEFAULT_GATEWAY_PORT,
    MIN_NODE_PROTOCOL_VERSION,
    OperatorScope,
    Role,
)
from openclaw_desktop.protocol.version import loopback_url
from openclaw_desktop.sdk import OpenClaw
from openclaw_desktop.sdk.client import operator_caps
from openclaw_desktop.sdk.resources import PairingKind
from openclaw_desktop.supervisor import (
    GatewaySupervisor,
    RestartPolicy,
    SupervisorState,
    SupervisorStatus,
)
from openclaw_desktop.transport import ConnectionOptions, ConnectionState, ConnectionStatus
from openclaw_desktop.trust import TrustCallback

if TYPE_CHECKING:  # the node pulls in the device adapters (OpenCV, numpy): loaded on use
    from openclaw_desktop.node.host import NodeHost
    from openclaw_desktop.session import EventReceived
    from openclaw_desktop.transport import GatewayConnection

__all__ = [
    "PAIRING_EVENTS",
    "WINDOW_SCOPES",
    "DesktopRuntime",
    "RuntimeTarget",
    "bundled_token",
    "operator_options",
]

log = logging.getLogger("openclaw.runtime")

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

#: The gateway's events that ask an operator to approve a device or a node surface.
PAIRING_EVENTS = ("device.pair.requested", "node.pair.requested")

#: How long ``start`` waits for the operator session (it waits through pairing approval;
#: the window shows why).
CONNECT_WAIT_S = 24 * 3600.0


@dataclass
class RuntimeTarget:
    """Which gateway: the bundled one on ``port`` (``url`` None), or ``url`` with a token.

    Attributes:
        node: connect this computer as a node too.
        token_first: ``token`` was given for this run (the CLI's ``--token`` or
            ``OPENCLAW_GATEWAY_TOKEN``): the node sends it ahead of its stored device token.
        password: the gateway's shared password (the CLI's ``--password``).
        tls_fingerprint: a pin for this run (normalized SHA-256 hex, ``--tls-fingerprint``);
            stored only by whoever sees a connection with it succeed.
        display_name: the node's name for this run; None: ``node.display_name``, else the
            host name.
    """

    url: str | None = None
    token: str | None = field(default=None, repr=False)
    port: int = DEFAULT_GATEWAY_PORT
    node: bool = True
    token_first: bool = False
    password: str | None = field(default=None, repr=False)
    tls_fingerprint: str | None = None
    display_name: str | None = None


def bundled_token(paths: AppPaths) -> str | None:
    """The bundled gateway's shared token (its token file), None when unreadable or empty."""
    try:
        return paths.gateway_token_file.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def operator_options(
    paths: AppPaths, target: RuntimeTarget, trust_callback: TrustCallback | None = None
) -> ConnectionOptions:
    """An operator session's options for ``target``'s gateway, as this installation (the
    window's session and the CLI's one-shot calls alike): its URL (the bundled gateway's on
    ``target.port`` when None), its token (sent ahead of the stored device token when
    ``token_first``), password and TLS pin, this installation's device identity and keyring
    in ``paths``; ``trust_callback`` asks about an unpinned certificate. Scopes, caps,
    reconnecting and waiting for pairing are the caller's."""
    token = target.token
    return ConnectionOptions(
        url=target.url if target.url is not None else loopback_url(target.port),
        role=Role.OPERATOR,
        client=cli_client(),
        signer=IdentityStore(paths.identity_file).load_or_create(),
        credentials=CredentialStore(open_secret_store(paths.secrets_file)),
        shared_token=token,
        shared_token_first=target.token_first and bool(token),
        password=target.password,
        tls_fingerprint=target.tls_fingerprint,
        trust_callback=trust_callback,
        user_agent=user_agent(),
    )


class DesktopRuntime:
    """Starts and owns the sessions; :meth:`aclose` stops everything it started.

    Listener lists (append before :meth:`start`): ``operator_status_listeners`` and
    ``node_status_listeners`` get every :class:`ConnectionStatus` of the two sessions,
    ``gateway_status_listeners`` every :class:`SupervisorStatus` of the bundled gateway,
    ``node_started_listeners`` each node host started, ``interruption_listeners`` each
    :class:`Interruption` (a live session cut without the user asking).
    """

    def __init__(
        self, paths: AppPaths, target: RuntimeTarget, trust_callback: TrustCallback | None = None
    ) -> None:
        self.paths = paths
        self.target = target
        self.trust_callback = trust_callback
        self.operator_status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self.node_status_listeners: list[Callable[[ConnectionStatus], None]] = []
        self.node_started_listeners: list[Callable[[NodeHost], None]] = []
        self.gateway_status_listeners: list[Callable[[SupervisorStatus], None]] = []
        self.interruption_listeners: list[Callable[[Interruption], None]] = []
        self.client: OpenClaw | None = None
        self.node: NodeHost | None = None
        #: The bundled gateway's supervisor (None for a gateway given by URL).
        self.supervisor: GatewaySupervisor | None = None
        #: How the bundled gateway is restarted (backoff, cap per minute).
        self.restart_policy = RestartPolicy()
        #: The last cut of a live session (the chat layer labels cut replies with it).
        self.last_interruption: Interruption | None = None
        #: The user paused the node from the tray (it stays off until resumed).
        self.node_paused = False
        self._stack = contextlib.AsyncExitStack()
        self._approver: asyncio.Task[None] | None = None
        self._gateway: tuple[str, str | None] | None = None
        self._connected: dict[str, bool] = {}
        self._closing = False
        self._tasks: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ start
    async def start(self) -> OpenClaw:
        """The window's start: connect (starting the supervised bundled gateway first, by
        default) and return the operator client once its session is live; then start the
        node.

        Calling it again after a failure waits again on the same sessions (after
        :meth:`set_token`, :meth:`reconnect_now` or a replaced pin).

        Raises:
            ReconnectPaused: the operator session waits for the user (wrong token, trust);
                it stays open and paused, and :attr:`client` is set.
            ConfigError: the bundled gateway could not be started.
        """
        if self.client is None:
            url, token = await self.open_gateway()
            self._open_operator(url, token)
        assert self.client is not None
        await self.client.connection.wait_ready(CONNECT_WAIT_S)
        self._remember_token()
        if self.target.node and self.node is None and not self.node_paused:
            await self._start_node()
        return self.client

    async def start_node(self) -> NodeHost:
        """The headless start: the gateway (as :meth:`start` opens it) and this computer
        as its node, with no operator session. Returns the node host once it is started
        (it connects, and waits through pairing, by itself; its status listeners say how
        far it got).

        Raises:
            ConfigError: the bundled gateway could not be started.
        """
        await self.open_gateway()
        if self.node is None:
            await self._start_node()
        assert self.node is not None
        return self.node

    async def open_gateway(self) -> tuple[str, str | None]:
        """The gateway's URL and shared token, starting the bundled gateway (supervised:
        started again when it exits) and the approval of this computer's own node surface
        on it, once. A gateway given by URL is used as given.

        Raises:
            ConfigError: the bundled gateway could not be started, or its token not read.
        """
        if self._gateway is not None:
            return self._gateway
        url, token = self.target.url, self.target.token
        if url is None:
            port = self.target.port
            supervisor = GatewaySupervisor(
                [*gateway_argv(), *bundled_gateway_args(port)], port, policy=self.restart_policy
            )
            for listener in self.gateway_status_listeners:
                supervisor.on_status(listener)
            supervisor.on_status(self._gateway_changed)
            self.supervisor = supervisor
            self._stack.push_async_callback(supervisor.aclose)
            await supervisor.start()
            bundled_token = self._bundled_token()
            url, token = loopback_url(port), bundled_token
            self._approver = asyncio.create_task(
                approve_own_surface(self.paths, url, bundled_token), name="own-surface-approver"
            )
        self._gateway = (url, token)
        return self._gateway

    def _open_operator(self, url: str, token: str | None) -> None:
        gateway = dataclasses.replace(self.target, url=url, token=token)
        options = operator_options(self.paths, gateway, self.trust_callback)
        options.scopes = WINDOW_SCOPES
        options.caps = operator_caps(WINDOW_SCOPES)
        options.tls_hint = getattr(self.target, "tls_hint", None)
        options.bootstrap_token = getattr(self.target, "bootstrap_token", None)
        options.wait_for_pairing = True
        client = OpenClaw(options)
        self._watch(client.connection, self.operator_status_listeners)
        self.client = client
        self._stack.push_async_callback(client.aclose)
        client.connection.start()

    def _bundled_token(self) -> str:
        try:
            return self.paths.gateway_token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"cannot read the bundled gateway's token: {exc}") from None

    def _credentials(self) -> CredentialStore:
        return CredentialStore(open_secret_store(self.paths.secrets_file))

    def _remember_token(self) -> None:
        """A token the user typed worked: keep it (in the keyring, never in the known
        gateways file) for the next launch; the connection reads it from there."""
        url, token = self.target.url, self.target.token
        if url is None or not token:
            return
        try:
            credentials = self._credentials()
            if credentials.shared_token(gateway_key(url)) != token:
                credentials.save_shared_token(gateway_key(url), token)
        except OpenClawError as exc:
            log.warning("could not keep the gateway token: %s", exc)

    @property
    def approves_own_requests(self) -> bool:
        """Whether this runtime approves its own node's pairing requests itself (on the
        bundled gateway it started); elsewhere the user approves them like any device's."""
        return self._approver is not None

    @property
    def bundled(self) -> bool:
        """Whether this runtime uses the bundled gateway on loopback."""
        return self.target.url is None

    @property
    def url(self) -> str:
        """The gateway's URL (the bundled one's on loopback)."""
        return self.target.url or loopback_url(self.target.port)

    def pairing_to_ask(self, event: EventReceived) -> tuple[PairingKind, dict[str, Any]] | None:
        """A pairing request the user decides, as ``(kind, request)`` (kind ``device`` or
        ``node``); None for other events and for this computer's own node on the bundled
        gateway this runtime started, whose requests it approves itself.

        Elsewhere this computer's node is asked about like any device: a real gateway wants
        the owner's approval before an operator device also becomes a node, and before a
        node's commands go live, and nothing else would approve it.
        """
        if event.event not in PAIRING_EVENTS:
            return None
        request: dict[str, Any] = event.payload if isinstance(event.payload, dict) else {}
        own = getattr(self.node.options.signer, "device_id", None) if self.node else None
        if (
            own
            and self.approves_own_requests
            and own
            in (
                request.get("deviceId"),
                request.get("nodeId"),
            )
        ):
            return None
        kind: PairingKind = "node" if event.event.startswith("node.") else "device"
        return kind, request

    @property
    def connections(self) -> list[GatewayConnection]:
        """The live connections (operator first, then the node's)."""
        found = [self.client.connection] if self.client is not None else []
        if self.node is not None:
            found.append(self.node.connection)
        return found

    # ------------------------------------------------------------------ the node
    async def _start_node(self) -> NodeHost:
        assert self._gateway is not None
        node = self._node(*self._gateway)
        if self.client is not None:
            # talk.ptt.* gets its transcript from the gateway's recognizer, through the
            # operator session (a node may not open talk sessions itself).
            from openclaw_desktop.voice.transcribe import GatewayTranscriber

            node.ctx.transcriber = GatewayTranscriber(self.client)
        self._watch(node.connection, self.node_status_listeners)
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
            client=node_client(self.target.display_name or self._display_name()),
            signer=identity,
            credentials=self._credentials(),
            shared_token=token,
            shared_token_first=self.target.token_first and bool(token),
            password=self.target.password,
            tls_fingerprint=self.target.tls_fingerprint,
            # Without an operator session the node is the one that meets an unpinned
            # certificate first, so it asks; beside one, the operator session asked already.
            trust_callback=self.trust_callback if self.client is None else None,
            min_protocol=MIN_NODE_PROTOCOL_VERSION,
            wait_for_pairing=True,
            user_agent=user_agent(),
        )
        from openclaw_desktop.node.host import NodeHost

        return NodeHost(options, SettingsStore(self.paths.settings_file))

    def _display_name(self) -> str | None:
        """The user's name for this computer (``node.display_name``), if set and readable."""
        try:
            return SettingsStore(self.paths.settings_file).load().node.display_name
        except OpenClawError:
            return None  # a broken settings file is reported by the node host itself

    # ------------------------------------------------------------------ the user acts
    def set_token(self, token: str) -> None:
        """The user edited the token (after "The gateway refused this token"): both
        sessions use it from their next attempt, which starts now."""
        token = token.strip()
        self.target.token = token or None
        if self._gateway is not None:
            self._gateway = (self._gateway[0], self.target.token)
        for connection in self.connections:
            connection.options.shared_token = self.target.token
            connection.options.shared_token_first = bool(self.target.token)
            connection.resume()

    async def reconnect_now(self) -> None:
        """*Reconnect now*: skip the wait of both sessions, and start the bundled gateway
        again at once if it is down (or gave up after stopping too often)."""
        supervisor = self.supervisor
        if supervisor is not None and supervisor.status.state in (
            SupervisorState.RESTARTING,
            SupervisorState.FAILED,
        ):
            await supervisor.restart_now()
        for connection in self.connections:
            connection.resume()

    def replace_pin(self, fingerprint: str) -> None:
        """The user replaced a changed TLS pin: store it and reconnect both sessions now."""
        url = self.target.url
        if url is None:
            return
        self._credentials().save_tls_pin(gateway_key(url), fingerprint)
        log.warning("TLS pin of %s replaced by the user", gateway_key(url))
        for connection in self.connections:
            connection.resume()

    # ------------------------------------------------------------------ observing
    def on_interruption(self, listener: Callable[[Interruption], None]) -> Callable[[], None]:
        """Call ``listener`` with each cut of a live session; returns the unsubscribe."""
        self.interruption_listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self.interruption_listeners.remove(listener)

        return unsubscribe

    def _watch(
        self, connection: GatewayConnection, listeners: list[Callable[[ConnectionStatus], None]]
    ) -> None:
        role = str(connection.options.role)
        for listener in listeners:
            connection.on_status(listener)

        def track(status: ConnectionStatus) -> None:
            was = self._connected.get(role, False)
            self._connected[role] = status.state is ConnectionState.CONNECTED
            if was and status.state is not ConnectionState.CONNECTED and not self._closing:
                self._cut(role, status)

        connection.on_status(track)

    def _cut(self, role: str, status: ConnectionStatus) -> None:
        if status.state is ConnectionState.CLOSED:
            return  # closed by this app (switching, quitting, pausing the node)
        supervisor = self.supervisor
        exited = supervisor is not None and supervisor.pid is None
        interruption = Interruption(
            classify_drop(status.error, bundled=self.bundled, gateway_exited=exited),
            role,
            int(time.time() * 1000),
            str(status.error) if status.error is not None else "",
        )
        self.last_interruption = interruption
        log.info("%s session cut: %s", role, interruption.cause)
        for listener in list(self.interruption_listeners):
            try:
                listener(interruption)
            except Exception:
                log.exception("interruption listener %r failed", listener)

    def _gateway_changed(self, status: SupervisorStatus) -> None:
        """The bundled gateway runs again after a restart: reconnect both sessions now
        (not after their backoff)."""
        if status.state is SupervisorState.RUNNING and status.restarts > 0:
            for connection in self.connections:
                connection.resume()

    # ------------------------------------------------------------------ stop
    async def aclose(self, cause: CutCause | None = None) -> None:
        """Stop the node, the operator session and (if we started it) the gateway.

        ``cause`` (:attr:`CutCause.GATEWAY_SWITCHED` when the user moves to another
        gateway) is announced to the interruption listeners first.
        """
        if cause is not None and not self._closing:
            self.last_interruption = Interruption(
                cause, str(Role.OPERATOR), int(time.time() * 1000)
            )
            for listener in list(self.interruption_listeners):
                with contextlib.suppress(Exception):
                    listener(self.last_interruption)
        self._closing = True
        if self._approver is not None:
            self._approver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._approver
        if self.node is not None:
            await self.node.aclose()
        await self._stack.aclose()
