"""Admission of one ``connect``: validation, device proof, credentials, pairing gate, hello.

The checks run in the real gateway's order so the same bad input gets the same answer:
closed schema, protocol range, role, device proof, credentials, then device pairing.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import CloseCode
from websockets.server import ServerProtocol

from gateway import handshake as hs
from gateway.core import GatewayCore
from gateway.hub import now_ms
from gateway.nodes.policy import node_host_platform_metadata
from gateway.peer import Peer
from gateway.scopes import scope_satisfied
from gateway.state import BootstrapRecord, DeviceRecord, PairingRequest
from openclaw_desktop.protocol import ClientInfo, ConnectParams

__all__ = ["GatewayServerConnection", "admit"]

log = logging.getLogger("gateway.connect")

#: Operator scopes a setup code may carry, as the real gateway's
#: ``BOOTSTRAP_HANDOFF_OPERATOR_SCOPES`` (``src/shared/device-bootstrap-profile.ts``): the
#: limited profile, and what a phone's hand-off operator token gets with limited access
#: (observed in ``hello-ok.auth.deviceTokens`` of 2026.9.6; the docs omit operator.questions).
#: Never operator.pairing.
BOOTSTRAP_LIMITED_OPERATOR_SCOPES = (
    "operator.approvals",
    "operator.questions",
    "operator.read",
    "operator.talk.secrets",
    "operator.write",
)
#: Full access adds operator.admin (``MOBILE_FULL_ACCESS_OPERATOR_SCOPES``).
BOOTSTRAP_FULL_OPERATOR_SCOPES = ("operator.admin", *BOOTSTRAP_LIMITED_OPERATOR_SCOPES)
#: A voice-node code's operator scopes (``VOICE_NODE_PAIRING_SETUP_BOOTSTRAP_PROFILE``).
BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES = ("operator.read", "operator.talk")

_ANDROID_PLATFORM = re.compile(r"android(?:\s|$)")
_IOS_PLATFORM = re.compile(r"(?:ios|ipados)(?:\s|$)")
_IOS_FAMILY = re.compile(r"(?:iphone|ipad|ios)")
_ESP32_PLATFORM = re.compile(r"esp32(?:\s|$)")


@dataclass(frozen=True)
class _BootstrapProfile:
    """The roles and operator scopes a setup code lets its device ask for."""

    roles: tuple[str, ...]
    scopes: tuple[str, ...]
    #: ``full``, ``limited``, ``node`` or ``voice-node`` (full downgraded is ``limited``).
    name: str = "limited"

    def allows(self, role: str, scopes: Sequence[str]) -> bool:
        """``bootstrapProfileAllowsRequest``: the role is in the profile and its scopes are
        covered (with the operator implications: admin covers every operator scope)."""
        return role in self.roles and _token_covers(role, scopes, self.scopes)

    def bounded(self, role: str, scopes: Sequence[str]) -> list[str]:
        """``resolveBootstrapProfileScopesForRole``: the requested operator scopes that are
        in the profile's list (none for other roles), sorted."""
        if role != "operator":
            return []
        return sorted({s.strip() for s in scopes} & set(self.scopes))

    def covered_by(self, roles: Iterable[str], scopes: Sequence[str]) -> bool:
        """``bootstrapProfileSatisfiesProfile``: redeemed ``roles`` and ``scopes`` cover
        every role of the profile, and its operator scopes (with the implications)."""
        redeemed = set(roles)
        for role in self.roles:
            if role not in redeemed:
                return False
            if role == "operator" and not _token_covers(role, self.scopes, scopes):
                return False
        return True

    def hands_off_to(self, params: ConnectParams, role: str) -> bool:
        """``isSetupCodeHandoffBootstrapClient`` for a node connect with no scopes in node
        mode: a full or limited code only to the official Android/iOS app (id, platform and
        device family must agree), a node code only to ``node-host``, a voice-node code
        only to ``node-host`` on an ESP32. Everyone else goes through normal pairing."""
        client = params.client
        if role != "node" or params.scopes or client.mode.value != "node":
            return False
        platform = _metadata(client.platform)
        family = _metadata(client.device_family)
        client_id = client.id.value
        if self.name in ("full", "limited"):
            if client_id == "openclaw-android":
                return bool(_ANDROID_PLATFORM.match(platform)) and family == "android"
            if client_id == "openclaw-ios":
                return bool(_IOS_PLATFORM.match(platform) and _IOS_FAMILY.fullmatch(family))
            return False
        if self.name == "node":
            return client_id == "node-host"
        if self.name == "voice-node":
            esp32 = bool(_ESP32_PLATFORM.match(platform)) and family == "esp32"
            return client_id == "node-host" and esp32
        return False


