"""The connect decision (``gateway.handshake.decide``) with no socket and no database: an
in-memory state view answers its reads, and a small in-memory world carries out the effects
it yields, recording them, so each test pins what is decided and which writes are asked for,
in which order, before and after hello-ok.

The same paths over a real socket and SQLite are in ``tests/integration/gateway/server`` and side
by side with the real gateway in ``tests/interop/test_gw_rejections_side_by_side.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from gateway.handshake import ConnectRejection, validate_connect_params
from gateway.handshake import decision as d
from gateway.handshake.decide import decide
from gateway.state.records import (
    BootstrapRecord,
    DeviceRecord,
    PairingRequest,
    PendingOutcome,
    TokenRecord,
)
from openclaw_desktop.identity import DeviceIdentity, build_payload_v3, signature_token

NONCE = "0b7e3c9a-5a1f-4e55-9a55-3f0c2b7d9e11"
NOW = 1_796_023_931_231
SHARED = "shared-secret-token"
IDENTITY = DeviceIdentity.from_seed(bytes(range(32)), created_at_ms=0)
REMOTE = "192.168.1.20"


@dataclass
class Policy:
    auth_mode: Any = "token"
    token: str | None = SHARED
    password: str | None = None
    auto_approve_local: bool = True
    auth_rate_limit_loopback: bool = False


@dataclass
class MemoryView:
    """A read-only state view over plain dicts."""

    policy: Policy = field(default_factory=Policy)
    devices: dict[str, DeviceRecord] = field(default_factory=dict)
    #: (device, role) -> (the token, its record)
    tokens: dict[tuple[str, str], tuple[str, TokenRecord]] = field(default_factory=dict)
    requests: dict[str, PairingRequest] = field(default_factory=dict)
    locked_until: dict[str, int] = field(default_factory=dict)
    profiles: dict[str, str] = field(default_factory=dict)

    def retry_after_ms(self, address: str, now_ms: int) -> int | None:
        until = self.locked_until.get(address)
        return None if until is None or until <= now_ms else until - now_ms

    def device(self, device_id: str) -> DeviceRecord | None:
        return self.devices.get(device_id)

    def token(self, device_id: str, role: str) -> TokenRecord | None:
        entry = self.tokens.get((device_id, role))
        return entry[1] if entry else None

    def verify_token(self, device_id: str, role: str, token: str) -> TokenRecord | None:
        entry = self.tokens.get((device_id, role))
        if entry is None or entry[0] != token or not entry[1].active:
            return None
        return entry[1]

    def setup_profile_name(self, record: BootstrapRecord) -> str:
        return self.profiles.get(record.setup_id, record.access)

    def pairing_request(self, request_id: str, now_ms: int) -> PairingRequest | None:
        request = self.requests.get(request_id)
        return request if request is not None and request.expires_at_ms >= now_ms else None

    def pairing_requests_for(self, device_id: str, now_ms: int) -> list[PairingRequest]:
        return [r for r in self.requests.values() if r.device_id == device_id]


@dataclass
class World:
    """Carries out the decision's effects on a :class:`MemoryView`, recording them."""

    view: MemoryView
    #: setup-code token -> its record
    codes: dict[str, BootstrapRecord] = field(default_factory=dict)
    done: list[d.Effect] = field(default_factory=list)
    redeemed: dict[str, tuple[set[str], set[str]]] = field(default_factory=dict)

    def approve(self, device_id: str, key: str, role: str, scopes: list[str], via: Any) -> None:
        old = self.view.devices.get(device_id)
        roles = tuple(dict.fromkeys([*(old.roles if old else ()), role]))
        merged = tuple(dict.fromkeys([*(old.scopes if old else ()), *scopes]))
        self.view.devices[device_id] = DeviceRecord(
            device_id, key, roles, merged, via, created_at_ms=NOW, approved_at_ms=NOW
        )

    def __call__(self, effect: d.Effect) -> object:
        self.done.append(effect)
        match effect:
            case d.RedeemSetupCode():
                record = self.codes.get(effect.token)
                if record is None or not effect.admit(record):
                    return None
                effect.request(record)
                return replace(record, device_id=effect.device_id, public_key=effect.public_key)
            case d.RequestPairing(described=described):
                request = PairingRequest(
                    request_id=f"req-{len(self.view.requests) + 1}",
                    device_id=effect.device_id,
                    public_key=effect.public_key,
                    role=described.role,
                    roles=(described.role,),
                    scopes=tuple(described.scopes),
                    silent=effect.silent,
                    is_repair=False,
                    ts_ms=NOW,
                    expires_at_ms=NOW + 300_000,
                )
                self.view.requests[request.request_id] = request
                return PendingOutcome(request, created=True)
            case d.ResolvePairing():
                request = self.view.requests.pop(effect.request_id)
                self.approve(
                    request.device_id,
                    request.public_key,
                    request.role,
                    list(request.scopes),
                    "silent",
                )
                return request
            case d.ApproveDevice():
                self.approve(
                    effect.device_id,
                    effect.public_key,
                    effect.role,
                    effect.scopes,
                    effect.approved_via,
                )
            case d.IssueToken():
                token = f"issued-{effect.role}-{len(self.done)}"
                issued = TokenRecord(
                    effect.device_id, effect.role, tuple(effect.scopes), NOW, None, None, None
                )
                self.view.tokens[(effect.device_id, effect.role)] = (token, issued)
                return token
            case d.RedeemSetupLeg():
                roles, scopes = self.redeemed.setdefault(effect.record.setup_id, (set(), set()))
                roles.add(effect.role)
                scopes.update(effect.scopes)
                return frozenset(roles), frozenset(scopes)
        return None

    def kinds(self) -> list[str]:
        return [type(effect).__name__ for effect in self.done]


