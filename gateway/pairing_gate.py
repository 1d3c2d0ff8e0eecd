"""The device pairing gate of a ``connect`` (``requirePairing``): pinned client metadata,
role and scope upgrades, silent approvals and pending requests, as the real gateway."""

import logging
import re
from dataclasses import dataclass
from typing import Any

from gateway import handshake as hs
from gateway.connect_rules import (
    _ANDROID_PLATFORM,
    _IOS_PLATFORM,
    _Auth,
    _code_profile,
    _metadata,
    _token_covers,
)
from gateway.core import GatewayCore
from gateway.hub import now_ms
from gateway.nodes.policy import node_host_platform_metadata
from gateway.state import DeviceRecord, PairingRequest
from openclaw_desktop.protocol import ClientInfo, ConnectParams

log = logging.getLogger("gateway.connect")


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
        if not _role_in_force(self.core, record, self.role):
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
        on Windows) in node mode, asking for the node role for the first time (a node role
        whose token an owner revoked is asked for again). Every other node upgrade asks, as
        on the real gateway.
        """
        client = self.client
        desktop_node = client.mode.value == "node" and (
            client.id.value in ("openclaw-linux", "openclaw-macos")
            or (client.id.value == "node-host" and _metadata(client.platform) == "windows")
        )
        return (
            reason == "role-upgrade"
            and self.role not in existing.roles  # never a role whose token was revoked
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
            and _role_in_force(self.core, live, self.role)
            and _token_covers(self.role, self.requested, live.scopes)
        )


def _role_in_force(core: GatewayCore, record: DeviceRecord, role: str) -> bool:
    """``listEffectivePairedDeviceRoles``: the role is approved and its device token, once
    issued, was not revoked. A revoked role is asked for again (``role-upgrade``), whatever
    the credential, as on the real gateway: ``devices revoke --role node`` keeps the node
    out until an owner approves it again."""
    if role not in record.roles:
        return False
    token = core.state.tokens.get(record.device_id, role)
    return token is None or token.active


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