def _metadata(value: str | None) -> str:
    """``normalizeDeviceMetadataForAuth``: trimmed, ASCII letters lowercased."""
    text = (value or "").strip()
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in text)


def _bootstrap_profile(
    core: GatewayCore, record: BootstrapRecord, local: bool, *, profile: str | None = None
) -> _BootstrapProfile:
    """The profile of a setup code as presented on this connection.

    ``profile`` is the code's profile name (``core.state.bootstrap.profile_of(record)``;
    ``record.access`` when omitted). ``node`` codes carry the node role only, ``voice-node``
    codes node plus operator.read/operator.talk. Full access needs TLS or this machine: a
    full code presented over plaintext from another host gets the limited profile, as the
    docs say ("plaintext LAN ``ws://`` setup automatically uses the same limited profile";
    the real gateway already downgrades such a code when it mints it).
    """
    name = record.access if profile is None else profile
    if name == "node":
        return _BootstrapProfile(("node",), (), "node")
    if name == "voice-node":
        return _BootstrapProfile(("node", "operator"), BOOTSTRAP_VOICE_NODE_OPERATOR_SCOPES, name)
    if name == "full" and (local or core.config.tls):
        return _BootstrapProfile(("node", "operator"), BOOTSTRAP_FULL_OPERATOR_SCOPES, "full")
    return _BootstrapProfile(("node", "operator"), BOOTSTRAP_LIMITED_OPERATOR_SCOPES, "limited")


def _code_profile(core: GatewayCore, record: BootstrapRecord, local: bool) -> _BootstrapProfile:
    return _bootstrap_profile(core, record, local, profile=core.state.bootstrap.profile_of(record))


@dataclass(frozen=True)
class _Auth:
    method: str
    token_scopes: list[str] | None = None
    bootstrap: BootstrapRecord | None = None
    #: The device token the client authenticated with (handed back in hello-ok).
    presented: str | None = None
    #: When that token was issued or last rotated (``hello-ok.auth.issuedAtMs``).
    presented_issued_at_ms: int | None = None


class _GatewayProtocol(ServerProtocol):
    """Closes an oversized frame with 1009 and no reason, as the real gateway's ``ws`` layer
    does (websockets would put ``"frame with N bytes exceeds limit of M bytes"`` there)."""

    def fail(self, code: CloseCode | int, reason: str = "") -> None:
        super().fail(code, "" if code == CloseCode.MESSAGE_TOO_BIG else reason)


class GatewayServerConnection(ServerConnection):
    """The server's connection class (``serve(create_connection=...)``): see
    :class:`_GatewayProtocol`."""

    def __init__(self, protocol: ServerProtocol, *args: Any, **kwargs: Any) -> None:
        if type(protocol) is ServerProtocol:
            protocol.__class__ = _GatewayProtocol
        super().__init__(protocol, *args, **kwargs)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


def _secret_equal(given: str | None, expected: str | None) -> bool:
    if given is None or expected is None:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def _shared_secret_ok(core: GatewayCore, params: ConnectParams) -> bool:
    cfg, auth = core.config, params.auth
    if cfg.auth_mode == "none":
        return True
    if cfg.auth_mode == "token":
        return _secret_equal(auth.token if auth else None, cfg.token)
    return _secret_equal(auth.password if auth else None, cfg.password)


def _token_covers(role: str, requested: Sequence[str], granted: Sequence[str]) -> bool:
    """Whether a device token's scopes allow the requested ones (``roleScopesAllow``):
    operator scopes with their implications (admin covers all, write covers read and talk),
    other roles' scopes only as ``<role>.*`` and listed."""
    for raw in requested:
        scope = raw.strip()
        if not scope:
            continue
        if role == "operator":
            if not scope_satisfied(scope, granted):
                return False
        elif not (scope.startswith(f"{role}.") and scope in granted):
            return False
    return True