def _params(
    *,
    role: str = "operator",
    scopes: list[str] | None = None,
    auth: dict[str, Any] | None = None,
    client_id: str = "cli",
    mode: str = "cli",
    platform: str = "linux",
    family: str | None = None,
    device: bool = True,
) -> Any:
    scope_list = ["operator.read"] if scopes is None else scopes
    client: dict[str, Any] = {"id": client_id, "version": "1.0", "platform": platform}
    client["mode"] = mode
    if family is not None:
        client["deviceFamily"] = family
    raw: dict[str, Any] = {
        "minProtocol": 3 if role == "node" else 4,
        "maxProtocol": 4,
        "client": client,
        "role": role,
        "scopes": scope_list,
    }
    if auth is not None:
        raw["auth"] = auth
    if device:
        payload = build_payload_v3(
            device_id=IDENTITY.device_id,
            client_id=client_id,
            client_mode=mode,
            role=role,
            scopes=scope_list,
            signed_at_ms=NOW,
            token=signature_token(auth),
            nonce=NONCE,
            platform=platform,
            device_family=family,
        )
        raw["device"] = {
            "id": IDENTITY.device_id,
            "publicKey": IDENTITY.public_key,
            "signature": IDENTITY.sign(payload),
            "signedAt": NOW,
            "nonce": NONCE,
        }
    return validate_connect_params(raw)


def _context(*, local: bool = True, origin: str | None = None) -> d.ConnectContext:
    address = "127.0.0.1" if local else REMOTE
    return d.ConnectContext(
        address=address, local=local, origin=origin, host=None, nonce=NONCE, now_ms=NOW
    )


def _run(
    params: Any, world: World, ctx: d.ConnectContext | None = None
) -> d.Admitted | ConnectRejection:
    decision = decide(params, ctx or _context(), world.view)
    result: object = None
    while True:
        try:
            effect = decision.send(result)
        except StopIteration as stop:
            outcome: d.Admitted | ConnectRejection = stop.value
            return outcome
        result = world(effect)


def _admitted(outcome: d.Admitted | ConnectRejection) -> d.Admitted:
    assert isinstance(outcome, d.Admitted), outcome
    return outcome


def _rejected(outcome: d.Admitted | ConnectRejection) -> ConnectRejection:
    assert isinstance(outcome, ConnectRejection), outcome
    return outcome


def _paired(view: MemoryView, **kw: Any) -> DeviceRecord:
    fields: dict[str, Any] = {
        "roles": ("operator",),
        "scopes": ("operator.read",),
        "approved_via": "owner",
        "platform": "linux",
    }
    fields.update(kw)
    record = DeviceRecord(
        IDENTITY.device_id,
        IDENTITY.public_key,
        created_at_ms=0,
        approved_at_ms=0,
        **fields,
    )
    view.devices[record.device_id] = record
    return record


