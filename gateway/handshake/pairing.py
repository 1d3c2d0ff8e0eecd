"""The device pairing gate of a ``connect`` (``requirePairing``): pinned client metadata,
role and scope upgrades, silent approvals and pending requests, as the real gateway.

Part of the connect decision (:mod:`gateway.handshake.decide`): reads go through the
:class:`~gateway.handshake.decision.StateView`, writes are yielded effects.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from gateway.handshake.client_metadata import NATIVE_APP_IDS, normalize_metadata, pin_metadata
from gateway.handshake.decision import (
    ApproveDevice,
    Broadcast,
    ConnectContext,
    Credential,
    Described,
    Effect,
    RequestPairing,
    ResolvePairing,
    StateView,
)
from gateway.handshake.proof import VerifiedDevice
from gateway.handshake.setup_profile import setup_profile, token_covers
from gateway.handshake.shortcuts import pairing_required
from gateway.state.records import DeviceRecord, PairingRequest, PendingOutcome
from openclaw_desktop.protocol import ClientInfo, ConnectParams, EventName

__all__ = ["GateOutcome", "pairing_gate", "role_in_force"]

_SHARED_SECRET_METHODS = frozenset({"none", "token", "password"})

_Steps = Generator[Effect, Any, None]


@dataclass(frozen=True)
class GateOutcome:
    """What the pairing gate lets a device connection have."""

    scopes: list[str]
    #: The connect is the setup-code hand-off (see :mod:`gateway.handshake.hello_tokens`).
    handoff: bool
    #: The client as the connection is known (node-host metadata filled in, pinned fields
    #: in the paired spelling).
    client: ClientInfo
    #: A newer OS version of an official app to store on the paired record, or None.
    refresh_platform: str | None = None


def role_in_force(view: StateView, record: DeviceRecord, role: str) -> bool:
    """``listEffectivePairedDeviceRoles``: the role is approved and its device token, once
    issued, was not revoked. A revoked role is asked for again (``role-upgrade``), whatever
    the credential, as on the real gateway: ``devices revoke --role node`` keeps the node
    out until an owner approves it again."""
    if role not in record.roles:
        return False
    token = view.token(record.device_id, role)
    return token is None or token.active


@dataclass
class _Gate:
    """The pairing gate of one device connect (``authorizeGatewayConnectDevice``)."""

    view: StateView
    ctx: ConnectContext
    params: ConnectParams
    device: VerifiedDevice
    role: str
    requested: list[str]
    authed: Credential
    client: ClientInfo
    handoff: bool

    def admit(self) -> Generator[Effect, Any, GateOutcome]:
        record = self.view.device(self.device.device_id)
        if record is None:
            yield from self.require("not-paired", None)
            return GateOutcome(self.requested, self.handoff, self.client)
        client = self.client
        pin = pin_metadata(
            client.id.value,
            client.mode.value,
            client.platform,
            client.device_family,
            record.platform,
            record.device_family,
        )
        if pin.mismatch:
            yield from self.require("metadata-upgrade", record)
        else:
            update: dict[str, Any] = {}
            if pin.platform:
                update["platform"] = pin.platform
            if pin.device_family:
                update["device_family"] = pin.device_family
            client = client.model_copy(update=update) if update else client
        # Checked against the record as it was, as on the real gateway (an approval above
        # does not skip them; each asks again with its own reason).
        if not role_in_force(self.view, record, self.role):
            yield from self.require("role-upgrade", record)
        if self.requested and not (
            record.scopes and token_covers(self.role, self.requested, record.scopes)
        ):
            yield from self.require("scope-upgrade", record)
        return GateOutcome(self.requested, self.handoff, client, pin.refresh_platform)

    def _silent(self, reason: str, existing: DeviceRecord | None) -> bool:
        """``resolveLocalPairingApproval``: whether this machine's own connect is approved
        without asking. Never for a paired device's non-operator connect (a node role, a
        node's metadata); a changed platform or family only for an official app's window;
        otherwise with local auto-approval on, and a scope upgrade only on shared-secret
        (or no) auth, not on a device token or setup code."""
        if existing is not None and self.role != "operator":
            return self._own_desktop_node(reason, existing)
        if not self.ctx.local:
            return False
        if reason == "metadata-upgrade":
            return self.client.mode.value == "ui" and self.client.id.value in NATIVE_APP_IDS
        if not self.view.policy.auto_approve_local:
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
        on Windows) in node mode, asking for the node role for the first time (a node role
        whose token an owner revoked is asked for again). Every other node upgrade asks, as
        on the real gateway.
        """
        client = self.client
        desktop_node = client.mode.value == "node" and (
            client.id.value in ("openclaw-linux", "openclaw-macos")
            or (client.id.value == "node-host" and normalize_metadata(client.platform) == "windows")
        )
        return (
            reason == "role-upgrade"
            and self.role not in existing.roles  # never a role whose token was revoked
            and desktop_node
            and self.ctx.local
            and self.view.policy.auto_approve_local
            and self.authed.method in _SHARED_SECRET_METHODS
            and existing.approved_via == "silent"
        )

    def _caller_covers(self, request: PairingRequest, existing: DeviceRecord | None) -> bool:
        """A silent approval grants no operator scope beyond what this connect asked for
        and the device already had (``approveDevicePairing`` with ``callerScopes``)."""
        caller = [*self.requested, *(existing.scopes if existing else ())]
        wanted = [s for s in request.scopes if s.startswith("operator.")]
        return token_covers("operator", wanted, caller)

    def require(self, reason: str, existing: DeviceRecord | None) -> _Steps:
        """``requirePairing``: approve this connect now when allowed, else reject it with
        ``NOT_PAIRED`` and a pending request. Returns only if the device, as now stored,
        allows the connect."""
        device, client, now = self.device, self.client, self.ctx.now_ms
        # The real gateway records no address for a local device.
        described = Described(
            role=self.role,
            scopes=self.requested,
            client_id=client.id.value,
            client_mode=client.mode.value,
            display_name=client.display_name,
            platform=client.platform,
            device_family=client.device_family,
            remote_ip=None if self.ctx.local else self.ctx.address,
            now_ms=now,
        )
        if self.handoff and reason in ("not-paired", "scope-upgrade"):
            yield ApproveDevice(
                device.device_id,
                device.public_key_b64url,
                role=self.role,
                scopes=self.requested,
                approved_via="bootstrap",
                now_ms=now,
                described=described,
            )
            return
        silent = self._silent(reason, existing)
        outcome: PendingOutcome[PairingRequest] = yield RequestPairing(
            device.device_id, device.public_key_b64url, silent, described
        )
        request = outcome.request
        for old in outcome.superseded:
            yield _resolved(old, device.device_id, "rejected", now)
        inline = request.silent
        if inline:
            approved: PairingRequest | None = None
            if self._caller_covers(request, existing):
                approved = yield ResolvePairing(request.request_id, device.device_id, now)
            if approved is not None:
                yield _resolved(request.request_id, device.device_id, "approved", now)
        elif outcome.created:
            yield Broadcast(EventName.DEVICE_PAIR_REQUESTED, request.to_wire())
        live = self.view.device(device.device_id)
        if live is not None and self._allows(live):
            return
        pending = self.view.pairing_request(request.request_id, now)
        if pending is None:
            others = [
                p
                for p in self.view.pairing_requests_for(device.device_id, now)
                if p.public_key == device.public_key_b64url
            ]
            pending = others[0] if others else None
        if inline and pending is not None and pending.request_id == request.request_id:
            yield Broadcast(EventName.DEVICE_PAIR_REQUESTED, pending.to_wire())
        raise pairing_required(
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
        pin = pin_metadata(
            client.id.value,
            client.mode.value,
            client.platform,
            client.device_family,
            live.platform,
            live.device_family,
        )
        return (
            not pin.mismatch
            and role_in_force(self.view, live, self.role)
            and token_covers(self.role, self.requested, live.scopes)
        )


def _resolved(request_id: str, device_id: str, decision: str, ts: int) -> Broadcast:
    return Broadcast(
        EventName.DEVICE_PAIR_RESOLVED,
        {"requestId": request_id, "deviceId": device_id, "decision": decision, "ts": ts},
    )


def pairing_gate(
    view: StateView,
    ctx: ConnectContext,
    params: ConnectParams,
    device: VerifiedDevice,
    role: str,
    requested: list[str],
    authed: Credential,
) -> Generator[Effect, Any, GateOutcome]:
    """The scopes this device gets, approving it when allowed or rejecting with NOT_PAIRED
    (raised as :class:`~gateway.handshake.ConnectRejection`).

    As on the real gateway, whatever the credential (a device token too): a new device
    needs approval (``not-paired``); a paired one whose platform or device family changed
    needs it again (``metadata-upgrade``, see
    :func:`~gateway.handshake.client_metadata.pin_metadata`), as do a new role
    (``role-upgrade``) and scopes beyond the approved ones (``scope-upgrade``). What this
    machine's own connects get without asking is in :meth:`_Gate._silent`.

    A setup code approves its device silently only for the phone hand-off
    (:meth:`~gateway.handshake.setup_profile.SetupCodeProfile.hands_off_to`: the official app or
    node-host the code's profile is meant for, connecting as a node); any other client
    redeeming a code goes through normal pairing, as on the real gateway.
    """
    record = view.device(device.device_id)
    bootstrap = authed.bootstrap
    # Not for a role upgrade of a paired device (the real gateway asks for approval then).
    handoff = (
        authed.method == "bootstrap-token"
        and bootstrap is not None
        and (record is None or role in record.roles)
        and setup_profile(
            view.setup_profile_name(bootstrap), local=ctx.local, tls=ctx.tls
        ).hands_off_to(params, role)
    )
    gate = _Gate(view, ctx, params, device, role, requested, authed, params.client, handoff)
    return (yield from gate.admit())
