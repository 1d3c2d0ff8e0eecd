"""The gateway's composition root: it builds the services the methods use and owns them
(:class:`GatewayApp`); no sockets here.

The server (:mod:`gateway.server`) hands it authenticated peers and their requests; it
answers them through :mod:`gateway.rpc` and the method table (:mod:`gateway.methods`).
Each method family reaches only the services its own protocol names (``SystemServices`` in
:mod:`gateway.methods.system`, and so on); :func:`family_services` has mypy check that this
class offers them all.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway import __version__
from gateway.config import GatewayConfig
from gateway.device_pairing import DevicePairing
from gateway.hello import hello_ok
from gateway.hub import Hub
from gateway.methods import TABLE
from gateway.methods.agent import AgentServices
from gateway.methods.approvals import ApprovalsServices
from gateway.methods.chat import ChatServices
from gateway.methods.config import ConfigServices
from gateway.methods.control_ui import ControlUiServices
from gateway.methods.control_ui_lists import ControlUiListsServices
from gateway.methods.devices import DeviceServices
from gateway.methods.models import CAPABILITIES as SERVER_CAPS
from gateway.methods.models import ModelsServices
from gateway.methods.node_role import NodeRoleServices
from gateway.methods.nodes import NodeServices
from gateway.methods.ops import OpsServices
from gateway.methods.sessions import SessionsServices
from gateway.methods.subscriptions import SubscriptionsServices
from gateway.methods.system import SystemServices, health_report
from gateway.methods.talk import TalkServices
from gateway.nodes.catalog import NodeCatalog
from gateway.nodes.invoke import InvokeRouter
from gateway.nodes.policy import CommandPolicy
from gateway.peer import Peer
from gateway.ratelimit import AuthRateLimiter
from gateway.rpc import answer_request
from gateway.setup_issuer import SetupCodeIssuer
from gateway.state import (
    BootstrapTokens,
    ChatSessions,
    DeviceRegistry,
    DeviceTokens,
    GatewayState,
    NodeSurfaces,
    PairingRequests,
)
from openclaw_desktop.protocol import ServerInfo
from openclaw_desktop.protocol.events import event_names

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.talk.service import TalkService

__all__ = ["EVENTS", "GatewayApp", "family_services"]

#: Events this gateway may send (``hello-ok.features.events``): the protocol's event table.
EVENTS = event_names()


class GatewayApp:
    """The services of one gateway, built once and shared by every connection.

    Attributes:
        config, state: The gateway's settings and its SQLite state.
        hub: The connected peers, presence and event fan-out.
        router: Pending ``node.invoke`` calls.
        policy: Which node commands are allowed on which platform.
        nodes: The node catalog and command surfaces.
        pairing: Device pairing decisions; closing a device's connections.
        setup_codes: Setup codes for phones.
        auth_limiter: Failed-auth buckets per client address.
        chat: Chat runs and sessions (set by the server once it starts).
        talk: Talk sessions, started by :meth:`talk_service` on first use.

    The methods never get ``state`` itself: the properties below hand each family only the
    stores it reads (issue #16).
    """

    def __init__(
        self,
        config: GatewayConfig,
        state: GatewayState,
        *,
        tls_fingerprint: str | None = None,
    ) -> None:
        self.config = config
        self.state = state
        self.tls_fingerprint = tls_fingerprint
        self.boot_id = str(uuid.uuid4())
        self.hub = Hub(self.boot_id)
        self.router = InvokeRouter()
        self.policy = CommandPolicy(config.nodes_allow, config.nodes_deny)
        self.nodes = NodeCatalog(state, self.hub, self.policy, self.router)
        self.pairing = DevicePairing(state, self.hub)
        self.setup_codes = SetupCodeIssuer(config, state, tls_fingerprint)
        self.auth_limiter = AuthRateLimiter(
            config.auth_rate_limit_attempts,
            config.auth_rate_limit_window_ms,
            config.auth_rate_limit_lockout_ms,
        )
        self._started = time.monotonic()
        self.chat: ChatService | None = None
        self.talk: TalkService | None = None
        self._talk_lock = asyncio.Lock()

    @property
    def device_registry(self) -> DeviceRegistry:
        """The state's paired devices."""
        return self.state.devices

    @property
    def device_tokens(self) -> DeviceTokens:
        """The state's device tokens."""
        return self.state.tokens

    @property
    def pairing_requests(self) -> PairingRequests:
        """The state's pending device pairing requests (:attr:`pairing` decides them)."""
        return self.state.pairing

    @property
    def node_surfaces(self) -> NodeSurfaces:
        """The state's node command surfaces (:attr:`nodes` serves them)."""
        return self.state.nodes

    @property
    def bootstrap_tokens(self) -> BootstrapTokens:
        """The state's setup-code bootstrap tokens."""
        return self.state.bootstrap

    @property
    def chat_sessions(self) -> ChatSessions:
        """The state's chat sessions index."""
        return self.state.sessions

    @property
    def db_path(self) -> Path:
        """The state's database file."""
        return self.state.db_path

    async def talk_service(self) -> TalkService:
        """The talk service, started on first use: reading ``talk.json`` and the speech
        providers (and loading their code) is left out of the gateway's start, which serves
        handshakes first."""
        if self.talk is None:
            async with self._talk_lock:
                if self.talk is None:
                    from gateway.talk.setup import start_talk

                    self.talk = await start_talk(self.config.state_dir, self.hub)
        return self.talk

    def health_snapshot(self) -> dict[str, Any]:
        """What ``health`` events carry (and ``hello-ok.snapshot.health``): the ``health``
        answer, as on the real gateway."""
        return health_report(self)

    def uptime_ms(self) -> int:
        """Milliseconds since start."""
        return int((time.monotonic() - self._started) * 1000)

    async def handle_request(
        self, peer: Peer, frame: dict[str, Any], *, may_nest: bool = True
    ) -> None:
        """Authorize, run and answer one request: exactly one response, whatever happens
        (see :func:`gateway.rpc.answer_request`)."""
        await answer_request(TABLE, self, peer, frame, may_nest=may_nest)

    def hello_payload(self, peer: Peer, auth: dict[str, Any]) -> dict[str, Any]:
        """The ``hello-ok`` payload for a freshly authenticated peer (from its model)."""
        return hello_ok(
            server=ServerInfo(version=__version__, boot_id=self.boot_id, conn_id=peer.conn_id),
            methods=TABLE.names(),
            events=EVENTS,
            capabilities=SERVER_CAPS,
            snapshot={
                "presence": self.hub.presence(),
                "health": self.health_snapshot(),
                "stateVersion": self.hub.state_version(),
                "uptimeMs": self.uptime_ms(),
                "authMode": self.config.auth_mode,
            },
            auth=auth,
            tick_interval_ms=self.config.tick_interval_ms,
        )


def family_services(app: GatewayApp) -> dict[str, object]:
    """``app`` as each method family's services, by family module: each entry is typed as
    that family's protocol, so mypy checks here that the app offers what every family
    uses (and a test that each entry is the app itself)."""
    system: SystemServices = app
    control_ui: ControlUiServices = app
    control_ui_lists: ControlUiListsServices = app
    nodes: NodeServices = app
    node_role: NodeRoleServices = app
    devices: DeviceServices = app
    chat: ChatServices = app
    sessions: SessionsServices = app
    subscriptions: SubscriptionsServices = app
    agent: AgentServices = app
    talk: TalkServices = app
    models: ModelsServices = app
    config: ConfigServices = app
    ops: OpsServices = app
    approvals: ApprovalsServices = app
    return {
        "gateway.methods.talk": talk,
        "gateway.methods.models": models,
        "gateway.methods.config": config,
        "gateway.methods.ops": ops,
        "gateway.methods.approvals": approvals,
        "gateway.methods.chat": chat,
        "gateway.methods.sessions": sessions,
        "gateway.methods.subscriptions": subscriptions,
        "gateway.methods.agent": agent,
        "gateway.methods.nodes": nodes,
        "gateway.methods.node_role": node_role,
        "gateway.methods.devices": devices,
        "gateway.methods.system": system,
        "gateway.methods.control_ui": control_ui,
        "gateway.methods.control_ui_lists": control_ui_lists,
    }
