"""``device.pair.*`` and ``device.token.*``: the device pairing layer."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from gateway.errors import invalid_params, invalid_request
from gateway.hub import now_ms
from gateway.peer import Peer
from gateway.state import NodePairRequest, ScopeNotApprovedError, UnknownDeviceError

if TYPE_CHECKING:
    from gateway.core import GatewayCore

__all__ = ["HANDLERS"]

log = logging.getLogger("gateway.devices")


def _obj(method: str, params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_params(method, "must be object")
    return params


def _str(method: str, params: Any, name: str) -> str:
    p = _obj(method, params)
    if name not in p:
        raise invalid_params(method, f"must have required property '{name}'")
    value = p[name]
    if not isinstance(value, str) or not value:
        raise invalid_params(method, f"at /{name}: must NOT have fewer than 1 characters")
    return value


def _is_admin(peer: Peer) -> bool:
    return "operator.admin" in peer.scopes


def _denies_token_management(peer: Peer, device_id: str, role: str) -> bool:
    """The real gateway's rules without operator.admin: a device-token session manages only
    its own device, and only operator tokens."""
    if _is_admin(peer):
        return False
    caller = peer.managing_device_id
    return (caller is not None and caller != device_id.strip()) or role.strip() != "operator"


async def pair_list(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.list``: pending requests and paired devices."""
    now = now_ms()
    pending = [r.to_wire() for r in core.state.pairing.list_pending(now)]
    surfaces = {r.node_id: r for r in core.state.nodes.list_pending(now)}
    connected = {p.device_id for p in core.hub.peers.values() if p.device_id}
    paired = []
    for device in core.state.devices.list():
        entry = device.to_wire(
            tokens=core.state.tokens.list(device.device_id),
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


async def pair_approve(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.approve {requestId}`` (a node role needs operator.admin too)."""
    request_id = _str("device.pair.approve", params, "requestId")
    request = core.state.pairing.get(request_id, now_ms())
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
    device = core.approve_device_request(request_id, approved_via="owner")
    return {"requestId": request_id, "device": device}


async def pair_reject(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.reject {requestId}``."""
    request_id = _str("device.pair.reject", params, "requestId")
    request = core.state.pairing.get(request_id, now_ms())
    caller = peer.managing_device_id
    if (
        caller is not None
        and not _is_admin(peer)
        and (request is None or request.device_id != caller)
    ):
        raise invalid_request("device pairing rejection denied")
    if request is None:
        raise invalid_request("unknown requestId")
    core.reject_device_request(request_id)
    return {"requestId": request_id, "decision": "rejected"}


async def pair_remove(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.remove {deviceId}``: forget the device and its tokens."""
    device_id = _str("device.pair.remove", params, "deviceId")
    if not core.state.devices.remove(device_id):
        raise invalid_request("unknown deviceId")
    core.disconnect_device(device_id, "device removed")
    return {"deviceId": device_id, "removed": True}


async def pair_rename(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.rename {deviceId, label}``."""
    device_id = _str("device.pair.rename", params, "deviceId")
    label = _str("device.pair.rename", params, "label")
    if core.state.devices.get(device_id) is None:
        raise invalid_request("unknown deviceId")
    core.state.devices.rename(device_id, label)
    return {"deviceId": device_id, "label": label}


async def token_rotate(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.token.rotate {deviceId, role, scopes?}``: a new token replaces the old."""
    p = _obj("device.token.rotate", params)
    device_id = _str("device.token.rotate", p, "deviceId")
    role = _str("device.token.rotate", p, "role")
    scopes = p.get("scopes")
    if scopes is not None and (
        not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes)
    ):
        raise invalid_params("device.token.rotate", "at /scopes: must be array")
    if _denies_token_management(peer, device_id, role):
        raise invalid_request("device token rotation denied")
    device = core.state.devices.get(device_id)
    if device is None or role not in device.roles:
        raise invalid_request("unknown deviceId")
    try:
        token = core.state.tokens.rotate(device_id, role, scopes, now_ms())
    except ScopeNotApprovedError as exc:
        log.warning("device token rotation denied device=%s scope=%s", device_id, exc.scope)
        raise invalid_request("device token rotation denied") from None
    except UnknownDeviceError:
        raise invalid_request("unknown deviceId") from None
    granted = core.state.tokens.scopes(device_id, role)
    # As the real gateway: sessions holding the old token are closed after this answer, and
    # the new token is only handed to the device itself (another device's is withheld).
    core.disconnect_device(device_id, "device token rotated", role=role, code=4001)
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


async def token_revoke(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.token.revoke {deviceId, role}``: the token stops working at once."""
    p = _obj("device.token.revoke", params)
    device_id = _str("device.token.revoke", p, "deviceId")
    role = _str("device.token.revoke", p, "role")
    if _denies_token_management(peer, device_id, role):
        raise invalid_request("device token revocation denied")
    if not core.state.tokens.revoke(device_id, role):
        raise invalid_request("unknown deviceId")
    # The token stops working at once: live sessions that used it are closed too.
    core.disconnect_device(device_id, "device token revoked", role=role, code=4001)
    return {"deviceId": device_id, "role": role, "revokedAtMs": now_ms()}


async def setup_code(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.setupCode``: mint a single-use bootstrap token (10 minutes)."""
    p = _obj("device.pair.setupCode", params)
    access = p.get("access", "full")
    if access not in ("full", "limited"):
        raise invalid_params(
            "device.pair.setupCode", "at /access: must be equal to one of the allowed values"
        )
    return core.mint_setup_code(access="limited" if access == "limited" else "full")


async def setup_status(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.setupStatus {setupId}``."""
    setup_id = _str("device.pair.setupStatus", params, "setupId")
    status = core.state.bootstrap.status(setup_id, now_ms())
    # As the real gateway: ``{}`` for a setup that has not completed (or is unknown).
    return {} if status is None else status.to_wire()


HANDLERS = {
    "device.pair.list": pair_list,
    "device.pair.approve": pair_approve,
    "device.pair.reject": pair_reject,
    "device.pair.remove": pair_remove,
    "device.pair.rename": pair_rename,
    "device.token.rotate": token_rotate,
    "device.token.revoke": token_revoke,
    "device.pair.setupCode": setup_code,
    "device.pair.setupStatus": setup_status,
}
