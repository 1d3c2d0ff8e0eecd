"""NodeSurfaces: node capability requests, reuse, expiry, approval, rename and removal."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from gateway.state import (
    DB_FILENAME,
    NODE_PAIR_REQUEST_TTL_MS,
    GatewayState,
    NodePairRequest,
    PendingOutcome,
    UnknownDeviceError,
    UnknownRequestError,
)

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
NODE = "293edc08293edc08293edc08293edc08293edc08293edc08293edc08293edc08"
T0 = 1_796_023_941_992
GOLDEN = Path(__file__).parents[3] / "fixtures" / "protocol" / "node_pair_list_entry.json"
SCOPES = ["operator.pairing", "operator.write"]


@pytest.fixture
def state(tmp_path: Path) -> Iterator[GatewayState]:
    with GatewayState(tmp_path / "state" / DB_FILENAME) as opened:
        opened.devices.approve(
            NODE,
            KEY,
            role="node",
            scopes=[],
            approved_via="silent",
            now_ms=T0 - 10,
            client_id="node-host",
            client_mode="node",
            display_name="device-name",
            platform="linux",
            device_family="Linux",
            remote_ip="127.0.0.1",
        )
        yield opened


def _request(
    state: GatewayState,
    now_ms: int = T0,
    *,
    commands: tuple[str, ...] = ("system.notify", "camera.list"),
    caps: tuple[str, ...] = ("camera", "system"),
    permissions: Mapping[str, bool] | None = None,
    **extra: Any,
) -> PendingOutcome[NodePairRequest]:
    return state.nodes.request(
        NODE,
        commands=commands,
        caps=caps,
        permissions={"camera.capture": True} if permissions is None else permissions,
        required_approve_scopes=SCOPES,
        now_ms=now_ms,
        **extra,
    )


def test_request_wire_matches_the_real_pending_entry(state: GatewayState) -> None:
    """A pending request renders exactly like the node.pair.list entry seen on the real gateway."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    outcome = _request(
        state,
        client_id="node-host",
        client_mode="node",
        display_name="py-probe-node",
        platform="linux",
        version="0.0.1-probe",
        device_family="Linux",
        silent=True,
    )
    assert outcome.created
    assert uuid.UUID(outcome.request_id).version == 4
    wire = outcome.to_wire()
    assert wire.pop("remoteIp") == "127.0.0.1"  # falls back to the device record
    assert list(wire) == list(golden)
    assert wire == {**golden, "requestId": outcome.request_id, "nodeId": NODE}
    assert outcome.request.expires_at_ms == T0 + NODE_PAIR_REQUEST_TTL_MS == T0 + 300_000


def test_request_needs_a_paired_device(state: GatewayState) -> None:
    """Only a paired device can ask for a node surface."""
    with pytest.raises(UnknownDeviceError):
        state.nodes.request(
            "stranger",
            commands=["system.notify"],
            caps=[],
            permissions=None,
            required_approve_scopes=SCOPES,
            now_ms=T0,
        )


def test_request_falls_back_to_device_metadata(state: GatewayState) -> None:
    """Fields the node does not declare come from its device record."""
    request = _request(state).request
    assert (request.display_name, request.platform, request.client_id) == (
        "device-name",
        "linux",
        "node-host",
    )


def test_same_surface_reuses_the_request(state: GatewayState) -> None:
    """Re-declaring the same surface (any order) keeps the id; ts and expiry follow the retry."""
    first = _request(state)
    retry = _request(
        state,
        T0 + 240_000,
        commands=("camera.list", "system.notify", "camera.list"),
        caps=("system", "camera"),
        version="0.0.2",
    )
    assert not retry.created
    assert retry.request_id == first.request_id
    assert retry.request.ts_ms == T0 + 240_000
    assert retry.request.expires_at_ms == T0 + 240_000 + NODE_PAIR_REQUEST_TTL_MS
    assert retry.request.version == "0.0.2"
    assert retry.request.commands == first.request.commands
    assert state.nodes.get(first.request_id, T0 + 500_000) is not None


