"""DeviceRegistry: approving, merging, renaming, touching, removing devices and roles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.state import DB_FILENAME, DeviceRecord, GatewayState, RoleRemoval

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
DEV = "88a4d83a94cbc8231289273535eb61453087a816368fea490fd7ed482e294d75"


@pytest.fixture
def state(tmp_path: Path) -> Iterator[GatewayState]:
    with GatewayState(tmp_path / "state" / DB_FILENAME) as opened:
        yield opened


def _approve_operator(state: GatewayState, now_ms: int = 1_000, **extra: str) -> DeviceRecord:
    return state.devices.approve(
        DEV,
        KEY,
        role="operator",
        scopes=["operator.read", " operator.write ", "operator.read", ""],
        approved_via="silent",
        now_ms=now_ms,
        **extra,
    )


def _node_surface(state: GatewayState) -> None:
    request = state.nodes.request(
        DEV,
        commands=["system.notify"],
        caps=["system"],
        permissions=None,
        required_approve_scopes=["operator.pairing", "operator.write"],
        now_ms=2_000,
    )
    state.nodes.approve(request.request_id, 2_000)


def test_approve_creates_a_record(state: GatewayState) -> None:
    """A first approval stores key, role, normalised scopes, metadata and timestamps."""
    device = _approve_operator(
        state,
        client_id="cli",
        client_mode="cli",
        display_name="laptop",
        platform="linux",
        device_family="Linux",
        remote_ip="127.0.0.1",
    )
    assert device == state.devices.get(DEV)
    assert device.roles == ("operator",)
    assert device.role == "operator"
    assert device.scopes == ("operator.read", "operator.write")
    assert device.approved_via == "silent"
    assert device.created_at_ms == device.approved_at_ms == 1_000
    assert device.client_id == "cli"
    assert device.label == "laptop"
    assert device.last_seen_at_ms is None


def test_approve_merges_roles_and_scopes(state: GatewayState) -> None:
    """A second approval adds its role and scopes and keeps the rest of the record."""
    _approve_operator(state, display_name="laptop", platform="linux")
    device = state.devices.approve(
        DEV,
        KEY,
        role="node",
        scopes=["operator.write", "operator.admin"],
        approved_via="owner",
        now_ms=5_000,
        platform="darwin",
    )
    assert device.roles == ("operator", "node")
    assert device.scopes == ("operator.read", "operator.write", "operator.admin")
    assert device.created_at_ms == 1_000
    assert device.approved_at_ms == 5_000
    assert device.approved_via == "owner"
    assert device.display_name == "laptop"
    assert device.platform == "darwin"


def test_approve_rejects_blank_identifiers(state: GatewayState) -> None:
    """Empty device ids, keys or roles are refused before anything is written."""
    with pytest.raises(ValueError, match="device_id"):
        state.devices.approve(" ", KEY, role="node", scopes=[], approved_via="owner", now_ms=1)
    with pytest.raises(ValueError, match="role"):
        state.devices.approve(DEV, KEY, role="", scopes=[], approved_via="owner", now_ms=1)
    assert state.devices.list() == []


def test_get_and_list(state: GatewayState) -> None:
    """get() of an unknown id is None; list() is newest approval first."""
    assert state.devices.get("nope") is None
    state.devices.approve("a", KEY, role="node", scopes=[], approved_via="silent", now_ms=1)
    state.devices.approve("b", KEY, role="node", scopes=[], approved_via="silent", now_ms=3)
    state.devices.approve("c", KEY, role="node", scopes=[], approved_via="silent", now_ms=2)
    assert [device.device_id for device in state.devices.list()] == ["b", "c", "a"]


def test_rename_sets_the_operator_label(state: GatewayState) -> None:
    """rename() sets operatorLabel, which wins over the client's display name."""
    _approve_operator(state, display_name="laptop")
    renamed = state.devices.rename(DEV, "  Work laptop ")
    assert renamed is not None
    assert renamed.operator_label == "Work laptop"
    assert renamed.label == "Work laptop"
    assert renamed.to_wire()["operatorLabel"] == "Work laptop"
    assert state.devices.rename("nope", "x") is None
    with pytest.raises(ValueError, match="label"):
        state.devices.rename(DEV, "   ")


