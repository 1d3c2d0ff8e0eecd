"""``device.pair.*`` and ``device.token.*``: the device pairing layer."""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterable
from typing import Any, Protocol
from urllib.parse import urlsplit

from gateway.config import GatewayConfig
from gateway.device_pairing import DevicePairing
from gateway.errors import MethodError, invalid_request
from gateway.hub import Hub, now_ms
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import ADMIN, PAIRING, missing_requested_scope, normalize_operator_scopes
from gateway.setup_issuer import SetupCodeIssuer
from gateway.state import (
    BootstrapTokens,
    DeviceRegistry,
    DeviceTokens,
    NodePairRequest,
    NodeSurfaces,
    PairingRequest,
    PairingRequests,
    ScopeNotApprovedError,
    UnknownDeviceError,
)
from gateway.state.bootstrap import SetupProfile
from openclaw_desktop.protocol import ErrorCode, Method, error_shape
from openclaw_desktop.protocol.methods.devices import (
    DevicePairApproveParams,
    DevicePairListParams,
    DevicePairRejectParams,
    DevicePairRemoveParams,
    DevicePairRenameParams,
    DevicePairSetupCodeParams,
    DevicePairSetupStatusParams,
    DeviceTokenRevokeParams,
    DeviceTokenRotateParams,
)

__all__ = ["DeviceServices", "normalize_public_url", "table"]

table = MethodTable()
"""The methods this module declares."""

log = logging.getLogger("gateway.devices")


class DeviceServices(Protocol):
    """What the ``device.*`` methods use of the gateway."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def hub(self) -> Hub: ...
    @property
    def pairing(self) -> DevicePairing: ...
    @property
    def setup_codes(self) -> SetupCodeIssuer: ...
    @property
    def device_registry(self) -> DeviceRegistry:
        """The stored paired devices (their roles, scopes and labels)."""

    @property
    def device_tokens(self) -> DeviceTokens:
        """The stored device tokens per device and role."""

    @property
    def pairing_requests(self) -> PairingRequests:
        """The stored pending device pairing requests (decided through ``pairing``)."""

    @property
    def node_surfaces(self) -> NodeSurfaces:
        """The stored node command surfaces, read for their pending requests."""

    @property
    def bootstrap_tokens(self) -> BootstrapTokens:
        """The stored setup-code bootstrap tokens, read for a setup's status."""


def _is_admin(peer: Peer) -> bool:
    return "operator.admin" in peer.scopes


def _denies_token_management(peer: Peer, device_id: str, role: str) -> bool:
    """The real gateway's rules without operator.admin: a device-token session manages only
    its own device, and only operator tokens."""
    if _is_admin(peer):
        return False
    caller = peer.managing_device_id
    return (caller is not None and caller != device_id.strip()) or role.strip() != "operator"


def _exceeds_caller(peer: Peer, role: str, scopes: Iterable[str]) -> bool:
    """An operator token with a scope the caller does not hold (with the operator
    implications) may not be rotated or revoked by it, as on the real gateway."""
    if role.strip() != "operator":
        return False
    return missing_requested_scope(normalize_operator_scopes(list(scopes)), peer.scopes) is not None