def test_changed_surface_replaces_the_request(state: GatewayState) -> None:
    """A widened command list or changed permissions gives a new id and supersedes the old."""
    first = _request(state)
    wider = _request(state, T0 + 1, commands=("system.notify", "camera.list", "system.run"))
    assert wider.created
    assert wider.superseded == (first.request_id,)
    assert state.nodes.get(first.request_id, T0 + 1) is None
    perms = _request(
        state,
        T0 + 2,
        commands=("system.notify", "camera.list", "system.run"),
        permissions={"camera.capture": False},
    )
    assert perms.created
    assert perms.superseded == (wider.request_id,)
    assert [r.request_id for r in state.nodes.list_pending(T0 + 2)] == [perms.request_id]


def test_expiry_edges(state: GatewayState) -> None:
    """A pending surface lives 5 minutes after the last retry; expired ones are deleted."""
    outcome = _request(state)
    expires = outcome.request.expires_at_ms
    assert state.nodes.get(outcome.request_id, expires) is not None
    assert [r.request_id for r in state.nodes.list_pending(expires)] == [outcome.request_id]
    assert state.nodes.get(outcome.request_id, expires + 1) is None
    assert state.nodes.list_pending(expires + 1) == []
    assert state.nodes.get(outcome.request_id, T0) is None  # deleted
    late = _request(state, expires + 2)
    assert late.created
    assert late.superseded == ()


def test_approve_records_the_surface(state: GatewayState) -> None:
    """Approval stores commands/caps/permissions, removes the request, renders paired[] shape."""
    outcome = _request(state, version="0.0.1")
    surface = state.nodes.approve(outcome.request_id, T0 + 5)
    assert surface == state.nodes.approved(NODE)
    assert surface.commands == ("system.notify", "camera.list")
    assert surface.permissions == {"camera.capture": True}
    assert state.nodes.list_pending(T0 + 5) == []
    assert surface.to_wire() == {
        "nodeId": NODE,
        "clientId": "node-host",
        "clientMode": "node",
        "displayName": "device-name",
        "platform": "linux",
        "version": "0.0.1",
        "deviceFamily": "Linux",
        "caps": ["camera", "system"],
        "commands": ["system.notify", "camera.list"],
        "permissions": {"camera.capture": True},
        "remoteIp": "127.0.0.1",
        "createdAtMs": T0 + 5,
        "approvedAtMs": T0 + 5,
    }
    assert hash(surface) == hash(state.nodes.approved(NODE))
    with pytest.raises(TypeError):
        surface.permissions["camera.capture"] = False  # type: ignore[index]


def test_approve_unknown_or_expired_raises(state: GatewayState) -> None:
    """Approving an unknown or expired request raises UnknownRequestError."""
    with pytest.raises(UnknownRequestError) as caught:
        state.nodes.approve("nope", T0)
    assert caught.value.request_id == "nope"
    assert isinstance(caught.value, LookupError)
    outcome = _request(state)
    with pytest.raises(UnknownRequestError):
        state.nodes.approve(outcome.request_id, T0 + 300_001)
    assert state.nodes.approved(NODE) is None


def test_reapproval_keeps_name_and_creation(state: GatewayState) -> None:
    """A second approval keeps the operator's name and createdAtMs; approvedAtMs moves on."""
    first = state.nodes.approve(_request(state).request_id, T0)
    state.nodes.rename(NODE, "Desk")
    again = state.nodes.approve(
        _request(state, T0, commands=("system.notify",), display_name="new").request_id, T0
    )
    assert again.display_name == "Desk"
    assert again.created_at_ms == first.created_at_ms == T0
    assert again.approved_at_ms == T0 + 1
    assert again.commands == ("system.notify",)


