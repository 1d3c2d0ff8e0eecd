"""PairingRequests: pending device requests, reuse of request ids, expiry, resolution."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.state import DB_FILENAME, PAIRING_REQUEST_TTL_MS, GatewayState

KEY = "w1tF0k6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
OTHER_KEY = "AAAAk6A6Udo13b50tQToiyU74nTScuJShZTpxQthm4"
DEV = "e594b551e594b551e594b551e594b551e594b551e594b551e594b551e594b551"
T0 = 1_796_023_941_992


@pytest.fixture
def state(tmp_path: Path) -> Iterator[GatewayState]:
    with GatewayState(tmp_path / "state" / DB_FILENAME) as opened:
        yield opened


def test_request_creates_a_pending_request(state: GatewayState) -> None:
    """A first request gets a uuid4 id, expires 5 minutes later and has the real wire shape."""
    outcome = state.pairing.request(
        DEV,
        KEY,
        role="node",
        scopes=[],
        now_ms=T0,
        client_id="node-host",
        client_mode="node",
        display_name="py-node",
        platform="linux",
        device_family="Linux",
        remote_ip="192.0.2.2",
        silent=True,
    )
    assert outcome.created
    assert outcome.superseded == ()
    request = outcome.request
    assert uuid.UUID(request.request_id).version == 4
    assert outcome.request_id == request.request_id
    assert request.expires_at_ms == T0 + PAIRING_REQUEST_TTL_MS == T0 + 300_000
    assert not request.is_repair
    assert outcome.to_wire() == {
        "requestId": request.request_id,
        "deviceId": DEV,
        "publicKey": KEY,
        "displayName": "py-node",
        "platform": "linux",
        "deviceFamily": "Linux",
        "clientId": "node-host",
        "clientMode": "node",
        "role": "node",
        "roles": ["node"],
        "scopes": [],
        "remoteIp": "192.0.2.2",
        "silent": True,
        "isRepair": False,
        "ts": T0,
    }
    assert state.pairing.list_pending(T0) == [request]


def test_retry_reuses_the_request_and_pushes_expiry(state: GatewayState) -> None:
    """Reconnecting with the same key and a covered ask keeps the id; expiry moves."""
    first = state.pairing.request(
        DEV, KEY, role="operator", scopes=["operator.read", "operator.write"], now_ms=T0
    )
    later = T0 + 200_000
    again = state.pairing.request(
        DEV, KEY, role="operator", scopes=["operator.write"], now_ms=later, display_name="new"
    )
    assert not again.created
    assert again.request_id == first.request_id
    assert again.request.ts_ms == T0
    assert again.request.refreshed_at_ms == later
    assert again.request.expires_at_ms == later + PAIRING_REQUEST_TTL_MS
    assert again.request.scopes == ("operator.read", "operator.write")
    assert again.request.display_name == "new"
    assert state.pairing.get(first.request_id, T0 + 400_000) is not None


def test_wider_scopes_replace_the_request(state: GatewayState) -> None:
    """Asking for more scopes supersedes the old request with a merged one under a new id."""
    first = state.pairing.request(DEV, KEY, role="operator", scopes=["operator.read"], now_ms=T0)
    wider = state.pairing.request(
        DEV, KEY, role="operator", scopes=["operator.admin"], now_ms=T0 + 1
    )
    assert wider.created
    assert wider.superseded == (first.request_id,)
    assert wider.request_id != first.request_id
    assert wider.request.scopes == ("operator.read", "operator.admin")
    assert state.pairing.get(first.request_id, T0 + 1) is None
    assert [r.request_id for r in state.pairing.list_pending(T0 + 1)] == [wider.request_id]


def test_second_role_merges_then_both_roles_reuse(state: GatewayState) -> None:
    """A node+operator device ends with one merged request that both connections reuse."""
    node = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    both = state.pairing.request(DEV, KEY, role="operator", scopes=["operator.read"], now_ms=T0 + 1)
    assert both.created
    assert both.superseded == (node.request_id,)
    assert both.request.roles == ("node", "operator")
    assert both.request.role == "operator"
    for role, scopes in (("node", []), ("operator", ["operator.read"])):
        retry = state.pairing.request(DEV, KEY, role=role, scopes=scopes, now_ms=T0 + 2)
        assert not retry.created
        assert retry.request_id == both.request_id


def test_new_key_replaces_without_merging(state: GatewayState) -> None:
    """A different public key for the same id starts a fresh request."""
    first = state.pairing.request(DEV, KEY, role="operator", scopes=["operator.read"], now_ms=T0)
    fresh = state.pairing.request(DEV, OTHER_KEY, role="node", scopes=[], now_ms=T0 + 1)
    assert fresh.created
    assert fresh.superseded == (first.request_id,)
    assert (fresh.request.public_key, fresh.request.roles, fresh.request.scopes) == (
        OTHER_KEY,
        ("node",),
        (),
    )


def test_expiry_edges(state: GatewayState) -> None:
    """A request is live up to expires_at_ms inclusive and gone one millisecond later."""
    outcome = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    expires = outcome.request.expires_at_ms
    assert state.pairing.get(outcome.request_id, expires) is not None
    assert state.pairing.list_pending(expires) == [outcome.request]
    assert state.pairing.get(outcome.request_id, expires + 1) is None
    assert state.pairing.list_pending(expires + 1) == []
    assert state.pairing.get(outcome.request_id, T0) is None  # deleted, not just hidden


def test_request_after_expiry_gets_a_new_id(state: GatewayState) -> None:
    """Retrying after the request expired creates a new one; nothing is superseded."""
    first = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    late = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0 + 300_001)
    assert late.created
    assert late.superseded == ()
    assert late.request_id != first.request_id


def test_silent_only_while_every_retry_is_silent(state: GatewayState) -> None:
    """silent stays true only while every request of the device was silent."""
    assert state.pairing.request(
        DEV, KEY, role="node", scopes=[], now_ms=T0, silent=True
    ).request.silent
    loud = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0 + 1)
    assert not loud.request.silent
    again = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0 + 2, silent=True)
    assert not again.request.silent


def test_request_for_a_paired_device_is_a_repair(state: GatewayState) -> None:
    """A request from an already paired device (role or scope upgrade) has isRepair."""
    state.devices.approve(DEV, KEY, role="node", scopes=[], approved_via="silent", now_ms=T0)
    outcome = state.pairing.request(DEV, KEY, role="operator", scopes=["operator.read"], now_ms=T0)
    assert outcome.request.is_repair
    assert outcome.to_wire()["isRepair"] is True


def test_resolve_approved_pairs_the_device(state: GatewayState) -> None:
    """Approving applies every role and scope with the request's metadata, atomically."""
    state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0, platform="linux")
    merged = state.pairing.request(
        DEV, KEY, role="operator", scopes=["operator.read"], now_ms=T0 + 1, display_name="phone"
    )
    resolved = state.pairing.resolve(merged.request_id, "approved", T0 + 2)
    assert resolved == merged.request
    device = state.devices.get(DEV)
    assert device is not None
    assert device.roles == ("node", "operator")
    assert device.scopes == ("operator.read",)
    assert device.approved_via == "owner"
    assert device.display_name == "phone"
    assert device.approved_at_ms == T0 + 2
    assert state.pairing.list_pending(T0 + 2) == []
    assert state.pairing.resolve(merged.request_id, "approved", T0 + 3) is None


