"""The vocabulary of the connect decision: what it reads, what it asks the server to write,
and what it comes to.

:func:`gateway.handshake.decide.decide` is a sans-I/O coroutine (a generator). It reads the
gateway's state through a read-only :class:`StateView`, and every write is an effect it
yields to the server, which carries it out at once, in the order yielded, and sends back the
effect's result (the bound setup-code record, the pairing request, the issued token...),
since some writes' results feed the decision. The decision ends with :class:`Admitted` or a
:class:`~gateway.handshake.ConnectRejection`. ``Admitted.after_hello`` lists the writes made
only once hello-ok went out (last seen, token use, setup-code delivery).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from gateway.handshake.rejection import ConnectRejection
from gateway.state.records import (
    ApprovalKind,
    BootstrapRecord,
    DeviceRecord,
    PairingRequest,
    TokenRecord,
)
from openclaw_desktop.protocol import ClientInfo, EventName

__all__ = [
    "Admitted",
    "ApproveDevice",
    "Broadcast",
    "ConfirmSetupDelivery",
    "ConnectContext",
    "ConnectPolicy",
    "ConsumeSetupCode",
    "Credential",
    "Decision",
    "Described",
    "Effect",
    "IssueToken",
    "LimiterFailure",
    "LimiterReset",
    "RecordUse",
    "RedeemSetupCode",
    "RedeemSetupLeg",
    "RequestPairing",
    "ResolvePairing",
    "StateView",
]


@dataclass(frozen=True)
class ConnectContext:
    """What the server read from the connection before the decision.

    Attributes:
        address: The client's address (the one a trusted proxy vouches for, if forwarded).
        local: The client is this machine (loopback and not forwarded).
        origin: The ``Origin`` header, if any.
        host: The ``Host`` header, if any.
        nonce: The ``connect.challenge`` nonce the device proof must sign.
        now_ms: The time of the decision (wall clock, ms).
        tls: The gateway serves TLS (``wss://``).
    """

    address: str
    local: bool
    origin: str | None
    host: str | None
    nonce: str
    now_ms: int
    tls: bool = False


class ConnectPolicy(Protocol):
    """The settings the decision reads (:class:`gateway.config.GatewayConfig` has them)."""

    auth_mode: Any
    token: str | None
    password: str | None
    auto_approve_local: bool
    auth_rate_limit_loopback: bool


class StateView(Protocol):
    """The read-only lookups of the decision. Reads are live: a read after a yielded write
    sees that write."""

    @property
    def policy(self) -> ConnectPolicy:
        """The gateway's auth and pairing settings."""
        ...

    def retry_after_ms(self, address: str, now_ms: int) -> int | None:
        """The auth rate limiter: ms until ``address`` may try again, None when it may."""
        ...

    def device(self, device_id: str) -> DeviceRecord | None:
        """The paired device's record."""
        ...

    def token(self, device_id: str, role: str) -> TokenRecord | None:
        """The device's token record for ``role`` (revoked ones too)."""
        ...

    def verify_token(self, device_id: str, role: str, token: str) -> TokenRecord | None:
        """The record of the device's live token for ``role`` if ``token`` is it."""
        ...

    def setup_profile_name(self, record: BootstrapRecord) -> str:
        """The profile the setup code was minted with (``full``, ``voice-node``...)."""
        ...

    def pairing_request(self, request_id: str, now_ms: int) -> PairingRequest | None:
        """A pending pairing request, unless it expired."""
        ...

    def pairing_requests_for(self, device_id: str, now_ms: int) -> list[PairingRequest]:
        """The device's pending pairing requests, newest first."""
        ...


@dataclass(frozen=True)
class Credential:
    """How a connect authenticated."""

    method: str
    bootstrap: BootstrapRecord | None = None
    #: The device token the client authenticated with (handed back in hello-ok).
    presented: str | None = None
    #: When that token was issued or last rotated (``hello-ok.auth.issuedAtMs``).
    presented_issued_at_ms: int | None = None


@dataclass(frozen=True)
class Described:
    """What a device says it is, as pairing stores it (keyword arguments of
    ``PairingRequests.request`` and ``DeviceRegistry.approve``)."""

    role: str
    scopes: list[str]
    client_id: str
    client_mode: str
    display_name: str | None
    platform: str | None
    device_family: str | None
    remote_ip: str | None
    now_ms: int

    def as_kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments."""
        return {
            "role": self.role,
            "scopes": self.scopes,
            "client_id": self.client_id,
            "client_mode": self.client_mode,
            "display_name": self.display_name,
            "platform": self.platform,
            "device_family": self.device_family,
            "remote_ip": self.remote_ip,
            "now_ms": self.now_ms,
        }


# ---------------------------------------------------------------------------- effects


@dataclass(frozen=True)
class LimiterReset:
    """Forget the address's failed attempts. Result: None."""

    address: str


@dataclass(frozen=True)
class LimiterFailure:
    """Count one failed attempt of the address. Result: None."""

    address: str
    now_ms: int


@dataclass(frozen=True)
class RedeemSetupCode:
    """``BootstrapTokens.redeem``: bind a live setup code to the device (``admit`` and
    ``request`` are pure checks of the found record). Result: the bound
    :class:`BootstrapRecord`, or None when the code is refused."""

    token: str
    device_id: str
    public_key: str
    now_ms: int
    admit: Callable[[BootstrapRecord], bool]
    request: Callable[[BootstrapRecord], tuple[str, Sequence[str]]]


@dataclass(frozen=True)
class ApproveDevice:
    """``DeviceRegistry.approve``. Result: the :class:`DeviceRecord`."""

    device_id: str
    public_key: str
    role: str
    scopes: list[str]
    approved_via: ApprovalKind
    now_ms: int
    #: The device's metadata to store with the approval, if any.
    described: Described | None = None


@dataclass(frozen=True)
class RequestPairing:
    """``PairingRequests.request``: create or refresh the device's pending request.
    Result: the ``PendingOutcome``."""

    device_id: str
    public_key: str
    silent: bool
    described: Described


@dataclass(frozen=True)
class ResolvePairing:
    """Approve a request silently (``approved_via="silent"``). Result: the resolved
    :class:`PairingRequest`, or None if it was gone."""

    request_id: str
    device_id: str
    now_ms: int


@dataclass(frozen=True)
class Broadcast:
    """An event to every operator allowed to see it. Result: None."""

    event: EventName
    payload: dict[str, Any]


@dataclass(frozen=True)
class IssueToken:
    """A new device token for ``role`` (rotating the live one when ``rotate``). Result: the
    token (str)."""

    device_id: str
    role: str
    scopes: list[str]
    now_ms: int
    rotate: bool


@dataclass(frozen=True)
class RedeemSetupLeg:
    """``BootstrapTokens.redeem_leg``. Result: the roles and scopes redeemed so far."""

    record: BootstrapRecord
    role: str
    scopes: list[str]


@dataclass(frozen=True)
class ConsumeSetupCode:
    """The setup code is used up. Result: None."""

    setup_id: str
    now_ms: int


@dataclass(frozen=True)
class ConfirmSetupDelivery:
    """After hello-ok went out: ``setupStatus`` reports a completion. Result: None."""

    setup_id: str


@dataclass(frozen=True)
class RecordUse:
    """After hello-ok went out: the device's last seen (and its token's last use), at the
    time it is carried out. Result: None."""

    device_id: str
    role: str
    remote_ip: str | None
    platform: str | None
    token_used: bool


Effect = (
    LimiterReset
    | LimiterFailure
    | RedeemSetupCode
    | ApproveDevice
    | RequestPairing
    | ResolvePairing
    | Broadcast
    | IssueToken
    | RedeemSetupLeg
    | ConsumeSetupCode
    | ConfirmSetupDelivery
    | RecordUse
)


@dataclass(frozen=True)
class Admitted:
    """The connect is admitted: the server creates the peer and sends hello-ok.

    Attributes:
        role: ``operator`` or ``node``.
        scopes: The scopes the connection gets.
        client: The client as the connection is known (node-host metadata filled in, pinned
            fields in the paired spelling).
        device_id: The device, or None for a deviceless connect.
        auth_method: How it authenticated (``token``, ``device-token``...).
        hello_auth: ``hello-ok.auth``, with the tokens issued for it.
        after_hello: Writes to carry out once hello-ok was written, in order.
    """

    role: str
    scopes: list[str]
    client: ClientInfo
    device_id: str | None
    auth_method: str
    hello_auth: dict[str, Any]
    after_hello: tuple[Effect, ...] = field(default=())


#: The decision: yields effects, is sent their results, returns the outcome.
Decision = Generator[Effect, Any, Admitted | ConnectRejection]