def _token(view: MemoryView, role: str, scopes: tuple[str, ...], secret: str) -> None:
    record = TokenRecord(IDENTITY.device_id, role, scopes, 1_000, 2_000, None, None)
    view.tokens[(IDENTITY.device_id, role)] = (secret, record)


# ---------------------------------------------------------------------------- shared secret


def test_new_local_device_is_approved_silently_and_gets_a_device_token() -> None:
    """Shared token, unpaired, this machine, auto-approval on: the pending request is
    approved at once and a device token is issued for hello-ok; last seen after hello."""
    world = World(MemoryView())
    admitted = _admitted(_run(_params(auth={"token": SHARED}), world))
    assert world.kinds() == [
        "LimiterReset",
        "RequestPairing",
        "ResolvePairing",
        "Broadcast",
        "IssueToken",
    ]
    request = world.done[1]
    assert isinstance(request, d.RequestPairing)
    assert request.silent and request.described.remote_ip is None
    assert admitted.role == "operator" and admitted.scopes == ["operator.read"]
    assert admitted.auth_method == "token" and admitted.device_id == IDENTITY.device_id
    assert (
        admitted.hello_auth["deviceToken"] == world.view.tokens[(IDENTITY.device_id, "operator")][0]
    )
    assert admitted.hello_auth["issuedAtMs"] == NOW
    assert admitted.after_hello == (
        d.RecordUse(IDENTITY.device_id, "operator", None, None, token_used=False),
    )


def test_new_device_without_auto_approval_gets_not_paired_with_its_request() -> None:
    """The pending request's id goes into the rejection; the request is announced."""
    world = World(MemoryView(policy=Policy(auto_approve_local=False)))
    rejection = _rejected(_run(_params(auth={"token": SHARED}), world))
    assert rejection.code == "NOT_PAIRED"
    assert rejection.details is not None
    assert rejection.details["requestId"] == "req-1"
    assert rejection.details["reason"] == "not-paired"
    assert world.kinds() == ["LimiterReset", "RequestPairing", "Broadcast"]
    announced = world.done[-1]
    assert isinstance(announced, d.Broadcast) and announced.event == "device.pair.requested"


def test_remote_device_is_never_approved_silently_and_its_address_is_stored() -> None:
    world = World(MemoryView())
    rejection = _rejected(_run(_params(auth={"token": SHARED}), world, _context(local=False)))
    assert rejection.code == "NOT_PAIRED"
    request = world.done[1]
    assert isinstance(request, d.RequestPairing)
    assert not request.silent and request.described.remote_ip == REMOTE


def test_paired_device_with_a_changed_platform_needs_re_approval() -> None:
    world = World(MemoryView(policy=Policy(auto_approve_local=False)))
    _paired(world.view, platform="darwin")
    rejection = _rejected(_run(_params(auth={"token": SHARED}), world))
    assert rejection.details is not None
    assert rejection.details["reason"] == "metadata-upgrade"


def test_wider_scopes_on_shared_secret_are_approved_silently_on_this_machine() -> None:
    """A scope upgrade on loopback with a shared secret: approved without asking."""
    world = World(MemoryView())
    _paired(world.view)
    scopes = ["operator.read", "operator.write"]
    admitted = _admitted(_run(_params(scopes=scopes, auth={"token": SHARED}), world))
    assert admitted.scopes == scopes
    assert "operator.write" in world.view.devices[IDENTITY.device_id].scopes


def test_wrong_shared_token_is_counted_against_a_remote_address() -> None:
    world = World(MemoryView())
    ctx = _context(local=False)
    rejection = _rejected(_run(_params(auth={"token": "wrong"}), world, ctx))
    assert rejection.code == "INVALID_REQUEST"
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_TOKEN_MISMATCH"
    assert world.done == [d.LimiterFailure(REMOTE, NOW)]


def test_wrong_shared_token_on_loopback_is_not_rate_limited() -> None:
    world = World(MemoryView())
    rejection = _rejected(_run(_params(auth={"token": "wrong"}), world))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_TOKEN_MISMATCH"
    assert world.done == []