def _credential_failure(
    core: GatewayCore, params: ConnectParams, local: bool
) -> hs.ConnectRejection:
    auth = params.auth
    if core.config.auth_mode == "password":
        if auth is None or not auth.password:
            return hs.password_missing(params, is_local_client=local)
        return hs.password_mismatch(params, is_local_client=local)
    if auth is None or not (auth.token or auth.password):
        return hs.token_missing(params, is_local_client=local)
    return hs.token_mismatch(params, is_local_client=local)


def _authenticate(
    core: GatewayCore,
    params: ConnectParams,
    device: hs.VerifiedDevice,
    role: str,
    address: str,
    local: bool,
) -> _Auth:
    """Shared secret, then setup-code bootstrap token, then the device token."""
    now = now_ms()
    limiter = core.auth_limiter
    limited = not local or core.config.auth_rate_limit_loopback
    retry_after = limiter.retry_after_ms(address, now) if limited else None
    if retry_after is not None:
        raise hs.rate_limited(retry_after, params)
    auth = params.auth
    if _shared_secret_ok(core, params):
        limiter.reset(address)
        return _Auth(core.config.auth_mode)
    if auth is not None and auth.bootstrap_token:
        # As the real gateway: a role or scopes outside the code's profile is refused like
        # a bad code (AUTH_BOOTSTRAP_TOKEN_INVALID), before the code is bound to the device.
        # While the bound device awaits approval it must ask for the same thing again.
        asked = list(params.scopes or [])
        record = core.state.bootstrap.redeem(
            auth.bootstrap_token,
            device.device_id,
            device.public_key_b64url,
            now,
            admit=lambda found: _code_profile(core, found, local).allows(role, asked),
            request=lambda found: (role, _code_profile(core, found, local).bounded(role, asked)),
        )
        if record is not None:
            limiter.reset(address)
            return _Auth("bootstrap-token", bootstrap=record)
        if limited:
            limiter.record_failure(address, now)
        raise hs.bootstrap_token_invalid(params)
    candidate = (auth.device_token or auth.token) if auth else None
    if candidate:
        # last_used_at_ms is written after hello-ok went out (see admit)
        token = core.state.tokens.verify(device.device_id, role, candidate)
        if token is not None and not _token_covers(role, params.scopes or [], token.scopes):
            # As the real gateway: a device token never widens itself (AUTH_SCOPE_MISMATCH,
            # whether it came in auth.token or auth.deviceToken).
            if limited:
                limiter.record_failure(address, now)
            raise hs.scope_mismatch(params)
        if token is not None:
            limiter.reset(address)
            return _Auth(
                "device-token",
                token_scopes=list(token.scopes),
                presented=candidate,
                presented_issued_at_ms=token.rotated_at_ms or token.created_at_ms,
            )
        if auth is not None and auth.device_token:
            if limited:
                limiter.record_failure(address, now)
            raise hs.device_token_mismatch(params)
    if limited:
        limiter.record_failure(address, now)
    raise _credential_failure(core, params, local)


def _record_use(
    core: GatewayCore,
    device_id: str,
    role: str,
    authed: _Auth,
    local: bool,
    address: str,
    platform: str | None = None,
) -> Callable[[], None]:
    def record() -> None:
        now = now_ms()
        core.state.devices.touch(device_id, now, None if local else address, platform=platform)
        if authed.method == "device-token":
            core.state.tokens.mark_used(device_id, role, now)

    return record


