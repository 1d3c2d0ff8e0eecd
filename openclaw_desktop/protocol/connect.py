"""The handshake: ``connect.challenge``, ``connect`` params and ``hello-ok``.

``ConnectParams`` and its parts are closed (exactly the fields the real gateway 2026.9.6
accepts) and say what its schema says, so the bundled gateway's ``connect`` params schema is
derived from them (:func:`~openclaw_desktop.protocol.methods.schema.params_schema`, in
``gateway.handshake.schema``). Two rules here are the model's own, not the schema's: the
device proof's key and signature length caps (:func:`_at_most`). ``HelloOk`` and its parts
are open: newer gateways add fields.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StrictInt

from openclaw_desktop.protocol.base import ClosedModel, OpenModel
from openclaw_desktop.protocol.enums import ClientId, ClientMode
from openclaw_desktop.protocol.methods.schema import RECORD, UNCHECKED, UNIQUE

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
    "ModelCatalogBySession",
    "ModelCatalogByShortId",
    "Policy",
    "ServerInfo",
    "SessionDefaults",
    "Snapshot",
    "WorkerRuns",
]

#: A string of at least one character (TypeBox ``NonEmptyString``).
NonEmptyText = Annotated[str, Field(min_length=1)]
#: JavaScript's ``Number.MAX_SAFE_INTEGER``.
_MAX_SAFE_INTEGER = 2**53 - 1


def _at_most(limit: int) -> Callable[[str], str]:
    """A length cap the model holds but the reference's params schema does not (its proof
    check refuses such a key or signature later), so it stays out of the derived schema."""

    def check(value: str) -> str:
        if len(value) > limit:
            raise ValueError(f"longer than {limit} characters")
        return value

    return check


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
    public_key: Annotated[str, AfterValidator(_at_most(1024))] = Field(min_length=1)
    signature: Annotated[str, AfterValidator(_at_most(256))] = Field(min_length=1)
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


class WorkerRuns(ClosedModel):
    """``connect.params.workerRuns``: what a node's worker runner declares."""

    bundle_hash: str = Field(min_length=64, max_length=64, pattern="^[a-f0-9]{64}$")
    openclaw_version: str = Field(min_length=1, max_length=128)
    protocol_features: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=128)]], UNIQUE
    ] = Field(max_length=64)
    bundle_prewarm: int | None = Field(default=None, ge=1, le=_MAX_SAFE_INTEGER)


class ModelCatalogBySession(ClosedModel):
    """``connect.params.modelCatalog`` naming an agent and/or a session."""

    agent_id: NonEmptyText | None = None
    session_key: NonEmptyText | None = None


class ModelCatalogByShortId(ClosedModel):
    """``connect.params.modelCatalog`` naming a catalog by its short id."""

    agent_id: NonEmptyText | None = None
    short_id: NonEmptyText
    slug_hint: NonEmptyText | None = None


class ConnectParams(ClosedModel):
    """``connect`` request params."""

    min_protocol: StrictInt = Field(ge=1)
    max_protocol: StrictInt = Field(ge=1)
    client: ClientInfo
    caps: list[NonEmptyText] | None = None
    commands: list[NonEmptyText] | None = None
    computer_use: Annotated[Any, UNCHECKED] = None
    worker_runs: WorkerRuns | None = None
    permissions: Annotated[dict[str, bool] | None, RECORD] = None
    path_env: str | None = None
    role: str | None = Field(default=None, min_length=1)
    scopes: list[NonEmptyText] | None = None
    model_catalog: ModelCatalogBySession | ModelCatalogByShortId | None = None
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