def test_touch_records_last_seen(state: GatewayState) -> None:
    """touch() stores lastSeenAtMs/reason and the address; an unknown device gives False."""
    _approve_operator(state, remote_ip="10.0.0.2")
    assert state.devices.touch(DEV, 9_000, "10.0.0.3")
    device = state.devices.get(DEV)
    assert device is not None
    assert (device.last_seen_at_ms, device.last_seen_reason, device.remote_ip) == (
        9_000,
        "connect",
        "10.0.0.3",
    )
    assert state.devices.touch(DEV, 9_500, None, reason="device-token-auth")
    device = state.devices.get(DEV)
    assert device is not None
    assert device.remote_ip == "10.0.0.3"
    assert device.last_seen_reason == "device-token-auth"
    assert not state.devices.touch("nope", 1, None)


def test_remove_drops_everything_of_the_device(state: GatewayState) -> None:
    """remove() deletes the record, its tokens, node surface and pending requests."""
    _approve_operator(state)
    state.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="owner", now_ms=1_500)
    state.tokens.issue(DEV, "node", [], 1_500)
    _node_surface(state)
    state.nodes.request(
        DEV,
        commands=["system.run"],
        caps=[],
        permissions=None,
        required_approve_scopes=[],
        now_ms=3_000,
    )
    state.pairing.request(DEV, KEY, role="operator", scopes=["operator.admin"], now_ms=3_000)
    assert state.devices.remove(DEV)
    assert state.devices.get(DEV) is None
    assert state.tokens.list(DEV) == []
    assert state.nodes.approved(DEV) is None
    assert state.nodes.list_pending(3_000) == []
    assert state.pairing.list_pending(3_000) == []
    assert not state.devices.remove(DEV)


def test_remove_role_keeps_a_mixed_role_device(state: GatewayState) -> None:
    """Removing the node role keeps the operator role, its scopes and token; node data goes."""
    _approve_operator(state)
    state.devices.approve(
        DEV, KEY, role="node", scopes=["node.custom"], approved_via="owner", now_ms=1_500
    )
    operator_token = state.tokens.issue(DEV, "operator", ["operator.read"], 1_500)
    state.tokens.issue(DEV, "node", ["node.custom"], 1_500)
    _node_surface(state)
    pending = state.pairing.request(DEV, KEY, role="node", scopes=["node.more"], now_ms=3_000)
    assert pending.request.roles == ("node",)

    result = state.devices.remove_role(DEV, "node")

    assert result == RoleRemoval(DEV, "node", removed_device=False)
    device = state.devices.get(DEV)
    assert device is not None
    assert device.roles == ("operator",)
    assert device.scopes == ("operator.read", "operator.write")
    assert [token.role for token in state.tokens.list(DEV)] == ["operator"]
    assert state.tokens.verify(DEV, "operator", operator_token) is not None
    assert state.nodes.approved(DEV) is None
    assert state.pairing.get(pending.request_id, 3_000) is None


def test_remove_role_trims_a_multi_role_pending_request(state: GatewayState) -> None:
    """A pending request for node+operator keeps only the operator part after node removal."""
    _approve_operator(state)
    state.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="owner", now_ms=1_500)
    state.pairing.request(DEV, KEY, role="node", scopes=["node.x"], now_ms=3_000)
    merged = state.pairing.request(
        DEV, KEY, role="operator", scopes=["operator.admin"], now_ms=3_000
    )
    assert merged.request.roles == ("node", "operator")
    state.devices.remove_role(DEV, "node")
    trimmed = state.pairing.get(merged.request_id, 3_000)
    assert trimmed is not None
    assert (trimmed.role, trimmed.roles, trimmed.scopes) == (
        "operator",
        ("operator",),
        ("operator.admin",),
    )


