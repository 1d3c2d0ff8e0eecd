"""``device.pair.*`` and ``device.token.*``: the device pairing layer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gateway.errors import MethodError, invalid_params, invalid_request
from gateway.hub import now_ms
from gateway.peer import Peer
from gateway.scopes import missing_scope_error, scope_satisfied

if TYPE_CHECKING:
    from gateway.core import GatewayCore

__all__ = ["HANDLERS"]


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


async def pair_list(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.list``: pending requests and paired devices."""
    now = now_ms()
    pending = [r.to_wire() for r in core.state.pairing.list_pending(now)]
    paired = []
    for device in core.state.devices.list():
        entry = device.to_wire()
        entry["connected"] = any(p.device_id == device.device_id for p in core.hub.peers.values())
        entry["tokens"] = [t.to_wire() for t in core.state.tokens.list(device.device_id)]
        paired.append(entry)
    return {"pending": pending, "paired": paired}


async def pair_approve(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.approve {requestId}`` (a node role needs operator.admin too)."""
    request_id = _str("device.pair.approve", params, "requestId")
    request = core.state.pairing.get(request_id, now_ms())
    if request is None:
        raise invalid_request("unknown requestId")
    if request.role != "operator" and not scope_satisfied("operator.admin", peer.scopes):
        raise MethodError(
            missing_scope_error("operator.admin", ["operator.pairing", "operator.admin"])
        )
    device = core.approve_device_request(request_id, approved_via="owner")
    return {"requestId": request_id, "device": device}


async def pair_reject(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.reject {requestId}``."""
    request_id = _str("device.pair.reject", params, "requestId")
    if core.state.pairing.get(request_id, now_ms()) is None:
        raise invalid_request("unknown requestId")
    core.reject_device_request(request_id)
    return {"requestId": request_id, "decision": "rejected"}


async def pair_remove(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.pair.remove {deviceId}``: forget the device and its tokens."""
    device_id = _str("device.pair.remove", params, "deviceId")
    if not core.state.devices.remove(device_id):
        raise invalid_request("unknown deviceId")
    await core.disconnect_device(device_id, "device removed")
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
    device = core.state.devices.get(device_id)
    if device is None or role not in device.roles:
        raise invalid_request("unknown deviceId")
    token = core.state.tokens.rotate(device_id, role, scopes, now_ms())
    granted = core.state.tokens.scopes(device_id, role)
    return {
        "deviceId": device_id,
        "role": role,
        "token": token,
        "scopes": granted,
        "rotatedAtMs": now_ms(),
    }


async def token_revoke(core: GatewayCore, peer: Peer, params: Any) -> Any:
    """``device.token.revoke {deviceId, role}``: the token stops working at once."""
    p = _obj("device.token.revoke", params)
    device_id = _str("device.token.revoke", p, "deviceId")
    role = _str("device.token.revoke", p, "role")
    if not core.state.tokens.revoke(device_id, role):
        raise invalid_request("unknown deviceId")
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
    if status is None:
        raise invalid_request("unknown setupId")
    return status.to_wire() if hasattr(status, "to_wire") else status


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