async def admit(
    core: GatewayCore,
    ws: ServerConnection,
    request_id: str,
    raw_params: Any,
    *,
    nonce: str,
    address: str,
) -> Peer:
    """Admit one client or raise :class:`~gateway.handshake.ConnectRejection`."""
    params = hs.validate_connect_params(raw_params)
    headers = ws.request.headers if ws.request is not None else None
    proxied = headers is not None and any(
        h in headers for h in ("Forwarded", "X-Forwarded-For", "X-Real-IP")
    )
    local = _is_loopback(address) and not proxied
    admission = hs.admit_connect(
        params,
        origin=headers.get("Origin") if headers is not None else None,
        request_host=headers.get("Host") if headers is not None else None,
        is_local_client=local,
    )
    role = str(admission.role)
    requested = list(params.scopes or []) if role == "operator" else []
    device: hs.VerifiedDevice | None = None
    handoff = False
    refresh_platform: str | None = None
    if params.device is None:
        if admission.is_control_ui:
            raise hs.ConnectRejection.control_ui_device_identity_required()
        # Shared-secret guesses without a device are rate limited like any other.
        limited = not local or core.config.auth_rate_limit_loopback
        retry_after = core.auth_limiter.retry_after_ms(address, now_ms()) if limited else None
        if retry_after is not None:
            raise hs.rate_limited(retry_after, params)
        shared_ok = _shared_secret_ok(core, params)
        if not (role == "operator" and shared_ok and local):
            auth = params.auth
            if not shared_ok and auth is not None and (auth.token or auth.password):
                if limited:
                    core.auth_limiter.record_failure(address, now_ms())
                raise _credential_failure(core, params, local)
            raise hs.device_identity_required()
        core.auth_limiter.reset(address)
        authed = _Auth(core.config.auth_mode)
        scopes = requested
        client = _node_host_client(params.client)
    else:
        device = hs.verify_device_proof(params, nonce=nonce, now_ms=now_ms())
        authed = _authenticate(core, params, device, role, address, local)
        # After the proof (which signs the client as sent), as on the real gateway.
        params = params.model_copy(update={"client": _node_host_client(params.client)})
        gate = _pairing_gate(core, params, device, role, requested, authed, address, local)
        scopes, handoff, client = gate.scopes, gate.handoff, gate.client
        refresh_platform = gate.refresh_platform
    peer = Peer(
        ws=ws,
        conn_id=str(uuid.uuid4()),
        role=role,
        scopes=scopes,
        client=client.to_wire(),
        device_id=device.device_id if device else None,
        remote_ip=address,
        permissions=dict(params.permissions or {}),
        caps=list(params.caps or []),
        connected_at_ms=now_ms(),
        auth_method=authed.method,
    )
    hello_auth = _issue_tokens(core, device, role, scopes, authed, local, handoff=handoff)
    peer.start()
    peer.respond(request_id, True, core.hello_payload(peer, hello_auth))
    if authed.bootstrap is not None:
        # setupStatus reports a completion (not deliveryUncertain) once hello-ok went out.
        setup_id = authed.bootstrap.setup_id
        peer.after_sent(lambda: core.state.bootstrap.confirm_delivery(setup_id))
    if device is not None:  # last seen and token use: database writes, after hello-ok
        peer.after_sent(
            _record_use(core, device.device_id, role, authed, local, address, refresh_platform)
        )
    core.hub.add(peer)
    if role == "node":
        core.node_connected(peer, list(params.commands or []), list(params.caps or []))
    log.info(
        "%s %s connected from %s (%s)",
        role,
        (peer.device_id or peer.conn_id)[:12],
        address,
        authed.method,
    )
    return peer


@dataclass(frozen=True)
class _Pin:
    """``resolvePinnedClientMetadata``: a paired device's platform and device family checked
    against what its connect claims.

    Attributes:
        mismatch: The claimed platform or device family differs from the paired one (the
            connect needs re-approval: ``metadata-upgrade``).
        platform: The platform the connection is known by when there is no mismatch (the
            paired spelling), or None to keep the claimed one.
        device_family: Likewise for the device family.
        refresh_platform: A newer OS version of the same native app to store, or None.
    """

    mismatch: bool
    platform: str | None = None
    device_family: str | None = None
    refresh_platform: str | None = None


#: ``resolveGatewayClientPlatformIdentity`` on normalized platforms: legacy runtime names.
_RUNTIME_PLATFORMS = {
    "darwin": ("macos", "mac"),
    "win32": ("windows", "windows"),
    "linux": ("linux", "linux"),
}
_MACOS_VERSION = re.compile(r"macos \d+(?:\.\d+){0,2}")
_WATCHOS_VERSION = re.compile(r"watchos \d+(?:\.\d+){0,2}")
#: Clients whose ``ui`` mode is an official app's window (``isNativeAppUiClient``).
_NATIVE_APP_IDS = frozenset(
    {"openclaw-macos", "openclaw-linux", "openclaw-ios", "openclaw-android"}
)
_SHARED_SECRET_METHODS = frozenset({"none", "token", "password"})