def test_a_locked_address_is_refused_before_anything_is_written() -> None:
    world = World(MemoryView(locked_until={REMOTE: NOW + 5_000}))
    rejection = _rejected(_run(_params(auth={"token": SHARED}), world, _context(local=False)))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_RATE_LIMITED"
    assert world.done == []


# ---------------------------------------------------------------------------- device token


def test_device_token_is_handed_back_and_its_use_recorded_after_hello() -> None:
    world = World(MemoryView())
    _paired(world.view)
    _token(world.view, "operator", ("operator.read",), "dev-tok")
    admitted = _admitted(_run(_params(auth={"deviceToken": "dev-tok"}), world))
    assert admitted.auth_method == "device-token"
    assert admitted.hello_auth == {
        "method": "device-token",
        "role": "operator",
        "scopes": ["operator.read"],
        "deviceToken": "dev-tok",
        "issuedAtMs": 2_000,
    }
    assert world.kinds() == ["LimiterReset"]  # nothing issued, nothing approved
    assert admitted.after_hello == (
        d.RecordUse(IDENTITY.device_id, "operator", None, None, token_used=True),
    )


def test_device_token_never_widens_itself() -> None:
    world = World(MemoryView())
    _paired(world.view, scopes=("operator.read", "operator.write"))
    _token(world.view, "operator", ("operator.read",), "dev-tok")
    params = _params(scopes=["operator.write"], auth={"deviceToken": "dev-tok"})
    rejection = _rejected(_run(params, world, _context(local=False)))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_SCOPE_MISMATCH"
    assert world.done == [d.LimiterFailure(REMOTE, NOW)]


def test_unknown_device_token_is_a_device_token_mismatch() -> None:
    world = World(MemoryView())
    _paired(world.view)
    _token(world.view, "operator", ("operator.read",), "dev-tok")
    rejection = _rejected(_run(_params(auth={"deviceToken": "other"}), world))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_DEVICE_TOKEN_MISMATCH"


def test_revoked_role_is_asked_for_again_whatever_the_credential() -> None:
    world = World(MemoryView(policy=Policy(auto_approve_local=False)))
    _paired(world.view)
    world.view.tokens[(IDENTITY.device_id, "operator")] = (
        "old",
        TokenRecord(IDENTITY.device_id, "operator", ("operator.read",), 1, None, 5, None),
    )
    rejection = _rejected(_run(_params(auth={"token": SHARED}), world))
    assert rejection.details is not None
    assert rejection.details["reason"] == "role-upgrade"


# ---------------------------------------------------------------------------- setup codes


def _code(setup_id: str = "setup-1", access: Any = "limited") -> BootstrapRecord:
    return BootstrapRecord(
        setup_id=setup_id, access=access, issued_at_ms=NOW - 1_000, expires_at_ms=NOW + 60_000
    )


def test_setup_code_hand_off_to_the_phone_app() -> None:
    """The official Android app redeeming a limited code as a node: approved by the code,
    a node token and the bounded operator token in ``deviceTokens``, the code used up, and
    its delivery confirmed once hello-ok went out."""
    world = World(MemoryView(), codes={"boot": _code()})
    params = _params(
        role="node",
        scopes=[],
        auth={"bootstrapToken": "boot"},
        client_id="openclaw-android",
        mode="node",
        platform="android 15",
        family="Android",
    )
    admitted = _admitted(_run(params, world, _context(local=False)))
    assert world.kinds() == [
        "RedeemSetupCode",
        "LimiterReset",
        "ApproveDevice",  # the node role, by the code
        "IssueToken",
        "ApproveDevice",  # the operator role of the hand-off
        "IssueToken",
        "ConsumeSetupCode",
    ]
    assert admitted.auth_method == "bootstrap-token" and admitted.role == "node"
    (operator,) = admitted.hello_auth["deviceTokens"]
    assert operator["role"] == "operator"
    assert "operator.admin" not in operator["scopes"]
    assert "operator.pairing" not in operator["scopes"]
    assert admitted.after_hello[0] == d.ConfirmSetupDelivery("setup-1")
    assert isinstance(admitted.after_hello[1], d.RecordUse)


