"""Connection options and the status snapshot a connection reports."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from openclaw_desktop.errors import ConfigError, OpenClawError, PairingRequired
from openclaw_desktop.identity.credentials import CredentialStore
from openclaw_desktop.protocol import (
    DEFAULT_GATEWAY_PORT,
    MIN_CLIENT_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    ClientInfo,
    HelloOk,
    Role,
)
from openclaw_desktop.session.failures import ErrorCategory
from openclaw_desktop.session.plan import Signer
from openclaw_desktop.transport.retry import RetryPolicy
from openclaw_desktop.trust import TrustCallback, cleartext_allowed, is_loopback_host

__all__ = ["ConnectionOptions", "ConnectionState", "ConnectionStatus", "Endpoint"]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A parsed gateway URL."""

    url: str
    scheme: str
    host: str
    port: int
    path: str

    @classmethod
    def parse(cls, url: str) -> Endpoint:
        """Parse and check a ``ws://`` / ``wss://`` URL.

        Raises:
            ConfigError: not a WebSocket URL, or cleartext ``ws://`` to a host that is not
                loopback, private LAN or ``.local``.
        """
        try:
            parts = urlsplit(url.strip())
            hostname = parts.hostname
            port = parts.port or DEFAULT_GATEWAY_PORT
        except ValueError as exc:
            raise ConfigError(f"invalid gateway URL {url!r}: {exc}") from None
        if parts.scheme not in ("ws", "wss") or not hostname:
            raise ConfigError(f"gateway URL must be ws://host:port or wss://host:port, got {url!r}")
        if hostname.startswith("[") or (":" not in hostname and "[" in parts.netloc):
            raise ConfigError(f"invalid host in gateway URL {url!r}")
        host = hostname
        if parts.scheme == "ws" and not cleartext_allowed(host):
            raise ConfigError(
                f"refusing cleartext ws:// to {host}: only loopback, private LAN and .local "
                "hosts may use ws://; use wss:// (TLS) for this gateway"
            )
        netloc = f"[{host}]" if ":" in host else host
        path = parts.path or ""
        return cls(f"{parts.scheme}://{netloc}:{port}{path}", parts.scheme, host, port, path)

    @property
    def tls(self) -> bool:
        """Whether this endpoint uses TLS."""
        return self.scheme == "wss"

    @property
    def display(self) -> str:
        """``host:port`` for messages."""
        netloc = f"[{self.host}]" if ":" in self.host else self.host
        return f"{netloc}:{self.port}"

    @property
    def loopback(self) -> bool:
        """Whether the host is this machine."""
        return is_loopback_host(self.host)


@dataclass(slots=True)
class ConnectionOptions:
    """Everything a :class:`~openclaw_desktop.transport.GatewayConnection` needs.

    Explicit credentials (``shared_token``, ``password``, ``bootstrap_token``,
    ``tls_fingerprint``) come from the command line or settings; stored ones (device tokens,
    pins) come from ``credentials``.

    Auth order: the stored device token for the role, then the shared token, then the
    bootstrap token (the password is always sent). With ``shared_token_first`` (the user
    typed the token for this connection, e.g. ``--token``) the shared token goes ahead of the
    stored device token, as in the reference client; if the gateway refuses it with
    ``AUTH_TOKEN_MISMATCH`` / ``canRetryWithDeviceToken`` and the endpoint is trusted
    (``ws://`` to loopback/LAN, or ``wss://`` with a pin in force), one retry carries the
    stored device token as well.
    """

    url: str
    role: Role
    client: ClientInfo
    signer: Signer | None = None
    credentials: CredentialStore | None = None
    scopes: tuple[str, ...] = ()
    caps: tuple[str, ...] = ()
    commands: tuple[str, ...] | None = None
    permissions: Mapping[str, bool] | None = None
    #: A node's Computer Use descriptor (``connect.computerUse``), None when it offers none.
    computer_use: Mapping[str, Any] | None = None
    path_env: str | None = None
    shared_token: str | None = None
    #: ``shared_token`` was given explicitly for this connection: send it first.
    shared_token_first: bool = False
    password: str | None = None
    bootstrap_token: str | None = None
    tls_fingerprint: str | None = None
    tls_hint: str | None = None
    trust_callback: TrustCallback | None = None
    min_protocol: int = MIN_CLIENT_PROTOCOL_VERSION
    max_protocol: int = PROTOCOL_VERSION
    locale: str | None = None
    user_agent: str | None = None
    reconnect: bool = True
    #: Keep retrying every few seconds while a pairing request waits (instead of pausing).
    wait_for_pairing: bool = False
    #: Log a new pairing request (with the approve command) as a WARNING; callers that show
    #: it themselves (the CLI node's banner) turn this off and it is logged at INFO.
    announce_pairing: bool = True
    request_timeout_s: float = 30.0
    challenge_timeout_s: float = 15.0
    connect_timeout_s: float = 15.0
    open_timeout_s: float = 10.0
    #: Inbound frame cap (bytes): bigger frames close the connection (1009).
    max_inbound_bytes: int = 64 * 1024 * 1024
    retry: RetryPolicy = field(default_factory=RetryPolicy)


class ConnectionState(StrEnum):
    """What a connection is doing, as shown to the user."""

    IDLE = "idle"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    RECONNECTING = "reconnecting"
    AWAITING_APPROVAL = "awaiting-approval"
    PAUSED = "paused"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class ConnectionStatus:
    """An honest, immutable snapshot of a connection for status displays.

    Attributes:
        state: the current state.
        attempt: failed attempts since the last success.
        retry_in_s: seconds until the next attempt, while reconnecting.
        category: why the last attempt failed.
        error: the last failure.
        hello: the ``hello-ok`` of the live session, when connected.
        retry_at: when the next attempt starts (a :func:`time.monotonic` time), while
            reconnecting or polling for approval: displays count down to it.
    """

    state: ConnectionState
    attempt: int = 0
    retry_in_s: float | None = None
    category: ErrorCategory | None = None
    error: OpenClawError | None = None
    hello: HelloOk | None = None
    retry_at: float | None = None

    @property
    def pairing(self) -> PairingRequired | None:
        """The pending pairing request, if that is what we wait for."""
        return self.error if isinstance(self.error, PairingRequired) else None