def _native_app_platform(client_id: str, platform: str) -> str | None:
    """The OS an official app's platform label names, if it is that app's own OS."""
    if client_id == "openclaw-ios" and _IOS_PLATFORM.match(platform):
        return "ios-family"
    if client_id == "openclaw-android" and _ANDROID_PLATFORM.match(platform):
        return "android"
    if client_id == "openclaw-watchos" and _WATCHOS_VERSION.fullmatch(platform):
        return "watchos"
    if client_id == "openclaw-macos" and _MACOS_VERSION.fullmatch(platform):
        return "macos"
    return None


def _pin_metadata(
    client_id: str,
    mode: str,
    claimed_platform: str | None,
    claimed_family: str | None,
    paired_platform: str | None,
    paired_family: str | None,
) -> _Pin:
    """Compare a connect's platform and device family with the paired device's (both
    trimmed and ASCII-lowercased). Only these two fields count: client id, mode and display
    name may change freely. A field the paired record lacks is not pinned.

    Tolerated platform changes, as on the real gateway: ``node-host`` (node mode) naming the
    same OS by its runtime name (``darwin`` for ``macos``...), or a Mac app's ``macos N``
    label; a legacy runtime name on record answered by its modern name and family; an
    official app reporting another version of its own OS (which is then stored).
    """
    claimed, claimed_fam = _metadata(claimed_platform), _metadata(claimed_family)
    paired, paired_fam = _metadata(paired_platform), _metadata(paired_family)
    has_platform, has_family = paired != "", paired_fam != ""
    runtime, runtime_family = _RUNTIME_PLATFORMS.get(paired, (paired, ""))
    node_host = client_id == "node-host" and mode == "node"
    claimed_runtime = _RUNTIME_PLATFORMS.get(claimed, (claimed, ""))[0]
    runtime_pin = (node_host and has_platform and claimed != "" and claimed_runtime == runtime) or (
        not has_family
        and runtime != paired
        and claimed == runtime
        and claimed_fam == runtime_family
    )
    mac_app_pin = (
        node_host and claimed in ("darwin", "macos") and bool(_MACOS_VERSION.fullmatch(paired))
    )
    claimed_native = _native_app_platform(client_id, claimed)
    refresh = (
        has_platform
        and claimed != ""
        and claimed != paired
        and (
            (
                claimed_native is not None
                and claimed_native == _native_app_platform(client_id, paired)
            )
            or (
                client_id == "openclaw-macos"
                and claimed_native == "macos"
                and paired in ("darwin", "macos")
            )
        )
    )
    platform_mismatch = (
        has_platform and claimed != paired and not (runtime_pin or mac_app_pin or refresh)
    )
    family_mismatch = has_family and claimed_fam != paired_fam
    pinned: str | None = None
    if has_platform:
        if runtime_pin:
            pinned = runtime
        elif claimed == paired or mac_app_pin:
            pinned = paired_platform
        elif refresh:
            pinned = claimed_platform
    return _Pin(
        mismatch=platform_mismatch or family_mismatch,
        platform=pinned,
        device_family=paired_family if has_family else None,
        refresh_platform=claimed_platform if refresh else None,
    )


def _node_host_client(client: ClientInfo) -> ClientInfo:
    """``normalizeNodeHostCompatibilityMetadata``: a ``node-host`` in node mode that names a
    desktop OS by a legacy or bare platform gets the modern platform and its device family
    (``linux`` -> ``linux``/``Linux``, ``darwin`` -> ``macos``/``Mac``), as on the real
    gateway, which then stores and pins those."""
    if client.id.value != "node-host" or client.mode.value != "node":
        return client
    platform, family = node_host_platform_metadata(client.platform, client.device_family)
    if (platform, family) == (client.platform, client.device_family):
        return client
    return client.model_copy(update={"platform": platform, "device_family": family})


@dataclass(frozen=True)
class _Admission:
    """What the pairing gate lets a device connection have."""

    scopes: list[str]
    #: The connect is the setup-code hand-off (see :func:`_issue_tokens`).
    handoff: bool
    #: The client as the connection is known (node-host metadata filled in, pinned fields
    #: in the paired spelling).
    client: ClientInfo
    #: A newer OS version of an official app to store on the paired record, or None.
    refresh_platform: str | None = None