def test_resolve_records_the_approval_kind(state: GatewayState) -> None:
    """resolve(approved_via=...) is stored as the device's approvedVia."""
    outcome = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    state.pairing.resolve(outcome.request_id, "approved", T0, approved_via="bootstrap")
    device = state.devices.get(DEV)
    assert device is not None
    assert device.approved_via == "bootstrap"


def test_resolve_rejected_revokes_bound_setup_codes(state: GatewayState) -> None:
    """Rejecting leaves the device unpaired and kills setup codes bound to its id and key."""
    token, setup = state.bootstrap.mint(T0)
    assert state.bootstrap.redeem(token, DEV, KEY, T0) is not None
    outcome = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    rejected = state.pairing.resolve(outcome.request_id, "rejected", T0 + 1)
    assert rejected == outcome.request
    assert state.devices.get(DEV) is None
    assert state.pairing.get(outcome.request_id, T0 + 1) is None
    assert state.bootstrap.redeem(token, DEV, KEY, T0 + 2) is None
    assert state.bootstrap.status(setup.setup_id, T0 + 2) is None


def test_resolve_unknown_or_expired_is_none(state: GatewayState) -> None:
    """Resolving an unknown or expired request does nothing and returns None."""
    assert state.pairing.resolve("nope", "approved", T0) is None
    outcome = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    assert state.pairing.resolve(outcome.request_id, "approved", T0 + 300_001) is None
    assert state.devices.get(DEV) is None


def test_for_device_lists_only_live_requests(state: GatewayState) -> None:
    """for_device() returns the device's live requests and hides expired ones."""
    outcome = state.pairing.request(DEV, KEY, role="node", scopes=[], now_ms=T0)
    state.pairing.request("someone-else", KEY, role="node", scopes=[], now_ms=T0)
    assert state.pairing.for_device(DEV, T0) == [outcome.request]
    assert state.pairing.for_device(DEV, T0 + 300_001) == []


def test_approving_a_request_gives_the_device_its_details(state: GatewayState) -> None:
    """An approved request replaces the paired device's client details with its own, as on
    the real gateway: a metadata change that was approved is what the next connect is
    checked against (a family the request lacks is cleared)."""
    state.devices.approve(
        DEV,
        KEY,
        role="node",
        scopes=[],
        approved_via="silent",
        now_ms=T0,
        client_id="node-host",
        client_mode="node",
        platform="linux",
        device_family="Linux",
    )
    pending = state.pairing.request(
        DEV,
        KEY,
        role="operator",
        scopes=["operator.read"],
        now_ms=T0 + 1,
        client_id="cli",
        client_mode="cli",
        platform="linux",
    )
    state.pairing.resolve(pending.request_id, "approved", T0 + 2)
    device = state.devices.get(DEV)
    assert device is not None
    assert (device.client_id, device.client_mode) == ("cli", "cli")
    assert (device.platform, device.device_family) == ("linux", None)
    assert device.roles == ("node", "operator")
    assert device.approved_via == "owner"