def test_remove_last_role_removes_the_device(state: GatewayState) -> None:
    """Removing a device's only role unpairs it; an unknown device or role gives None."""
    state.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="silent", now_ms=1)
    assert state.devices.remove_role(DEV, "operator") is None
    assert state.devices.remove_role("nope", "node") is None
    assert state.devices.remove_role(DEV, "node") == RoleRemoval(DEV, "node", removed_device=True)
    assert state.devices.get(DEV) is None


def test_to_wire_matches_the_real_paired_entry(state: GatewayState) -> None:
    """to_wire() gives the real device.pair.list paired[] keys, tokens summarised."""
    _approve_operator(state, display_name="laptop", client_id="cli", client_mode="cli")
    state.tokens.issue(DEV, "operator", ["operator.read"], 2_000)
    device = state.devices.get(DEV)
    assert device is not None
    wire = device.to_wire(tokens=state.tokens.list(DEV), connected=True)
    assert wire == {
        "deviceId": DEV,
        "publicKey": KEY,
        "displayName": "laptop",
        "clientId": "cli",
        "clientMode": "cli",
        "role": "operator",
        "roles": ["operator"],
        "scopes": ["operator.read", "operator.write"],
        "approvedVia": "silent",
        "createdAtMs": 1_000,
        "approvedAtMs": 1_000,
        "connected": True,
        "tokens": [{"role": "operator", "scopes": ["operator.read"], "createdAtMs": 2_000}],
    }
    assert (
        "tokens"
        not in state.devices.approve(
            "other", KEY, role="node", scopes=[], approved_via="owner", now_ms=1
        ).to_wire()
    )


def test_an_owners_approval_is_not_overwritten_by_a_silent_one(state: GatewayState) -> None:
    """approvedVia: a later silent (or trusted) approval keeps "owner" and "bootstrap"; the
    owner's approval always wins (the real gateway's mergeApprovalKind)."""
    assert _approve_operator(state).approved_via == "silent"
    owner = state.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="owner", now_ms=2)
    assert owner.approved_via == "owner"
    assert _approve_operator(state, now_ms=3).approved_via == "owner"
    other = "1" * 64
    state.devices.approve(other, KEY, role="node", scopes=[], approved_via="bootstrap", now_ms=4)
    again = state.devices.approve(
        other, KEY, role="operator", scopes=[], approved_via="silent", now_ms=5
    )
    assert again.approved_via == "bootstrap"


def test_replace_metadata_takes_the_clients_details_as_given(state: GatewayState) -> None:
    """With replace_metadata (an approved pairing request), the record describes the client
    that asked: a detail it did not send is cleared; the operator's label stays."""
    _approve_operator(state, display_name="laptop", platform="linux", device_family="Linux")
    state.devices.rename(DEV, "my laptop")
    device = state.devices.approve(
        DEV,
        KEY,
        role="operator",
        scopes=[],
        approved_via="owner",
        now_ms=2_000,
        client_id="cli",
        client_mode="cli",
        platform="darwin",
        replace_metadata=True,
    )
    assert (device.platform, device.device_family, device.display_name) == ("darwin", None, None)
    assert (device.client_id, device.client_mode) == ("cli", "cli")
    assert device.operator_label == "my laptop"


def test_touch_can_store_a_newer_platform(state: GatewayState) -> None:
    """An official app's newer OS version is stored by touch(platform=...); None keeps it."""
    _approve_operator(state, platform="Android 14")
    assert state.devices.touch(DEV, 2_000, None, platform="Android 15")
    assert state.devices.touch(DEV, 3_000, None)
    device = state.devices.get(DEV)
    assert device is not None and device.platform == "Android 15"