@dataclass
class _Gate:
    """The pairing gate of one device connect (``authorizeGatewayConnectDevice``)."""

    core: GatewayCore
    params: ConnectParams
    device: hs.VerifiedDevice
    role: str
    requested: list[str]
    authed: _Auth
    address: str
    local: bool
    client: ClientInfo
    handoff: bool

    def admit(self) -> _Admission:
        record = self.core.state.devices.get(self.device.device_id)
        if record is None:
            self.require("not-paired", None)
            return _Admission(self.requested, self.handoff, self.client)
        client = self.client
        pin = _pin_metadata(
            client.id.value,
            client.mode.value,
            client.platform,
            client.device_family,
            record.platform,
            record.device_family,
        )
        if pin.mismatch:
            self.require("metadata-upgrade", record)
        else:
            update: dict[str, Any] = {}
            if pin.platform:
                update["platform"] = pin.platform
            if pin.device_family:
                update["device_family"] = pin.device_family
            client = client.model_copy(update=update) if update else client
        # Checked against the record as it was, as on the real gateway (an approval above
        # does not skip them; each asks again with its own reason).
        if self.role not in record.roles:
            self.require("role-upgrade", record)
        if self.requested and not (
            record.scopes and _token_covers(self.role, self.requested, record.scopes)
        ):
            self.require("scope-upgrade", record)
        return _Admission(self.requested, self.handoff, client, pin.refresh_platform)

    def _silent(self, reason: str, existing: DeviceRecord | None) -> bool:
        """``resolveLocalPairingApproval``: whether this machine's own connect is approved
        without asking. Never for a paired device's non-operator connect (a node role, a
        node's metadata); a changed platform or family only for an official app's window;
        otherwise with local auto-approval on, and a scope upgrade only on shared-secret
        (or no) auth, not on a device token or setup code."""
        if existing is not None and self.role != "operator":
            return self._own_desktop_node(reason, existing)
        if not self.local:
            return False
        if reason == "metadata-upgrade":
            return self.client.mode.value == "ui" and self.client.id.value in _NATIVE_APP_IDS
        if not self.core.config.auto_approve_local:
            return False
        if reason == "scope-upgrade":
            return self.authed.method in _SHARED_SECRET_METHODS
        return True

    def _own_desktop_node(self, reason: str, existing: DeviceRecord) -> bool:
        """Deliberate difference from the real gateway, which asks the owner here.

        The desktop app connects its window as an operator and then this computer as a node
        with the same device identity. On the real gateway (2026.9.6, observed) that node
        connect is a ``role-upgrade`` that needs approval even on loopback with local
        auto-approval on; the app's own gateway approves it silently instead, so the app
        keeps working, but only for exactly that: this machine, local auto-approval on, a
        shared-secret connect, an operator record this gateway approved silently itself, and
        the desktop node's client (``openclaw-linux``/``openclaw-macos``, or ``node-host``
        on Windows) in node mode. Every other node upgrade asks, as on the real gateway.
        """
        client = self.client
        desktop_node = client.mode.value == "node" and (
            client.id.value in ("openclaw-linux", "openclaw-macos")
            or (client.id.value == "node-host" and _metadata(client.platform) == "windows")
        )
        return (
            reason == "role-upgrade"
            and desktop_node
            and self.local
            and self.core.config.auto_approve_local
            and self.authed.method in _SHARED_SECRET_METHODS
            and existing.approved_via == "silent"
        )

    def _caller_covers(self, request: PairingRequest, existing: DeviceRecord | None) -> bool:
        """A silent approval grants no operator scope beyond what this connect asked for
        and the device already had (``approveDevicePairing`` with ``callerScopes``)."""
        caller = [*self.requested, *(existing.scopes if existing else ())]
        wanted = [s for s in request.scopes if s.startswith("operator.")]
        return _token_covers("operator", wanted, caller)

    def require(self, reason: str, existing: DeviceRecord | None) -> None:
        """``requirePairing``: approve this connect now when allowed, else raise
        ``NOT_PAIRED`` with a pending request. Returns only if the device, as now stored,
        allows the connect."""
        core, device, client, now = self.core, self.device, self.client, now_ms()
        # What the device says it is, as pairing stores it (the real gateway records no
        # address for a local device).
        described: dict[str, Any] = {
            "role": self.role,
            "scopes": self.requested,
            "client_id": client.id.value,
            "client_mode": client.mode.value,
            "display_name": client.display_name,
            "platform": client.platform,
            "device_family": client.device_family,
            "remote_ip": None if self.local else self.address,
            "now_ms": now,
        }
        if self.handoff and reason in ("not-paired", "scope-upgrade"):
            core.state.devices.approve(
                device.device_id, device.public_key_b64url, approved_via="bootstrap", **described
            )
            return
        silent = self._silent(reason, existing)
        outcome = core.state.pairing.request(
            device.device_id, device.public_key_b64url, silent=silent, **described
        )
        request = outcome.request
        for old in outcome.superseded:
            core.hub.broadcast(
                "device.pair.resolved",
                {"requestId": old, "deviceId": device.device_id, "decision": "rejected", "ts": now},
            )
        inline = request.silent
        if inline:
            approved = None
            if self._caller_covers(request, existing):
                approved = core.state.pairing.resolve(
                    request.request_id, "approved", now, approved_via="silent"
                )
            if approved is not None:
                log.info("device pairing auto-approved device=%s", device.device_id[:12])
                core.hub.broadcast(
                    "device.pair.resolved",
                    {
                        "requestId": request.request_id,
                        "deviceId": device.device_id,
                        "decision": "approved",
                        "ts": now_ms(),
                    },
                )
        elif outcome.created:
            core.hub.broadcast("device.pair.requested", request.to_wire())
        live = core.state.devices.get(device.device_id)
        if live is not None and self._allows(live):
            return
        pending = core.state.pairing.get(request.request_id, now)
        if pending is None:
            others = [
                p
                for p in core.state.pairing.for_device(device.device_id, now)
                if p.public_key == device.public_key_b64url
            ]
            pending = others[0] if others else None
        if inline and pending is not None and pending.request_id == request.request_id:
            core.hub.broadcast("device.pair.requested", pending.to_wire())
        raise hs.pairing_required(
            request_id=pending.request_id if pending is not None else None,
            device_id=device.device_id,
            role=self.role,
            # The scopes as sent, for nodes too (the real gateway echoes them); a node is
            # still granted none.
            scopes=list(self.params.scopes or []),
            reason=reason,
            approved_roles=list(existing.roles) if existing else [],
            # sorted, as the real gateway lists a device's scopes here
            approved_scopes=sorted(set(existing.scopes)) if existing else [],
            # As the real gateway: a new device's setup-code node connect is told to wait
            # and retry while its approval is pending.
            wait_then_retry=self.authed.method == "bootstrap-token"
            and reason == "not-paired"
            and self.role == "node"
            and not self.params.scopes,
        )

    def _allows(self, live: DeviceRecord) -> bool:
        """The stored device now allows this connect: same metadata, the role, the scopes."""
        client = self.client
        pin = _pin_metadata(
            client.id.value,
            client.mode.value,
            client.platform,
            client.device_family,
            live.platform,
            live.device_family,
        )
        return (
            not pin.mismatch
            and self.role in live.roles
            and _token_covers(self.role, self.requested, live.scopes)
        )


