"""The bundled gateway's persistent state (stdlib ``sqlite3``, one WAL database).

Open it with :class:`GatewayState`; read :mod:`gateway.state._db` for the durability rules
and :mod:`gateway.state.errors` for what can go wrong. All timestamps are milliseconds since
the epoch and are passed in by the caller (``now_ms``), so tests control time.
"""

from __future__ import annotations

from gateway.state.bootstrap import (
    BOOTSTRAP_TOKEN_TTL_MS,
    SETUP_COMPLETION_RETENTION_MS,
    BootstrapTokens,
    SetupProfile,
)
from gateway.state.devices import DeviceRegistry, role_owns_scope
from gateway.state.errors import (
    ScopeNotApprovedError,
    StateBusyError,
    StateCorruptError,
    StateError,
    StateVersionError,
    UnknownDeviceError,
    UnknownRequestError,
)
from gateway.state.meta import MetaStore
from gateway.state.node_records import NodePairRequest, NodeSurface
from gateway.state.nodes import NODE_PAIR_REQUEST_TTL_MS, NodeSurfaces
from gateway.state.pairing import PAIRING_REQUEST_TTL_MS, PairingRequests
from gateway.state.records import (
    ApprovalKind,
    BootstrapRecord,
    DeviceRecord,
    PairingDecision,
    PairingRequest,
    PendingOutcome,
    RoleRemoval,
    SetupAccess,
    TokenRecord,
)
from gateway.state.secret_files import SHARED_TOKEN_FILENAME, read_or_create_shared_token
from gateway.state.sessions import ChatSession, ChatSessions
from gateway.state.store import DB_FILENAME, GatewayState
from gateway.state.tokens import DeviceTokens

__all__ = [
    "BOOTSTRAP_TOKEN_TTL_MS",
    "DB_FILENAME",
    "NODE_PAIR_REQUEST_TTL_MS",
    "PAIRING_REQUEST_TTL_MS",
    "SETUP_COMPLETION_RETENTION_MS",
    "SHARED_TOKEN_FILENAME",
    "ApprovalKind",
    "BootstrapRecord",
    "BootstrapTokens",
    "ChatSession",
    "ChatSessions",
    "DeviceRecord",
    "DeviceRegistry",
    "DeviceTokens",
    "GatewayState",
    "MetaStore",
    "NodePairRequest",
    "NodeSurface",
    "NodeSurfaces",
    "PairingDecision",
    "PairingRequest",
    "PairingRequests",
    "PendingOutcome",
    "RoleRemoval",
    "ScopeNotApprovedError",
    "SetupAccess",
    "SetupProfile",
    "StateBusyError",
    "StateCorruptError",
    "StateError",
    "StateVersionError",
    "TokenRecord",
    "UnknownDeviceError",
    "UnknownRequestError",
    "read_or_create_shared_token",
    "role_owns_scope",
]