@table.method(Method.DEVICE_PAIR_LIST, scope=PAIRING, params=DevicePairListParams)
async def pair_list(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.list``: pending requests and paired devices."""
    now = now_ms()
    # As the real gateway: a device-token session without admin sees only its own device.
    only = None if _is_admin(peer) else peer.managing_device_id
    requests = gw.pairing_requests.list_pending(now)
    pending = [r.to_wire() for r in requests if only is None or r.device_id.strip() == only]
    surfaces = {r.node_id: r for r in gw.node_surfaces.list_pending(now)}
    connected = {p.device_id for p in gw.hub.peers.values() if p.device_id}
    paired = []
    for device in gw.device_registry.list():
        if only is not None and device.device_id.strip() != only:
            continue
        entry = device.to_wire(
            tokens=gw.device_tokens.list(device.device_id),
            connected=device.device_id in connected,
        )
        surface = surfaces.get(device.device_id)
        if surface is not None:
            entry["pendingNodeSurface"] = _pending_node_surface(surface)
        paired.append(entry)
    return {"pending": pending, "paired": paired}


def _pending_node_surface(request: NodePairRequest) -> dict[str, Any]:
    """``paired[].pendingNodeSurface``: the node's declared surface awaiting approval, as the
    real gateway keeps it on the device record (``revision`` changes with each new request)."""
    wire: dict[str, Any] = {"requestId": request.request_id, "revision": request.request_id}
    for key, value in (
        ("displayName", request.display_name),
        ("platform", request.platform),
        ("version", request.version),
        ("deviceFamily", request.device_family),
        ("caps", list(request.caps)),
        ("commands", list(request.commands)),
        ("permissions", dict(request.permissions) if request.permissions else None),
        ("remoteIp", request.remote_ip),
        ("silent", True if request.silent else None),
        ("ts", request.ts_ms),
    ):
        if value is not None:
            wire[key] = value
    return wire


@table.method(Method.DEVICE_PAIR_APPROVE, scope=PAIRING, params=DevicePairApproveParams)
async def pair_approve(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.approve {requestId}`` (a node role needs operator.admin too)."""
    request_id: str = params["requestId"]
    request = gw.pairing_requests.get(request_id, now_ms())
    if not _is_admin(peer):
        # As the real gateway: without operator.admin only operator-role requests, and
        # a device-token session only for its own device.
        caller = peer.managing_device_id
        if (
            request is None
            or (caller is not None and request.device_id != caller)
            or any(role != "operator" for role in (request.role, *request.roles))
        ):
            raise invalid_request("device pairing approval denied")
    if request is None:
        raise invalid_request("unknown requestId")
    denial = _approval_exceeds_caller(gw, peer, request)
    if denial is not None:
        log.warning("device pairing approval denied request=%s reason=%s", request_id, denial)
        raise invalid_request(denial)
    device = gw.pairing.approve(request_id, approved_via="owner")
    return {"requestId": request_id, "device": device}


def _approval_exceeds_caller(gw: DeviceServices, peer: Peer, request: PairingRequest) -> str | None:
    """Why approving ``request`` would grant more than the approver holds, worded as the real
    gateway (``invalid scope for requested roles: X`` or ``missing scope: X``), or None.

    As the real ``approveDevicePairing`` with ``callerScopes``: every scope must belong to a
    requested role, and for the operator role the approver must hold (with the operator
    implications) both the scopes asked for and those the device's operator token will have
    after the approval (its current token's, when the request adds nothing to the approved
    ones).
    """
    roles = [r.strip() for r in (request.role, *request.roles) if r.strip()]
    for scope in normalize_operator_scopes(request.scopes):
        if not any(scope.startswith(f"{role}.") for role in roles):
            return f"invalid scope for requested roles: {scope}"
    if "operator" not in roles:
        return None
    asked = _operator_scopes(request.scopes)
    device = gw.device_registry.get(request.device_id)
    token = gw.device_tokens.get(request.device_id, "operator")
    approved = _operator_scopes(device.scopes) if device is not None else []
    if asked:
        added = [s for s in asked if s not in approved] if token and approved else asked
        held = list(token.scopes) if token else []
        after = _operator_scopes(held if not added and token else [*held, *added])
    else:
        after = _operator_scopes(token.scopes if token else [*approved, *asked])
    if not after:
        return None
    missing = missing_requested_scope(list(dict.fromkeys([*asked, *after])), peer.scopes)
    return None if missing is None else f"missing scope: {missing}"


def _operator_scopes(scopes: Iterable[str]) -> list[str]:
    """``resolveRoleTokenScopes`` for the operator role: normalized, ``operator.*`` only."""
    return [s for s in normalize_operator_scopes(list(scopes)) if s.startswith("operator.")]


def _denies_pairing_management(gw: DeviceServices, peer: Peer, device_id: str) -> bool:
    """``device.pair.remove``/``rename`` as the real gateway: without operator.admin a
    device-token session manages only its own device, and only one that holds no role but
    operator (roles or tokens)."""
    caller = peer.managing_device_id
    if caller is None or _is_admin(peer):
        return False
    target = device_id.strip()
    if caller != target:
        return True
    device = gw.device_registry.get(target)
    if device is None:
        return False
    roles = {*device.roles, *(t.role for t in gw.device_tokens.list(target))}
    return any(role.strip() and role.strip() != "operator" for role in roles)


@table.method(Method.DEVICE_PAIR_REJECT, scope=PAIRING, params=DevicePairRejectParams)
async def pair_reject(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.reject {requestId}``."""
    request_id: str = params["requestId"]
    request = gw.pairing_requests.get(request_id, now_ms())
    caller = peer.managing_device_id
    if (
        caller is not None
        and not _is_admin(peer)
        and (request is None or request.device_id != caller)
    ):
        raise invalid_request("device pairing rejection denied")
    if request is None:
        raise invalid_request("unknown requestId")
    gw.pairing.reject(request_id)
    return {"requestId": request_id, "deviceId": request.device_id}


@table.method(Method.DEVICE_PAIR_REMOVE, scope=PAIRING, params=DevicePairRemoveParams)
async def pair_remove(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.remove {deviceId}``: forget the device and its tokens."""
    device_id: str = params["deviceId"]
    if _denies_pairing_management(gw, peer, device_id):
        log.warning("device pairing removal denied device=%s", device_id[:12])
        raise invalid_request("device pairing removal denied")
    if not gw.device_registry.remove(device_id):
        raise invalid_request("unknown deviceId")
    # As the real gateway: its sessions are closed (4001 "device removed") after this answer.
    gw.pairing.disconnect(device_id, "device removed", code=4001)
    return {"deviceId": device_id, "removed": True}


@table.method(Method.DEVICE_PAIR_RENAME, scope=PAIRING, params=DevicePairRenameParams)
async def pair_rename(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.rename {deviceId, label}``."""
    device_id: str = params["deviceId"]
    label = params["label"].strip()
    if not label:
        raise invalid_request("label required")
    if _denies_pairing_management(gw, peer, device_id):
        log.warning("device pairing rename denied device=%s", device_id[:12])
        raise invalid_request("device pairing rename denied")
    if gw.device_registry.get(device_id) is None:
        raise invalid_request("unknown deviceId")
    gw.device_registry.rename(device_id, label)
    return {"deviceId": device_id, "label": label}


@table.method(Method.DEVICE_TOKEN_ROTATE, scope=PAIRING, params=DeviceTokenRotateParams)
async def token_rotate(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.token.rotate {deviceId, role, scopes?}``: a new token replaces the old."""
    device_id: str = params["deviceId"]
    role: str = params["role"]
    scopes = params.get("scopes")
    if _denies_token_management(peer, device_id, role):
        raise invalid_request("device token rotation denied")
    device = gw.device_registry.get(device_id)
    if device is None or role not in device.roles:
        # As the real gateway, which names no reason (an unknown device or role).
        raise invalid_request("device token rotation denied")
    current = gw.device_tokens.get(device_id, role)
    wanted = scopes if scopes is not None else current.scopes if current else device.scopes
    if _exceeds_caller(peer, role, wanted):
        log.warning(
            "device token rotation denied device=%s reason=caller-missing-scope", device_id[:12]
        )
        raise invalid_request("device token rotation denied")
    # Sorted and de-duplicated, as the real gateway stores and answers them (it also adds
    # the implied read/write; ours keeps the approved scopes as named).
    if scopes is not None or current is not None:
        scopes = sorted({s.strip() for s in (wanted if scopes is None else scopes) if s.strip()})
    try:
        token = gw.device_tokens.rotate(device_id, role, scopes, now_ms())
    except ScopeNotApprovedError as exc:
        log.warning("device token rotation denied device=%s scope=%s", device_id, exc.scope)
        raise invalid_request("device token rotation denied") from None
    except UnknownDeviceError:
        raise invalid_request("device token rotation denied") from None
    granted = gw.device_tokens.scopes(device_id, role)
    # As the real gateway: sessions holding the old token are closed after this answer, and
    # the new token is only handed to the device itself (another device's is withheld).
    gw.pairing.disconnect(device_id, "device removed", role=role, code=4001)
    own = peer.managing_device_id == device_id
    result: dict[str, Any] = {"deviceId": device_id, "role": role}
    if own:
        result["token"] = token
    result.update(
        {
            "scopes": granted,
            "rotatedAtMs": now_ms(),
            "tokenDelivery": "in-band" if own else "withheld-cross-device",
        }
    )
    return result


@table.method(Method.DEVICE_TOKEN_REVOKE, scope=PAIRING, params=DeviceTokenRevokeParams)
async def token_revoke(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.token.revoke {deviceId, role}``: the token stops working at once."""
    device_id: str = params["deviceId"]
    role: str = params["role"]
    if _denies_token_management(peer, device_id, role):
        raise invalid_request("device token revocation denied")
    device = gw.device_registry.get(device_id)
    current = gw.device_tokens.get(device_id, role)
    # As the real gateway: an unknown device, role or token is denied like the rest, and so
    # is a token holding an operator scope the caller lacks.
    if device is None or role not in device.roles or current is None:
        raise invalid_request("device token revocation denied")
    if _exceeds_caller(peer, role, current.scopes):
        log.warning(
            "device token revocation denied device=%s reason=caller-missing-scope", device_id[:12]
        )
        raise invalid_request("device token revocation denied")
    if not gw.device_tokens.revoke(device_id, role):
        raise invalid_request("device token revocation denied")
    # The token stops working at once: live sessions that used it are closed too.
    gw.pairing.disconnect(device_id, "device removed", role=role, code=4001)
    return {"deviceId": device_id, "role": role, "revokedAtMs": now_ms()}


#: ``device.pair.setupCode`` params, as the real gateway's closed schema
#: (``DevicePairSetupCodeParamsSchema``); properties in its order, which is the error order.
#: Kept as data: its ``joinUrl`` is ``const: true`` on a boolean, which the params models of
#: :mod:`openclaw_desktop.protocol.methods` do not derive.
_PUBLIC_URL_SOURCE = "plugins.entries.device-pair.config.publicUrl"
_SECURE_URL_REQUIRED = (
    "Tailscale and public mobile pairing require a secure gateway URL (wss://) or Tailscale "
    f"Serve/Funnel. Resolved source: {_PUBLIC_URL_SOURCE}. Fix: use a private LAN address, "
    "prefer gateway.tailscale.mode=serve, or set gateway.remote.url / "
    f"{_PUBLIC_URL_SOURCE} to a wss:// URL. ws:// is only valid for localhost, private LAN "
    "addresses, .local hosts, or the Android emulator."
)
_SCHEME_WITHOUT_AUTHORITY = re.compile(r"^(?:https?|wss?):(?!//)", re.IGNORECASE)
_SCHEME_LIKE_PATH = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/")
_WS_SCHEMES = {"ws": "ws", "wss": "wss", "http": "ws", "https": "wss"}
_DEFAULT_PORTS = {"ws": 80, "wss": 443, "http": 80, "https": 443}
#: Characters a URL host may not contain (WHATWG's forbidden domain code points).
_FORBIDDEN_HOST = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")


def _gateway_url(raw: str) -> str | None:
    """``scheme://host[:port][/path]`` of a ws/wss (or http/https, mapped) URL, the way the
    real gateway's ``parseNormalizedGatewayUrl`` prints it (default port, query, fragment
    and a bare ``/`` dropped; no user info)."""
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        return None
    scheme = _WS_SCHEMES.get(parts.scheme.lower())
    host = parts.hostname
    if scheme is None or not parts.netloc or not host or parts.username or parts.password:
        return None
    if ":" in host:
        try:
            host = f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            return None
    elif _FORBIDDEN_HOST.search(host):
        return None
    elif not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if port == _DEFAULT_PORTS[parts.scheme.lower()]:
        port = None
    path = "" if parts.path in ("", "/") else parts.path
    return f"{scheme}://{host}{'' if port is None else f':{port}'}{path}"


def normalize_public_url(raw: str, tls: bool) -> str | None:
    """``publicUrl`` as the real gateway's ``normalizeUrl``: a ws/wss URL, or a bare
    ``host[:port]`` (anything after the first ``/`` dropped) with this gateway's scheme."""
    text = raw.strip()
    if not text or _SCHEME_WITHOUT_AUTHORITY.match(text):
        return None
    url = _gateway_url(text)
    if url is not None:
        return url
    if "://" in text or _SCHEME_LIKE_PATH.match(text):
        return None
    host = text.split("/", 1)[0].strip()
    return _gateway_url(f"{'wss' if tls else 'ws'}://{host}") if host else None


def _pairing_host(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host.split("%", 1)[0]


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_loopback_host(host: str) -> bool:
    ip = _ip(host)
    return host == "localhost" or (ip is not None and ip.is_loopback)


def _unavailable(message: str) -> MethodError:
    return MethodError(error_shape(ErrorCode.UNAVAILABLE, message))


def _cleartext_allowed(host: str) -> bool:
    """``ws://`` is fine for this machine, the Android emulator and private LAN hosts
    (``.local``, RFC 1918, link-local, IPv6 unique-local/link-local)."""
    if _is_loopback_host(host) or host == "10.0.2.2" or host.endswith(".local"):
        return True
    ip = _ip(host)
    if ip is None:
        return False
    if isinstance(ip, ipaddress.IPv4Address):
        return any(
            ip in ipaddress.ip_network(net)
            for net in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16")
        )
    return ip.compressed.startswith(("fe80:", "fc", "fd"))


def _check_mobile_url(url: str) -> None:
    """The real gateway's ``validateMobilePairingUrl``: ``wss://``, or ``ws://`` to a host a
    phone can reach in clear text."""
    scheme = urlsplit(url).scheme
    if scheme == "wss" or (scheme == "ws" and _cleartext_allowed(_pairing_host(url))):
        return
    raise invalid_request(_SECURE_URL_REQUIRED)


@table.method(Method.DEVICE_PAIR_SETUP_CODE, scope=ADMIN, params=DevicePairSetupCodeParams)
async def setup_code(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.setupCode``: mint a single-use bootstrap token (10 minutes).

    As the real gateway: the closed params schema and its error texts; ``bootstrapProfile``
    ``limited`` (no operator.admin), ``node`` (node role only) or ``voice-node`` (node plus
    operator.read/operator.talk), full access without it; ``publicUrl`` normalized and
    checked like the real one; ``includeQr: false`` leaves out ``qrDataUrl``. Deliberate
    differences: without ``publicUrl`` a gateway bound to loopback still mints a code for
    ``127.0.0.1`` (the real one refuses; the desktop app shows such codes), and
    ``joinUrl`` links are not offered (no HTTP join endpoint here).
    """
    profile = params.get("bootstrapProfile")
    join = params.get("joinUrl") is True
    if join and profile not in (None, "node"):
        raise invalid_request("Join URLs require bootstrapProfile=node.")
    if gw.config.auth_mode not in ("token", "password"):
        raise invalid_request(
            'Pairing setup requires gateway.auth.mode "token" or "password"; '
            f'current mode is "{gw.config.auth_mode}".'
        )
    public_url: str | None = None
    raw_url = params.get("publicUrl")
    if isinstance(raw_url, str) and raw_url.strip():
        public_url = normalize_public_url(raw_url, gw.config.tls)
        if public_url is None:
            raise invalid_request("Configured publicUrl is invalid.")
        _check_mobile_url(public_url)
    if join:
        target = public_url or (gw.setup_codes.public_urls or ["ws://127.0.0.1"])[0]
        if urlsplit(target).scheme != "wss" and not _is_loopback_host(_pairing_host(target)):
            raise _unavailable(
                "Error: Join URLs require a TLS gateway endpoint, except for loopback. "
                "Use the setup code directly for plaintext LAN pairing."
            )
        raise _unavailable(
            "Error: Join URLs are not supported by this gateway. Use the setup code."
        )
    access: SetupProfile = "full" if profile is None else profile
    return gw.setup_codes.mint(
        access=access, public_url=public_url, include_qr=params.get("includeQr") is not False
    )


@table.method(Method.DEVICE_PAIR_SETUP_STATUS, scope=ADMIN, params=DevicePairSetupStatusParams)
async def setup_status(gw: DeviceServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``device.pair.setupStatus {setupId}``."""
    setup_id: str = params["setupId"]
    status = gw.bootstrap_tokens.status(setup_id, now_ms())
    # As the real gateway: ``{}`` for a setup that has not completed (or is unknown).
    if status is None:
        return {}
    wire = status.to_wire()
    if gw.bootstrap_tokens.profile_of(status) == "voice-node":
        # The real gateway reports a voice-node setup as limited access.
        for completion in wire.values():
            if isinstance(completion, dict):
                completion["access"] = "limited"
    return wire