def _pairing_gate(
    core: GatewayCore,
    params: ConnectParams,
    device: hs.VerifiedDevice,
    role: str,
    requested: list[str],
    authed: _Auth,
    address: str,
    local: bool,
) -> _Admission:
    """The scopes this device gets, approving it when allowed or raising NOT_PAIRED.

    As on the real gateway, whatever the credential (a device token too): a new device
    needs approval (``not-paired``); a paired one whose platform or device family changed
    needs it again (``metadata-upgrade``, see :func:`_pin_metadata`), as do a new role
    (``role-upgrade``) and scopes beyond the approved ones (``scope-upgrade``). What this
    machine's own connects get without asking is in :meth:`_Gate._silent`.

    A setup code approves its device silently only for the phone hand-off
    (:meth:`_BootstrapProfile.hands_off_to`: the official app or node-host the code's
    profile is meant for, connecting as a node); any other client redeeming a code goes
    through normal pairing, as on the real gateway.
    """
    record = core.state.devices.get(device.device_id)
    bootstrap = authed.bootstrap
    # Not for a role upgrade of a paired device (the real gateway asks for approval then).
    handoff = (
        authed.method == "bootstrap-token"
        and bootstrap is not None
        and (record is None or role in record.roles)
        and _code_profile(core, bootstrap, local).hands_off_to(params, role)
    )
    gate = _Gate(
        core, params, device, role, requested, authed, address, local, params.client, handoff
    )
    return gate.admit()


