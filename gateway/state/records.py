"""Immutable records returned by the state store, with their wire (camelCase) projections.

Wire shapes follow the real gateway 2026.9.6: ``device.pair.list`` returns pending requests as
stored and paired devices with their tokens summarised (never the token itself);
``device.token.*`` and ``device.pair.setupStatus`` results are built from the token and
bootstrap records. Fields that are None are left out of the wire dicts, as the real gateway
leaves out ``undefined`` fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from gateway.state._codec import wire_dict

__all__ = [
    "ApprovalKind",
    "BootstrapRecord",
    "DeviceRecord",
    "PairingDecision",
    "PairingRequest",
    "PendingOutcome",
    "RoleRemoval",
    "SetupAccess",
    "TokenRecord",
]

#: How a device's latest approval was granted (``approvedVia``).
ApprovalKind = Literal[
    "owner", "silent", "bootstrap", "trusted-cidr", "trusted-proxy", "ssh-verified"
]
#: An operator's answer to a pending device pairing request.
PairingDecision = Literal["approved", "rejected"]
#: The operator access a setup code hands off (``device.pair.setupCode`` ``access``).
SetupAccess = Literal["full", "limited", "node"]


class _Pending(Protocol):
    """What every pending-request record offers."""

    @property
    def request_id(self) -> str: ...

    def to_wire(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=_Pending)


@dataclass(frozen=True, slots=True)
class TokenRecord:
    """Metadata of one device token (one per device and role); never the token itself."""

    device_id: str
    role: str
    scopes: tuple[str, ...]
    created_at_ms: int
    rotated_at_ms: int | None
    revoked_at_ms: int | None
    last_used_at_ms: int | None

    @property
    def active(self) -> bool:
        """False once the token was revoked."""
        return self.revoked_at_ms is None

    def to_wire(self) -> dict[str, Any]:
        """The summary shown in ``device.pair.list`` ``paired[].tokens[]``."""
        return wire_dict(
            [
                ("role", self.role),
                ("scopes", list(self.scopes)),
                ("createdAtMs", self.created_at_ms),
                ("rotatedAtMs", self.rotated_at_ms),
                ("revokedAtMs", self.revoked_at_ms),
                ("lastUsedAtMs", self.last_used_at_ms),
            ]
        )


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """A paired device: its key, the roles and scopes approved for it, and client metadata."""

    device_id: str
    public_key: str
    roles: tuple[str, ...]
    scopes: tuple[str, ...]
    approved_via: ApprovalKind
    created_at_ms: int
    approved_at_ms: int
    display_name: str | None = None
    operator_label: str | None = None
    platform: str | None = None
    device_family: str | None = None
    client_id: str | None = None
    client_mode: str | None = None
    remote_ip: str | None = None
    last_seen_at_ms: int | None = None
    last_seen_reason: str | None = None

    @property
    def role(self) -> str | None:
        """The first approved role (the real record's legacy ``role`` field)."""
        return self.roles[0] if self.roles else None

    @property
    def label(self) -> str | None:
        """The operator's label if set, else the name the client reported."""
        return self.operator_label or self.display_name

    def to_wire(
        self, *, tokens: Sequence[TokenRecord] = (), connected: bool | None = None
    ) -> dict[str, Any]:
        """A ``device.pair.list`` ``paired[]`` entry (also ``device.pair.approve``'s ``device``).

        Args:
            tokens: This device's token records; summarised under ``tokens`` when any.
            connected: Whether a client of this device is connected (list only).
        """
        summaries = [token.to_wire() for token in sorted(tokens, key=lambda t: t.role)]
        return wire_dict(
            [
                ("deviceId", self.device_id),
                ("publicKey", self.public_key),
                ("displayName", self.display_name),
                ("operatorLabel", self.operator_label),
                ("platform", self.platform),
                ("deviceFamily", self.device_family),
                ("clientId", self.client_id),
                ("clientMode", self.client_mode),
                ("role", self.role),
                ("roles", list(self.roles)),
                ("scopes", list(self.scopes)),
                ("remoteIp", self.remote_ip),
                ("approvedVia", self.approved_via),
                ("createdAtMs", self.created_at_ms),
                ("approvedAtMs", self.approved_at_ms),
                ("lastSeenAtMs", self.last_seen_at_ms),
                ("lastSeenReason", self.last_seen_reason),
                ("connected", connected),
                ("tokens", summaries or None),
            ]
        )


@dataclass(frozen=True, slots=True)
class PairingRequest:
    """A pending device pairing request awaiting an operator (or expiring).

    ``ts_ms`` is when the request was created; a retry with a covered role and scope set keeps
    the request id and ``ts_ms`` and moves ``expires_at_ms`` to five minutes after the retry.
    """

    request_id: str
    device_id: str
    public_key: str
    role: str
    roles: tuple[str, ...]
    scopes: tuple[str, ...]
    silent: bool
    is_repair: bool
    ts_ms: int
    expires_at_ms: int
    refreshed_at_ms: int | None = None
    display_name: str | None = None
    platform: str | None = None
    device_family: str | None = None
    client_id: str | None = None
    client_mode: str | None = None
    remote_ip: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """A ``device.pair.list`` ``pending[]`` entry and the ``device.pair.requested`` payload."""
        return wire_dict(
            [
                ("requestId", self.request_id),
                ("deviceId", self.device_id),
                ("publicKey", self.public_key),
                ("displayName", self.display_name),
                ("platform", self.platform),
                ("deviceFamily", self.device_family),
                ("clientId", self.client_id),
                ("clientMode", self.client_mode),
                ("role", self.role),
                ("roles", list(self.roles)),
                ("scopes", list(self.scopes)),
                ("remoteIp", self.remote_ip),
                ("silent", self.silent),
                ("isRepair", self.is_repair),
                ("ts", self.ts_ms),
            ]
        )


@dataclass(frozen=True, slots=True)
class PendingOutcome(Generic[R]):
    """What a pairing ``request()`` did.

    Attributes:
        request: The pending request now in force.
        created: True if this call created it (broadcast ``*.pair.requested`` only then);
            False if an existing request was reused.
        superseded: Ids of pending requests this call replaced; announce each as resolved
            with ``decision: "rejected"`` (the real gateway does).
    """

    request: R
    created: bool
    superseded: tuple[str, ...] = ()

    @property
    def request_id(self) -> str:
        """The id of :attr:`request` (what ``NOT_PAIRED`` details carry)."""
        return self.request.request_id

    def to_wire(self) -> dict[str, Any]:
        """:attr:`request` on the wire (the ``*.pair.requested`` payload)."""
        return self.request.to_wire()


@dataclass(frozen=True, slots=True)
class RoleRemoval:
    """Result of removing one role from a paired device.

    Attributes:
        device_id: The device.
        role: The role removed.
        removed_device: True if it was the last role, so the whole device record went away.
    """

    device_id: str
    role: str
    removed_device: bool


@dataclass(frozen=True, slots=True)
class BootstrapRecord:
    """A setup-code bootstrap token's state; the token itself is not kept.

    ``setup_id`` is the non-secret handle the presenting client polls with
    ``device.pair.setupStatus``. The token binds to the first device (id and key) that
    redeems it and is consumed once that device's hand-off tokens were issued.
    """

    setup_id: str
    access: SetupAccess
    issued_at_ms: int
    expires_at_ms: int
    device_id: str | None = None
    public_key: str | None = None
    bound_at_ms: int | None = None
    last_used_at_ms: int | None = None
    consumed_at_ms: int | None = None
    device_name: str | None = None
    delivery_confirmed: bool = False

    @property
    def consumed(self) -> bool:
        """True once the hand-off completed; the token can no longer be redeemed."""
        return self.consumed_at_ms is not None

    def expired(self, now_ms: int) -> bool:
        """True once the token can no longer be redeemed for lack of time."""
        return now_ms > self.expires_at_ms

    def to_wire(self) -> dict[str, Any]:
        """The ``device.pair.setupStatus`` result: ``{}`` until the setup completed, then
        ``{"completion": …}`` (or ``{"deliveryUncertain": …}`` until delivery is confirmed)."""
        if self.consumed_at_ms is None or self.device_id is None:
            return {}
        payload = wire_dict(
            [
                ("setupId", self.setup_id),
                ("deviceId", self.device_id),
                ("deviceName", self.device_name or None),
                ("access", self.access),
                ("ts", self.consumed_at_ms),
            ]
        )
        return {"completion" if self.delivery_confirmed else "deliveryUncertain": payload}