def test_setup_code_for_another_client_goes_through_pairing_and_is_kept() -> None:
    """A CLI redeeming a code as an operator: normal (here silent, local) pairing; the code
    is not used up by an operator-only connect (its node role is still to come)."""
    world = World(MemoryView(), codes={"boot": _code()})
    admitted = _admitted(_run(_params(auth={"bootstrapToken": "boot"}), world))
    assert admitted.auth_method == "bootstrap-token"
    kinds = world.kinds()
    assert kinds[:3] == ["RedeemSetupCode", "LimiterReset", "RequestPairing"]
    assert kinds[-2:] == ["IssueToken", "RedeemSetupLeg"]
    assert "ConsumeSetupCode" not in kinds


def test_setup_code_outside_its_profile_is_refused_like_a_bad_code() -> None:
    world = World(MemoryView(), codes={"boot": _code()})
    params = _params(scopes=["operator.admin"], auth={"bootstrapToken": "boot"})
    rejection = _rejected(_run(params, world, _context(local=False)))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_BOOTSTRAP_TOKEN_INVALID"
    assert world.kinds() == ["RedeemSetupCode", "LimiterFailure"]


def test_unknown_setup_code_is_refused() -> None:
    world = World(MemoryView())
    rejection = _rejected(_run(_params(auth={"bootstrapToken": "nope"}), world))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_BOOTSTRAP_TOKEN_INVALID"


# ---------------------------------------------------------------------------- desktop node


def test_the_desktop_apps_own_node_is_approved_silently() -> None:
    """The deliberate difference: this machine's node connect of the window's device."""
    world = World(MemoryView())
    _paired(world.view, approved_via="silent")
    params = _params(
        role="node", scopes=[], auth={"token": SHARED}, client_id="openclaw-linux", mode="node"
    )
    admitted = _admitted(_run(params, world))
    assert admitted.role == "node" and admitted.scopes == []
    assert world.view.devices[IDENTITY.device_id].roles == ("operator", "node")


def test_another_node_upgrade_asks_the_owner() -> None:
    world = World(MemoryView())
    _paired(world.view, approved_via="owner")
    params = _params(
        role="node", scopes=[], auth={"token": SHARED}, client_id="openclaw-linux", mode="node"
    )
    rejection = _rejected(_run(params, world))
    assert rejection.details is not None
    assert rejection.details["reason"] == "role-upgrade"


# ---------------------------------------------------------------------------- no device


def test_deviceless_local_operator_with_the_shared_token() -> None:
    world = World(MemoryView())
    admitted = _admitted(_run(_params(auth={"token": SHARED}, device=False), world))
    assert admitted.device_id is None and admitted.scopes == ["operator.read"]
    assert admitted.hello_auth == {
        "method": "token",
        "role": "operator",
        "scopes": ["operator.read"],
    }
    assert world.kinds() == ["LimiterReset"] and admitted.after_hello == ()


def test_deviceless_with_an_origin_gets_no_scopes() -> None:
    world = World(MemoryView())
    ctx = _context(origin="http://127.0.0.1:1234")
    outcome = _run(_params(auth={"token": SHARED}, device=False), world, ctx)
    assert _admitted(outcome).scopes == []


def test_deviceless_from_another_host_needs_a_device_identity() -> None:
    world = World(MemoryView())
    params = _params(auth={"token": SHARED}, device=False)
    rejection = _rejected(_run(params, world, _context(local=False)))
    assert rejection.details is not None
    assert rejection.details["code"] == "DEVICE_IDENTITY_REQUIRED"
    assert world.done == []


def test_deviceless_wrong_token_is_a_token_mismatch() -> None:
    world = World(MemoryView())
    params = _params(auth={"token": "wrong"}, device=False)
    rejection = _rejected(_run(params, world, _context(local=False)))
    assert rejection.details is not None
    assert rejection.details["code"] == "AUTH_TOKEN_MISMATCH"
    assert world.done == [d.LimiterFailure(REMOTE, NOW)]


def test_a_bad_device_proof_is_refused_before_any_write() -> None:
    world = World(MemoryView())
    wrong = d.ConnectContext(
        address="127.0.0.1", local=True, origin=None, host=None, nonce="other", now_ms=NOW
    )
    rejection = _rejected(_run(_params(auth={"token": SHARED}), world, wrong))
    assert rejection.details is not None
    assert rejection.details["code"] == "DEVICE_AUTH_NONCE_MISMATCH"
    assert world.done == []