def _legacy_token_scopes(
    core: GatewayCore, device_id: str, role: str, scopes: list[str]
) -> list[str]:
    """Scopes for the token that replaces one whose plaintext is not stored (written before
    schema 3): the old token's scopes while they are still approved and cover this
    connection, so the one-time replacement does not narrow the device's token."""
    existing = core.state.tokens.get(device_id, role)
    record = core.state.devices.get(device_id)
    if existing is None or not existing.active or record is None:
        return scopes
    if not set(existing.scopes) <= set(record.scopes):
        return scopes
    if not _token_covers(role, scopes, existing.scopes):
        return scopes
    return list(existing.scopes)


def _ensure_token(
    core: GatewayCore, device_id: str, role: str, scopes: list[str], now: int
) -> tuple[str, list[str], int]:
    """The real gateway's ``ensureDeviceToken``: the device's existing token for ``role`` when
    it is still within the device's approved scopes and covers ``scopes`` (so a narrower
    connect never narrows it), else a new token with ``scopes``.

    Returns:
        The token, its scopes and when it was issued (``issuedAtMs``).
    """
    current = core.state.tokens.reusable(device_id, role)
    record = core.state.devices.get(device_id)
    if current is not None and record is not None:
        token, existing = current
        if _token_covers(role, existing.scopes, record.scopes) and _token_covers(
            role, scopes, existing.scopes
        ):
            return token, list(existing.scopes), existing.rotated_at_ms or existing.created_at_ms
        wanted = scopes
    else:
        wanted = _legacy_token_scopes(core, device_id, role, scopes)
    return core.state.tokens.issue(device_id, role, wanted, now), wanted, now


def _issue_tokens(
    core: GatewayCore,
    device: hs.VerifiedDevice | None,
    role: str,
    scopes: list[str],
    authed: _Auth,
    local: bool,
    *,
    handoff: bool = False,
) -> dict[str, Any]:
    """``hello-ok.auth``: the device token (the presented one, the device's existing one, or
    a new one) and, for the setup-code hand-off, the bounded tokens of the code's other
    roles (``deviceTokens``).

    A setup code is used up by the hand-off, or once the connects that redeemed it cover
    every role of its profile (the real gateway's ``redeemDeviceBootstrapTokenProfile``):
    an operator-only connect leaves a node + operator code redeemable by its device.
    """
    auth: dict[str, Any] = {"method": authed.method, "role": role, "scopes": scopes}
    if device is None:
        return auth
    now = now_ms()
    if authed.method == "device-token" and authed.presented:
        auth["deviceToken"] = authed.presented
        if authed.presented_issued_at_ms is not None:
            auth["issuedAtMs"] = authed.presented_issued_at_ms
        return auth
    auth["deviceToken"], _granted, auth["issuedAtMs"] = _ensure_token(
        core, device.device_id, role, scopes, now
    )
    bootstrap = authed.bootstrap
    if authed.method != "bootstrap-token" or bootstrap is None:
        return auth
    profile = _code_profile(core, bootstrap, local)
    if not handoff:
        roles, redeemed = core.state.bootstrap.redeem_leg(
            bootstrap, role, profile.bounded(role, scopes)
        )
        if profile.covered_by(roles, sorted(redeemed)):
            core.state.bootstrap.consume(bootstrap.setup_id, now)
        return auth
    handoff_tokens: list[dict[str, Any]] = []
    for extra in profile.roles:
        if extra == role:
            continue
        extra_scopes = list(profile.scopes) if extra == "operator" else []
        core.state.devices.approve(
            device.device_id,
            device.public_key_b64url,
            role=extra,
            scopes=extra_scopes,
            approved_via="bootstrap",
            now_ms=now,
        )
        token, granted, issued_at = _ensure_token(core, device.device_id, extra, extra_scopes, now)
        handoff_tokens.append(
            {"deviceToken": token, "role": extra, "scopes": granted, "issuedAtMs": issued_at}
        )
    if handoff_tokens:
        auth["deviceTokens"] = handoff_tokens
    core.state.bootstrap.consume(bootstrap.setup_id, now)
    return auth
