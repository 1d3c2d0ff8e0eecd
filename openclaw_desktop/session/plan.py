"""What to send in ``connect``: the plan, the credential choice and the signed params."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from openclaw_desktop.identity.credentials import StoredDeviceToken
from openclaw_desktop.identity.payload import build_payload_v3, signature_token
from openclaw_desktop.protocol import (
    MIN_CLIENT_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    ClientInfo,
    ConnectAuth,
    ConnectChallenge,
    ConnectParams,
    DeviceProof,
    Role,
)

__all__ = [
    "AuthSelection",
    "AuthSource",
    "ConnectPlan",
    "Credentials",
    "Signer",
    "build_connect_params",
    "select_auth",
]

AuthSource = Literal[
    "device-token", "device-token-retry", "shared-token", "bootstrap-token", "password", "none"
]


class Signer(Protocol):
    """A device identity that can sign connect payloads."""

    @property
    def device_id(self) -> str: ...

    @property
    def public_key(self) -> str: ...

    def sign(self, payload: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Credentials:
    """The credentials known for one gateway and role."""

    shared_token: str | None = None
    password: str | None = None
    bootstrap_token: str | None = None
    stored_device_token: StoredDeviceToken | None = None
    #: The shared token was given explicitly for this connection (``--token``): it goes
    #: ahead of the stored device token.
    shared_token_first: bool = False

    def __repr__(self) -> str:
        have = [
            name
            for name in ("shared_token", "password", "bootstrap_token", "stored_device_token")
            if getattr(self, name) is not None
        ]
        return f"Credentials(<redacted: {', '.join(have) or 'none'}>)"


@dataclass(frozen=True, slots=True)
class AuthSelection:
    """The ``auth`` object to send, where it came from and the scopes to request."""

    auth: ConnectAuth | None
    source: AuthSource
    scopes: tuple[str, ...]


def select_auth(
    creds: Credentials,
    *,
    role: Role,
    requested_scopes: tuple[str, ...],
    device_token_retry: bool = False,
) -> AuthSelection:
    """Choose the credential for this connect.

    Order: the stored device token for the role (as ``auth.deviceToken``), then the shared
    token, then the bootstrap token; the password is always sent when set. An explicit
    shared token (``creds.shared_token_first``) goes ahead of the stored device token, as in
    the reference client, which makes the stored-token retry possible: with
    ``device_token_retry`` (the one retry allowed after ``AUTH_TOKEN_MISMATCH`` on a trusted
    endpoint) the shared token goes in ``auth.token`` and the stored device token in
    ``auth.deviceToken``.

    With a stored device token the stored scope set is requested (an operator token cannot
    widen its own scopes); nodes request no scopes.
    """
    stored = creds.stored_device_token
    # An empty password is no password (as for the tokens below): never send ``""``.
    password = creds.password or None
    scopes = () if role is Role.NODE else requested_scopes
    token: str | None = None
    device_token: str | None = None
    bootstrap: str | None = None
    source: AuthSource
    if device_token_retry and stored is not None and creds.shared_token:
        token, device_token, source = creds.shared_token, stored.token, "device-token-retry"
        scopes = _stored_scopes(stored, role, scopes)
    elif creds.shared_token_first and creds.shared_token:
        token, source = creds.shared_token, "shared-token"
    elif stored is not None:
        # In auth.deviceToken, where the gateway checks it as a device token and answers a
        # revoked one with AUTH_DEVICE_TOKEN_MISMATCH (in auth.token it would be taken for a
        # wrong shared token: AUTH_TOKEN_MISMATCH, and the dead token would never be cleared).
        device_token, source = stored.token, "device-token"
        scopes = _stored_scopes(stored, role, scopes)
    elif creds.shared_token:
        token, source = creds.shared_token, "shared-token"
    elif creds.bootstrap_token:
        bootstrap, source = creds.bootstrap_token, "bootstrap-token"
    elif password:
        source = "password"
    else:
        source = "none"
    if token is None and device_token is None and bootstrap is None and password is None:
        return AuthSelection(None, source, scopes)
    auth = ConnectAuth(
        token=token,
        device_token=device_token,
        bootstrap_token=bootstrap,
        password=password,
    )
    return AuthSelection(auth, source, scopes)


def _stored_scopes(
    stored: StoredDeviceToken, role: Role, requested: tuple[str, ...]
) -> tuple[str, ...]:
    if role is Role.NODE:
        return ()
    return tuple(stored.scopes) if stored.scopes else requested


@dataclass(frozen=True, slots=True)
class ConnectPlan:
    """Everything the client declares in ``connect`` except the challenge-bound proof."""

    client: ClientInfo
    role: Role
    auth: AuthSelection
    signer: Signer | None = None
    caps: tuple[str, ...] = ()
    commands: tuple[str, ...] | None = None
    permissions: Mapping[str, bool] | None = None
    #: A node's Computer Use descriptor (``computerUse``), sent with ``computer.act``.
    computer_use: Mapping[str, Any] | None = None
    path_env: str | None = None
    min_protocol: int = MIN_CLIENT_PROTOCOL_VERSION
    max_protocol: int = PROTOCOL_VERSION
    locale: str | None = None
    user_agent: str | None = None


def build_connect_params(plan: ConnectPlan, challenge: ConnectChallenge) -> dict[str, Any]:
    """The ``connect`` params for this challenge, signed with the v3 payload."""
    auth = plan.auth.auth
    device: DeviceProof | None = None
    if plan.signer is not None:
        signed_at = challenge.ts
        payload = build_payload_v3(
            device_id=plan.signer.device_id,
            client_id=plan.client.id.value,
            client_mode=plan.client.mode.value,
            role=plan.role.value,
            scopes=plan.auth.scopes,
            signed_at_ms=signed_at,
            token=signature_token(auth.to_wire() if auth else None),
            nonce=challenge.nonce,
            platform=plan.client.platform,
            device_family=plan.client.device_family,
        )
        device = DeviceProof(
            id=plan.signer.device_id,
            public_key=plan.signer.public_key,
            signature=plan.signer.sign(payload),
            signed_at=signed_at,
            nonce=challenge.nonce,
        )
    params = ConnectParams(
        min_protocol=plan.min_protocol,
        max_protocol=plan.max_protocol,
        client=plan.client,
        caps=list(plan.caps),
        commands=list(plan.commands) if plan.commands is not None else None,
        permissions=dict(plan.permissions) if plan.permissions is not None else None,
        computer_use=dict(plan.computer_use) if plan.computer_use is not None else None,
        path_env=plan.path_env,
        role=plan.role.value,
        scopes=list(plan.auth.scopes),
        device=device,
        auth=auth,
        locale=plan.locale,
        user_agent=plan.user_agent,
    )
    return params.to_wire()
