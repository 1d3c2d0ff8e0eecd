"""The handshake: ``connect.challenge``, ``connect`` params and ``hello-ok``.

``ConnectParams`` and its parts are closed (exactly the fields the real gateway 2026.9.6
accepts). ``HelloOk`` and its parts are open: newer gateways add fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictInt

from openclaw_desktop.protocol.base import ClosedModel, OpenModel
from openclaw_desktop.protocol.enums import ClientId, ClientMode

__all__ = [
    "ClientInfo",
    "ConnectAuth",
    "ConnectChallenge",
    "ConnectParams",
    "DeviceProof",
    "DeviceTokenGrant",
    "Features",
    "HelloAuth",
    "HelloOk",
    "Policy",
    "ServerInfo",
    "SessionDefaults",
    "Snapshot",
]

NonEmpty = Field(min_length=1)


class ConnectChallenge(OpenModel):
    """``connect.challenge`` payload. ``ts`` must be a non-negative JSON integer."""

    nonce: str = Field(min_length=1)
    ts: StrictInt = Field(ge=0)
    capabilities: list[str] = Field(default_factory=list)


class ClientInfo(ClosedModel):
    """``connect.params.client``."""

    id: ClientId
    display_name: str | None = Field(default=None, min_length=1)
    version: str = Field(min_length=1)
    build_id: str | None = Field(default=None, min_length=1, max_length=96)
    platform: str = Field(min_length=1)
    device_family: str | None = Field(default=None, min_length=1)
    model_identifier: str | None = Field(default=None, min_length=1)
    time_zone: str | None = Field(default=None, min_length=1, max_length=64)
    mode: ClientMode
    instance_id: str | None = Field(default=None, min_length=1)


class DeviceProof(ClosedModel):
    """``connect.params.device``: the signed device proof."""

    id: str = Field(min_length=1)
    public_key: str = Field(min_length=1, max_length=1024)
    signature: str = Field(min_length=1, max_length=256)
    signed_at: StrictInt = Field(ge=0)
    nonce: str = Field(min_length=1)


class ConnectAuth(ClosedModel):
    """``connect.params.auth``."""

    token: str | None = None
    bootstrap_token: str | None = None
    device_token: str | None = None
    password: str | None = None
    approval_runtime_token: str | None = None
    agent_runtime_identity_token: str | None = None

    def __repr__(self) -> str:
        present = [name for name, value in self.__dict__.items() if value is not None]
        return f"ConnectAuth(<redacted: {', '.join(present) or 'none'}>)"

    __str__ = __repr__


class ConnectParams(ClosedModel):
    """``connect`` request params."""

    min_protocol: StrictInt = Field(ge=1)
    max_protocol: StrictInt = Field(ge=1)
    client: ClientInfo
    caps: list[str] | None = None
    commands: list[str] | None = None
    computer_use: Any = None
    worker_runs: Any = None
    permissions: dict[str, bool] | None = None
    path_env: str | None = None
    role: str | None = Field(default=None, min_length=1)
    scopes: list[str] | None = None
    model_catalog: dict[str, Any] | None = None
    device: DeviceProof | None = None
    auth: ConnectAuth | None = None
    locale: str | None = None
    user_agent: str | None = None


class ServerInfo(OpenModel):
    """``hello-ok.server``."""

    version: str
    conn_id: str
    build_id: str | None = None
    boot_id: str | None = None


class Features(OpenModel):
    """``hello-ok.features``: what the gateway advertises."""

    methods: list[str] = Field(default_factory=list)
    events: list[str] = Field(default_factory=list)
    capabilities: list[str] = Field(default_factory=list)


class SessionDefaults(OpenModel):
    """``hello-ok.snapshot.sessionDefaults``."""

    default_agent_id: str | None = None
    main_key: str | None = None
    main_session_key: str | None = None
    scope: str | None = None


class Snapshot(OpenModel):
    """``hello-ok.snapshot`` (partial; everything else is kept as extra fields)."""

    presence: list[dict[str, Any]] = Field(default_factory=list)
    health: Any = None
    state_version: dict[str, int] = Field(default_factory=dict)
    uptime_ms: int | None = None
    session_defaults: SessionDefaults | None = None
    auth_mode: str | None = None


class DeviceTokenGrant(OpenModel):
    """One of ``hello-ok.auth.deviceTokens`` (bootstrap hand-off tokens)."""

    device_token: str
    role: str
    scopes: list[str] = Field(default_factory=list)
    issued_at_ms: int | None = None

    def __repr__(self) -> str:
        return f"DeviceTokenGrant(role={self.role!r}, scopes={self.scopes!r}, token=<redacted>)"


class HelloAuth(OpenModel):
    """``hello-ok.auth``: the live role and scopes of this socket, maybe a device token."""

    role: str
    scopes: list[str] = Field(default_factory=list)
    method: str | None = None
    device_token: str | None = None
    issued_at_ms: int | None = None
    device_tokens: list[DeviceTokenGrant] = Field(default_factory=list)

    def __repr__(self) -> str:
        token = "<redacted>" if self.device_token else None
        return f"HelloAuth(role={self.role!r}, scopes={self.scopes!r}, device_token={token})"


class Policy(OpenModel):
    """``hello-ok.policy``: limits the client must respect."""

    max_payload: int = 25 * 1024 * 1024
    max_buffered_bytes: int = 50 * 1024 * 1024
    tick_interval_ms: int = Field(default=30_000, ge=1)
    attachments: dict[str, int] | None = None


class HelloOk(OpenModel):
    """The ``hello-ok`` payload of a successful ``connect``."""

    type: Literal["hello-ok"]
    protocol: int
    server: ServerInfo
    features: Features = Field(default_factory=Features)
    snapshot: Snapshot = Field(default_factory=Snapshot)
    auth: HelloAuth
    policy: Policy = Field(default_factory=Policy)