def test_reject_keeps_the_approved_surface(state: GatewayState) -> None:
    """Rejecting a new surface drops the request; the earlier approval stays."""
    state.nodes.approve(_request(state).request_id, T0)
    pending = _request(state, T0 + 1, commands=("system.run",))
    rejected = state.nodes.reject(pending.request_id, T0 + 2)
    assert rejected == pending.request
    assert state.nodes.list_pending(T0 + 2) == []
    surface = state.nodes.approved(NODE)
    assert surface is not None
    assert surface.commands == ("system.notify", "camera.list")
    assert state.nodes.reject(pending.request_id, T0 + 2) is None


def test_rename_and_display_name(state: GatewayState) -> None:
    """display_name() is the approved name, else the device's; rename needs a surface."""
    assert state.nodes.display_name(NODE) == "device-name"
    assert state.nodes.display_name("nope") is None
    assert state.nodes.rename(NODE, "Desk") is None
    state.nodes.approve(_request(state, display_name="py-node").request_id, T0)
    assert state.nodes.display_name(NODE) == "py-node"
    renamed = state.nodes.rename(NODE, "  Desk ")
    assert renamed is not None
    assert renamed.display_name == "Desk"
    assert state.nodes.display_name(NODE) == "Desk"
    with pytest.raises(ValueError, match="display_name"):
        state.nodes.rename(NODE, " ")


def test_remove_on_a_mixed_role_device_keeps_the_row(state: GatewayState) -> None:
    """node.pair.remove drops the node role and surface; an operator device stays paired."""
    state.devices.approve(
        NODE, KEY, role="operator", scopes=["operator.read"], approved_via="owner", now_ms=T0
    )
    state.nodes.approve(_request(state).request_id, T0)
    _request(state, T0 + 1, commands=("system.run",))
    assert state.nodes.remove(NODE)
    assert state.nodes.approved(NODE) is None
    assert state.nodes.list_pending(T0 + 1) == []
    device = state.devices.get(NODE)
    assert device is not None
    assert device.roles == ("operator",)
    assert not state.nodes.remove(NODE)


def test_remove_on_a_node_only_device_unpairs_it(state: GatewayState) -> None:
    """Removing the node surface of a node-only device removes the device too."""
    state.nodes.approve(_request(state).request_id, T0)
    assert state.nodes.remove(NODE)
    assert state.devices.get(NODE) is None
    assert not state.nodes.remove("nope")


def test_list_approved_and_connection_times(state: GatewayState) -> None:
    """list_approved() is newest first; connection times show on the wire."""
    state.devices.approve("n2", KEY, role="node", scopes=[], approved_via="silent", now_ms=T0)
    state.nodes.approve(_request(state).request_id, T0)
    second = state.nodes.request(
        "n2",
        commands=["system.notify"],
        caps=[],
        permissions=None,
        required_approve_scopes=SCOPES,
        now_ms=T0 + 1,
    )
    state.nodes.approve(second.request_id, T0 + 1)
    assert [s.node_id for s in state.nodes.list_approved()] == ["n2", NODE]
    assert state.nodes.record_connection(NODE, T0 + 10)
    assert state.nodes.record_disconnection(NODE, T0 + 20)
    assert not state.nodes.record_connection("nope", T0)
    assert not state.nodes.record_disconnection("nope", T0)
    surface = state.nodes.approved(NODE)
    assert surface is not None
    wire = surface.to_wire()
    assert (wire["lastConnectedAtMs"], wire["lastDisconnectedAtMs"]) == (T0 + 10, T0 + 20)
    assert "permissions" not in state.nodes.list_approved()[0].to_wire()


def test_device_removal_cascades_to_node_data(state: GatewayState) -> None:
    """Unpairing the device deletes its approved surface and pending surface request."""
    state.nodes.approve(_request(state).request_id, T0)
    _request(state, T0 + 1, commands=("system.run",))
    state.devices.remove(NODE)
    assert state.nodes.approved(NODE) is None
    assert state.nodes.list_pending(T0 + 1) == []
    assert state.nodes.list_approved() == []
