"""Unit tests for the sans-I/O GatewayClientProtocol: frames in, frames and events out."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.errors import (
    AuthError,
    ConnectionClosed,
    GatewayError,
    InvalidState,
    MissingScope,
    PairingRequired,
    PayloadTooLarge,
    ProtocolError,
    ProtocolMismatch,
    RequestOutcomeUnknown,
    RequestTimeout,
)
from openclaw_desktop.identity import (
    DeviceIdentity,
    build_payload_v3,
    signature_token,
    verify_signature,
)
from openclaw_desktop.protocol import (
    MAX_PREAUTH_PAYLOAD_BYTES,
    ClientId,
    ClientMode,
    ConnectParams,
    Role,
)
from openclaw_desktop.session import (
    CloseRequested,
    Credentials,
    EventReceived,
    HandshakeComplete,
    HandshakeFailed,
    LateResponse,
    ProtocolViolation,
    RequestFailed,
    ResponseReceived,
    SequenceGap,
    SessionState,
)
from openclaw_desktop.session.protocol import (
    AUTHENTICATING,
    AWAITING_CHALLENGE,
    CANCELLED_IDS_KEPT,
    CLOSED,
    CLOSING,
    READY,
    TICK_TIMEOUT_CLOSE_CODE,
)
from tests.helpers.session_builders import (
    NONCE,
    OPERATOR_SCOPES,
    TS,
    challenge_bytes,
    client_info,
    event_bytes,
    hello_payload,
    load_fixture,
    make_core,
    make_plan,
    ready_core,
    res_bytes,
    sent_frames,
)


@pytest.fixture(scope="module")
def identity() -> DeviceIdentity:
    """One Ed25519 device identity for the module."""
    return DeviceIdentity.generate(now_ms=1)


def connect_params_of(frame: dict[str, Any]) -> ConnectParams:
    """The params of a sent connect frame, checked against the closed model."""
    assert frame["type"] == "req"
    assert frame["method"] == "connect"
    return ConnectParams.model_validate(frame["params"])


def expected_payload(params: ConnectParams) -> str:
    """Rebuild, from what was sent, the v3 string the gateway will verify."""
    assert params.device is not None
    return build_payload_v3(
        device_id=params.device.id,
        client_id=params.client.id.value,
        client_mode=params.client.mode.value,
        role=params.role or "",
        scopes=params.scopes or [],
        signed_at_ms=params.device.signed_at,
        token=signature_token(params.auth.to_wire() if params.auth else None),
        nonce=params.device.nonce,
        platform=params.client.platform,
        device_family=params.client.device_family,
    )


# ---------------------------------------------------------------- handshake


def test_new_core_waits_for_the_challenge() -> None:
    """A fresh core sends nothing and waits for connect.challenge until its timeout."""
    core = make_core(now=100.0, challenge_timeout_s=5.0)
    assert core.state is AWAITING_CHALLENGE
    assert core.data_to_send() == []
    assert core.events_received() == []
    assert core.next_deadline() == 105.0
    assert core.max_payload == MAX_PREAUTH_PAYLOAD_BYTES
    assert core.hello is None


def test_challenge_produces_a_signed_connect(identity: DeviceIdentity) -> None:
    """The connect frame carries a device proof that verifies and echoes the challenge."""
    core = make_core(make_plan(signer=identity), now=0.0, connect_timeout_s=12.0)
    core.receive_data(challenge_bytes(), 1.5)
    (frame,) = sent_frames(core)
    assert frame["id"] == "r1"
    params = connect_params_of(frame)
    assert params.device is not None
    assert params.device.signed_at == TS
    assert params.device.nonce == NONCE
    assert params.device.id == identity.device_id
    assert params.device.public_key == identity.public_key
    assert params.role == "operator"
    assert params.scopes == list(OPERATOR_SCOPES)
    assert params.auth is not None
    assert params.auth.token == "shared-tok"
    assert verify_signature(
        identity.public_key_raw, expected_payload(params), params.device.signature
    )
    assert core.state is AUTHENTICATING
    assert core.challenge is not None
    assert core.challenge.nonce == NONCE
    assert core.next_deadline() == 13.5
    assert core.events_received() == []


def test_signature_binds_the_normalised_platform_and_family(identity: DeviceIdentity) -> None:
    """The v3 proof covers platform and deviceFamily, lowercased; changing them breaks it."""
    client = client_info(platform=" Linux ", device_family="Desktop")
    core = make_core(make_plan(signer=identity, client=client))
    core.receive_data(challenge_bytes(), 0.0)
    params = connect_params_of(sent_frames(core)[0])
    payload = expected_payload(params)
    assert payload.endswith("|linux|desktop")
    assert verify_signature(identity.public_key_raw, payload, params.device.signature)  # type: ignore[union-attr]
    tampered = payload.replace("|linux|desktop", "|windows|desktop")
    assert not verify_signature(identity.public_key_raw, tampered, params.device.signature)  # type: ignore[union-attr]


def test_node_connect_declares_its_surface(identity: DeviceIdentity) -> None:
    """A node plan sends role node, no scopes, and its commands, caps, permissions and pathEnv."""
    plan = make_plan(
        signer=identity,
        role=Role.NODE,
        commands=("device.info", "system.notify"),
        caps=("device", "system"),
        permissions={"notifications": True},
        path_env="/usr/bin:/bin",
    )
    core = make_core(plan)
    core.receive_data(challenge_bytes(nonce="node-nonce", ts=5), 0.0)
    params = connect_params_of(sent_frames(core)[0])
    assert params.client.id is ClientId.NODE_HOST
    assert params.client.mode is ClientMode.NODE
    assert params.role == "node"
    assert params.scopes == []
    assert params.commands == ["device.info", "system.notify"]
    assert params.caps == ["device", "system"]
    assert params.permissions == {"notifications": True}
    assert params.path_env == "/usr/bin:/bin"
    payload = expected_payload(params)
    assert "|node|node||5|shared-tok|node-nonce|" in payload
    assert verify_signature(identity.public_key_raw, payload, params.device.signature)  # type: ignore[union-attr]


def test_connect_without_signer_has_no_device() -> None:
    """Without an identity the connect frame carries no device proof."""
    core = make_core(make_plan(signer=None))
    core.receive_data(challenge_bytes(), 0.0)
    params = connect_params_of(sent_frames(core)[0])
    assert params.device is None


def test_hello_ok_completes_the_handshake() -> None:
    """The real hello-ok makes the session READY and applies its policy."""
    core = make_core(now=0.0)
    core.receive_data(challenge_bytes(), 1.0)
    (connect,) = sent_frames(core)
    core.receive_data(res_bytes(connect["id"], payload=hello_payload()), 2.0)
    (event,) = core.events_received()
    assert isinstance(event, HandshakeComplete)
    assert event.hello.server.conn_id == "cf2740e9-b9c4-482f-8b0b-f0381cc2a901"
    assert core.hello is event.hello
    assert core.state is READY
    assert core.max_payload == 26214400
    assert core.tick_interval_s == 30.0
    assert core.next_deadline() == 62.0
    assert core.data_to_send() == []


def test_states_are_ordered() -> None:
    """SessionState is ordered so 'state >= CLOSING' means the session is over."""
    assert list(SessionState) == [AWAITING_CHALLENGE, AUTHENTICATING, READY, CLOSING, CLOSED]
    assert CLOSED > CLOSING > READY


@pytest.mark.parametrize(
    "payload",
    [
        {"nonce": NONCE},
        {"nonce": NONCE, "ts": str(TS)},
        {"nonce": NONCE, "ts": -1},
        {"nonce": NONCE, "ts": 1.5},
        {"nonce": NONCE, "ts": True},
        {"ts": TS},
        {"nonce": "", "ts": TS},
        None,
        [NONCE, TS],
        "challenge",
    ],
    ids=[
        "no-ts",
        "string-ts",
        "negative-ts",
        "float-ts",
        "bool-ts",
        "no-nonce",
        "empty-nonce",
        "no-payload",
        "list-payload",
        "string-payload",
    ],
)
def test_bad_challenge_fails_the_handshake(payload: Any) -> None:
    """A malformed challenge: HandshakeFailed(ProtocolError), close 1002, nothing sent."""
    core = make_core()
    core.receive_data(event_bytes("connect.challenge", payload), 0.5)
    failed, close = core.events_received()
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, ProtocolError)
    assert "invalid connect.challenge" in str(failed.error)
    assert isinstance(close, CloseRequested)
    assert close.code == 1002
    assert len(close.reason) <= 120
    assert core.state is CLOSING
    assert core.data_to_send() == []


def test_challenge_timeout() -> None:
    """No challenge within the timeout fails the handshake and asks for a close."""
    core = make_core(now=10.0, challenge_timeout_s=15.0)
    core.advance(24.999)
    assert core.events_received() == []
    core.advance(25.0)
    failed, close = core.events_received()
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, ProtocolError)
    assert str(failed.error) == "no connect.challenge within 15s"
    assert close == CloseRequested(1000, "no connect.challenge within 15s")
    assert core.state is CLOSING
    core.advance(100.0)
    assert core.events_received() == []


def test_connect_response_timeout() -> None:
    """No answer to connect within its timeout fails the handshake with RequestTimeout."""
    core = make_core(now=0.0, connect_timeout_s=15.0)
    core.receive_data(challenge_bytes(), 2.0)
    core.data_to_send()
    core.advance(16.9)
    assert core.events_received() == []
    core.advance(17.0)
    failed, close = core.events_received()
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, RequestTimeout)
    assert failed.error.method == "connect"
    assert failed.error.timeout_s == 15.0
    assert isinstance(close, CloseRequested)
    assert close.code == 1000
    assert core.state is CLOSING


REJECTIONS = {row["case"]: row["frame"]["error"] for row in load_fixture("connect_rejections.json")}


def reject(case: str) -> tuple[HandshakeFailed, Any]:
    """Run a handshake that the gateway answers with the named real rejection."""
    core = make_core()
    core.receive_data(challenge_bytes(), 0.0)
    (connect,) = sent_frames(core)
    core.receive_data(res_bytes(connect["id"], ok=False, error=REJECTIONS[case]), 0.1)
    events = core.events_received()
    assert len(events) == 1
    assert isinstance(events[0], HandshakeFailed)
    assert core.state is CLOSING
    return events[0], core


def test_rejection_token_mismatch_is_an_auth_error() -> None:
    """AUTH_TOKEN_MISMATCH arrives as AuthError with its details."""
    failed, _ = reject("wrong shared token")
    assert isinstance(failed.error, AuthError)
    assert failed.error.detail_code == "AUTH_TOKEN_MISMATCH"
    assert failed.error.detail("canRetryWithDeviceToken") is True
    assert failed.error.method == "connect"


def test_rejection_not_paired_is_pairing_required() -> None:
    """NOT_PAIRED/PAIRING_REQUIRED arrives as PairingRequired with the request id."""
    failed, _ = reject("unpaired device")
    assert isinstance(failed.error, PairingRequired)
    assert failed.error.code == "NOT_PAIRED"
    assert failed.error.request_id == "4ac5dcae-…"
    assert failed.error.approve_command == "openclaw devices approve 4ac5dcae-…"


def test_rejection_protocol_mismatch() -> None:
    """PROTOCOL_MISMATCH arrives as ProtocolMismatch."""
    failed, _ = reject("protocol mismatch")
    assert isinstance(failed.error, ProtocolMismatch)
    assert failed.error.detail("expectedProtocol") == 4


@pytest.mark.parametrize("case", list(REJECTIONS))
def test_every_real_rejection_fails_the_handshake(case: str) -> None:
    """Each real rejection ends the handshake; later frames are ignored."""
    failed, core = reject(case)
    assert isinstance(failed.error, GatewayError)
    assert failed.error.message == REJECTIONS[case]["message"]
    core.receive_data(event_bytes("tick", {"ts": 1}), 0.2)
    assert core.events_received() == []
    with pytest.raises(InvalidState):
        core.send_request("health")


def test_invalid_hello_ok_fails_the_handshake() -> None:
    """ok:true with a payload that is not a hello-ok is a protocol error (close 1002)."""
    core = make_core()
    core.receive_data(challenge_bytes(), 0.0)
    (connect,) = sent_frames(core)
    core.receive_data(res_bytes(connect["id"], payload={"type": "hello-ok"}), 0.1)
    failed, close = core.events_received()
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, ProtocolError)
    assert "invalid hello-ok" in str(failed.error)
    assert close.code == 1002  # type: ignore[union-attr]
    assert core.state is CLOSING


def test_events_before_hello_are_passed_through() -> None:
    """An event while authenticating is delivered (its seq is not tracked yet)."""
    core = make_core()
    core.receive_data(challenge_bytes(), 0.0)
    core.receive_data(event_bytes("health", {"ok": True}, seq=9), 0.1)
    assert core.events_received() == [EventReceived("health", {"ok": True}, 9, None)]
    assert core.state is AUTHENTICATING


def test_event_before_challenge_is_a_violation() -> None:
    """Any event other than the challenge before it is dropped and reported."""
    core = make_core()
    core.receive_data(event_bytes("tick", {"ts": 1}), 0.0)
    (violation,) = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "event-before-challenge"
    assert core.state is AWAITING_CHALLENGE


def test_second_challenge_is_a_violation() -> None:
    """A repeated challenge does not produce a second connect."""
    core = make_core()
    core.receive_data(challenge_bytes(), 0.0)
    sent_frames(core)
    core.receive_data(challenge_bytes(nonce="other"), 0.1)
    (violation,) = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "duplicate-challenge"
    assert core.data_to_send() == []
    assert core.state is AUTHENTICATING
    assert core.challenge is not None
    assert core.challenge.nonce == NONCE


def test_response_for_another_id_during_handshake() -> None:
    """A res that is not for connect leaves the handshake waiting."""
    core = make_core()
    core.receive_data(challenge_bytes(), 0.0)
    sent_frames(core)
    core.receive_data(res_bytes("not-connect", payload=hello_payload()), 0.1)
    (violation,) = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "unknown-response"
    assert core.state is AUTHENTICATING


@pytest.mark.parametrize("before_challenge", [True, False])
def test_connection_lost_during_handshake(before_challenge: bool) -> None:
    """Losing the socket mid-handshake reports HandshakeFailed(ConnectionClosed)."""
    core = make_core()
    if not before_challenge:
        core.receive_data(challenge_bytes(), 0.0)
        sent_frames(core)
    core.connection_lost(1008, "pairing required")
    (failed,) = core.events_received()
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, ConnectionClosed)
    assert failed.error.code == 1008
    assert failed.error.reason == "pairing required"
    assert core.state is CLOSED
    assert core.next_deadline() is None


def test_connect_frame_over_the_preauth_cap_fails_locally() -> None:
    """A connect frame bigger than the pre-auth cap is not sent; the handshake fails."""
    core = make_core(make_plan(role=Role.NODE, path_env="x" * MAX_PREAUTH_PAYLOAD_BYTES))
    core.receive_data(challenge_bytes(), 0.0)
    failed, close = core.events_received()
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, PayloadTooLarge)
    assert failed.error.limit == MAX_PREAUTH_PAYLOAD_BYTES
    assert failed.error.size > MAX_PREAUTH_PAYLOAD_BYTES
    assert isinstance(close, CloseRequested)
    assert core.data_to_send() == []
    assert core.state is CLOSING


def test_connect_frame_under_the_preauth_cap_is_sent() -> None:
    """A large but allowed connect frame goes out."""
    core = make_core(make_plan(role=Role.NODE, path_env="x" * 60_000))
    core.receive_data(challenge_bytes(), 0.0)
    (frame,) = core.data_to_send()
    assert 60_000 < len(frame) <= MAX_PREAUTH_PAYLOAD_BYTES
    assert core.state is AUTHENTICATING


# ---------------------------------------------------------------- requests


@pytest.mark.parametrize("stage", ["awaiting", "authenticating", "closing", "closed"])
def test_send_request_before_ready_is_invalid_state(stage: str) -> None:
    """Requests are refused outside READY, with an error that is also an AssertionError."""
    core = make_core()
    if stage == "authenticating":
        core.receive_data(challenge_bytes(), 0.0)
    elif stage == "closing":
        core.close()
    elif stage == "closed":
        core.connection_lost(None, "")
    with pytest.raises(InvalidState, match="cannot send 'health'"):
        core.send_request("health")
    with pytest.raises(AssertionError):
        core.send_request("health")


def test_send_request_frame_shape() -> None:
    """A request is {type:req, id, method, params?}; None params are left out."""
    core = ready_core()
    first = core.send_request("health")
    second = core.send_request("chat.send", {"sessionKey": "main"})
    assert sent_frames(core) == [
        {"type": "req", "id": first, "method": "health"},
        {"type": "req", "id": second, "method": "chat.send", "params": {"sessionKey": "main"}},
    ]
    assert first != second
    assert core.pending_count == 2


def test_responses_are_correlated_by_id_in_any_order() -> None:
    """Out-of-order responses each reach the right request."""
    core = ready_core()
    a = core.send_request("status")
    b = core.send_request("node.list")
    core.receive_data(res_bytes(b, payload={"nodes": []}), 1.0)
    core.receive_data(res_bytes(a, payload={"ok": True}), 1.1)
    assert core.events_received() == [
        ResponseReceived(b, "node.list", True, {"nodes": []}, None),
        ResponseReceived(a, "status", True, {"ok": True}, None),
    ]
    assert core.pending_count == 0


def test_error_response_carries_a_typed_gateway_error() -> None:
    """ok:false becomes ResponseReceived with the most specific GatewayError."""
    core = ready_core()
    rid = core.send_request("config.set", {"k": 1})
    error = {
        "code": "FORBIDDEN",
        "message": "missing scope: operator.admin",
        "details": {"code": "MISSING_SCOPE", "missingScope": "operator.admin"},
    }
    core.receive_data(res_bytes(rid, ok=False, error=error), 1.0)
    (response,) = core.events_received()
    assert isinstance(response, ResponseReceived)
    assert response.ok is False
    assert isinstance(response.error, MissingScope)
    assert response.error.missing_scope == "operator.admin"
    assert response.error.method == "config.set"


def test_error_response_without_error_object() -> None:
    """ok:false without an error still gives a GatewayError (code UNKNOWN)."""
    core = ready_core()
    rid = core.send_request("status")
    core.receive_data(res_bytes(rid, ok=False), 1.0)
    (response,) = core.events_received()
    assert isinstance(response, ResponseReceived)
    assert isinstance(response.error, GatewayError)
    assert response.error.code == "UNKNOWN"


def test_second_response_for_the_same_id_is_a_violation() -> None:
    """A request is answered once; a repeat is dropped and reported."""
    core = ready_core()
    rid = core.send_request("status")
    core.receive_data(res_bytes(rid, payload=1), 1.0)
    core.receive_data(res_bytes(rid, payload=2), 1.1)
    response, violation = core.events_received()
    assert isinstance(response, ResponseReceived)
    assert response.payload == 1
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "unknown-response"


def test_request_timeout_sends_cancel_and_fails_the_request() -> None:
    """At the deadline the request fails with RequestTimeout and a cancel frame goes out."""
    core = ready_core(now=10.0)
    rid = core.send_request("chat.history", {"limit": 5}, timeout_s=5.0)
    sent_frames(core)
    assert core.next_deadline() == 15.0
    core.advance(14.999)
    assert core.events_received() == []
    core.advance(15.0)
    (failed,) = core.events_received()
    assert isinstance(failed, RequestFailed)
    assert failed.request_id == rid
    assert failed.method == "chat.history"
    assert isinstance(failed.error, RequestTimeout)
    assert failed.error.timeout_s == 5.0
    assert str(failed.error) == "chat.history: no response within 5s"
    assert sent_frames(core) == [{"type": "cancel", "id": rid}]
    assert core.pending_count == 0
    assert core.state is READY


#: What the real gateway 2026.9.6 answers a ``cancel`` frame with (it has no such type).
REAL_CANCEL_ANSWER = {"code": "INVALID_REQUEST", "message": "invalid request frame"}


def test_late_answers_to_a_timed_out_request_are_dropped_quietly() -> None:
    """Both answers the real gateway sends after a timeout, the cancel's INVALID_REQUEST and
    the original's late result, are LateResponse (debug), not protocol violations."""
    core = ready_core(now=10.0)
    rid = core.send_request("node.invoke", {"nodeId": "n"}, timeout_s=5.0)
    sent_frames(core)
    core.advance(15.0)
    assert isinstance(core.events_received()[0], RequestFailed)
    assert sent_frames(core) == [{"type": "cancel", "id": rid}]
    core.receive_data(res_bytes(rid, ok=False, error=REAL_CANCEL_ANSWER), 15.1)
    core.receive_data(res_bytes(rid, payload={"late": True}), 40.0)
    assert core.events_received() == [
        LateResponse(rid, "node.invoke", False, "INVALID_REQUEST"),
        LateResponse(rid, "node.invoke", True, None),
    ]
    assert core.violations == {}
    assert core.state is READY
    # A response for an id we never sent is still a violation.
    core.receive_data(res_bytes("never-sent", payload={}), 40.1)
    (violation,) = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "unknown-response"


def test_cancelled_ids_are_remembered_up_to_a_bound() -> None:
    """Only the most recent CANCELLED_IDS_KEPT given-up ids are kept; older answers are
    unknown again (the set cannot grow without bound on a long-lived session)."""
    core = ready_core(now=0.0)
    ids = [core.send_request("m", timeout_s=1.0) for _ in range(CANCELLED_IDS_KEPT + 1)]
    core.advance(1.0)
    core.events_received()
    core.receive_data(res_bytes(ids[-1], payload=1), 1.1)
    assert isinstance(core.events_received()[0], LateResponse)
    core.receive_data(res_bytes(ids[0], payload=1), 1.2)
    (violation,) = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "unknown-response"


def test_default_request_timeout() -> None:
    """Without timeout_s the core's default applies."""
    core = ready_core(now=0.0, default_timeout_s=7.0)
    core.send_request("status")
    assert core.next_deadline() == 7.0


def test_zero_timeout_waits_for_ever() -> None:
    """timeout_s=0 sets no deadline: only the tick watchdog remains."""
    core = ready_core(now=0.0)
    core.send_request("status", timeout_s=0)
    assert core.next_deadline() == 60.0
    core.advance(59.0)
    assert core.events_received() == []
    assert core.pending_count == 1


def test_request_deadline_counts_from_the_send_time() -> None:
    """With now= the deadline is measured from the send, not from the last inbound frame."""
    core = ready_core(now=0.0)
    stale = core.send_request("status", timeout_s=30.0)
    fresh = core.send_request("status", timeout_s=30.0, now=25.0)
    core.advance(30.0)
    (failed,) = core.events_received()
    assert isinstance(failed, RequestFailed)
    assert failed.request_id == stale
    assert core.next_deadline() == 55.0
    core.receive_data(res_bytes(fresh, payload=None), 54.0)
    (ok,) = core.events_received()
    assert isinstance(ok, ResponseReceived)


def test_several_requests_time_out_together() -> None:
    """All requests past their deadline fail in one advance, each with its cancel."""
    core = ready_core(now=0.0)
    a = core.send_request("a", timeout_s=1)
    b = core.send_request("b", timeout_s=2)
    c = core.send_request("c", timeout_s=10)
    sent_frames(core)
    core.advance(3.0)
    failed = core.events_received()
    assert [e.request_id for e in failed] == [a, b]  # type: ignore[union-attr]
    assert sent_frames(core) == [{"type": "cancel", "id": a}, {"type": "cancel", "id": b}]
    assert core.pending_count == 1
    assert core.next_deadline() == 10.0
    assert c


def test_abandon_request_sends_cancel() -> None:
    """Abandoning a pending request forgets it and tells the gateway."""
    core = ready_core()
    rid = core.send_request("chat.send", {"m": 1})
    sent_frames(core)
    core.abandon_request(rid)
    assert sent_frames(core) == [{"type": "cancel", "id": rid}]
    assert core.pending_count == 0
    core.receive_data(res_bytes(rid, ok=False, error=REAL_CANCEL_ANSWER), 1.0)
    core.receive_data(res_bytes(rid, payload={}), 1.0)
    assert core.events_received() == [
        LateResponse(rid, "chat.send", False, "INVALID_REQUEST"),
        LateResponse(rid, "chat.send", True, None),
    ]
    assert core.violations == {}


def test_abandon_unknown_or_after_close_sends_nothing() -> None:
    """Abandoning an unknown id, or after the session ended, writes no cancel."""
    core = ready_core()
    core.abandon_request("nope")
    assert core.data_to_send() == []
    rid = core.send_request("status")
    sent_frames(core)
    core.close()
    core.abandon_request(rid)
    assert core.data_to_send() == []


def test_connection_lost_fails_pending_requests_as_outcome_unknown() -> None:
    """Requests in flight when the socket drops fail with RequestOutcomeUnknown."""
    core = ready_core()
    a = core.send_request("chat.send", {"m": 1})
    b = core.send_request("status")
    core.connection_lost(1006, "")
    events = core.events_received()
    assert [(e.request_id, e.method) for e in events] == [(a, "chat.send"), (b, "status")]  # type: ignore[union-attr]
    for event in events:
        assert isinstance(event, RequestFailed)
        assert isinstance(event.error, RequestOutcomeUnknown)
        assert "connection closed (1006)" in str(event.error)
    assert core.pending_count == 0
    assert core.state is CLOSED
    core.connection_lost(1006, "")
    assert core.events_received() == []


def test_connection_lost_when_ready_reports_no_handshake_failure() -> None:
    """After hello-ok, losing the socket with nothing pending reports nothing."""
    core = ready_core()
    core.connection_lost(None, "")
    assert core.events_received() == []
    core.receive_data(event_bytes("tick", {"ts": 1}), 1.0)
    core.advance(1000.0)
    assert core.events_received() == []


# ---------------------------------------------------------------- events and seq


def test_event_is_delivered_with_seq_and_state_version() -> None:
    """Events after hello-ok come out as EventReceived with all their fields."""
    core = ready_core()
    core.receive_data(
        event_bytes("presence", [{"host": "vm"}], seq=1, stateVersion={"presence": 2}), 1.0
    )
    assert core.events_received() == [
        EventReceived("presence", [{"host": "vm"}], 1, {"presence": 2})
    ]


def test_seq_gap_is_reported_then_delivery_continues() -> None:
    """A jump in seq reports SequenceGap before the event, and later events flow normally."""
    core = ready_core()
    for seq in (1, 2, 5, 6):
        core.receive_data(event_bytes("chat", {"n": seq}, seq=seq), float(seq))
    events = core.events_received()
    assert events == [
        EventReceived("chat", {"n": 1}, 1, None),
        EventReceived("chat", {"n": 2}, 2, None),
        SequenceGap(expected=3, received=5),
        EventReceived("chat", {"n": 5}, 5, None),
        EventReceived("chat", {"n": 6}, 6, None),
    ]


def test_first_seq_can_start_anywhere() -> None:
    """The first seq seen sets the baseline; it is not a gap."""
    core = ready_core()
    core.receive_data(event_bytes("tick", {"ts": 1}, seq=41), 1.0)
    core.receive_data(event_bytes("tick", {"ts": 2}, seq=42), 2.0)
    assert not any(isinstance(e, SequenceGap) for e in core.events_received())


@pytest.mark.parametrize("seqs", [(3, 3, 4), (5, 3, 4, 6), (2, 1, 3)])
def test_duplicate_or_out_of_order_seq_is_not_a_gap(seqs: tuple[int, ...]) -> None:
    """Repeated or older seqs are delivered without a gap and do not move the baseline back."""
    core = ready_core()
    for seq in seqs:
        core.receive_data(event_bytes("tick", {}, seq=seq), 1.0)
    events = core.events_received()
    assert [e.seq for e in events] == list(seqs)  # type: ignore[union-attr]
    assert all(isinstance(e, EventReceived) for e in events)


def test_events_without_seq_do_not_disturb_tracking() -> None:
    """Node-directed events carry no seq; they neither cause nor hide gaps."""
    core = ready_core()
    core.receive_data(event_bytes("tick", {}, seq=1), 1.0)
    core.receive_data(event_bytes("node.invoke.request", {"id": "x"}), 1.0)
    core.receive_data(event_bytes("tick", {}, seq=2), 1.0)
    assert not any(isinstance(e, SequenceGap) for e in core.events_received())


def test_real_chat_capture_reports_only_the_real_gaps() -> None:
    """Replaying the captured chat run, the frame seq gaps show up as SequenceGap events."""
    core = ready_core()
    frames = load_fixture("chat_events.json")["events"]
    for frame in frames:
        core.receive_data(event_bytes(frame["event"], frame["payload"], seq=frame["seq"]), 1.0)
    events = core.events_received()
    gaps = [(e.expected, e.received) for e in events if isinstance(e, SequenceGap)]
    assert gaps == [(5, 7), (9, 11), (13, 21), (24, 25)]
    delivered = [e for e in events if isinstance(e, EventReceived)]
    assert len(delivered) == len(frames)


# ---------------------------------------------------------------- tick watchdog


def test_tick_watchdog_closes_after_two_silent_intervals() -> None:
    """No inbound frame for 2 * tickIntervalMs asks for close code 4000."""
    core = ready_core(now=100.0, tick_interval_ms=1000)
    assert core.tick_interval_s == 1.0
    assert core.next_deadline() == 102.0
    core.advance(101.999)
    assert core.events_received() == []
    core.advance(102.0)
    assert core.events_received() == [CloseRequested(TICK_TIMEOUT_CLOSE_CODE, "tick timeout")]
    assert TICK_TIMEOUT_CLOSE_CODE == 4000
    assert core.state is CLOSING


def test_inbound_traffic_resets_the_tick_watchdog() -> None:
    """Any inbound frame (tick or other) pushes the watchdog deadline out."""
    core = ready_core(now=0.0)
    core.receive_data(event_bytes("tick", {"ts": 1}), 50.0)
    core.events_received()
    assert core.next_deadline() == 110.0
    core.advance(60.0)
    assert core.events_received() == []
    core.receive_data(event_bytes("health", {}), 100.0)
    core.advance(119.0)
    assert core.state is READY
    assert all(isinstance(e, EventReceived) for e in core.events_received())


def test_watchdog_not_armed_before_hello() -> None:
    """Before hello-ok only the handshake deadlines apply."""
    core = make_core(now=0.0, challenge_timeout_s=100.0)
    assert core.next_deadline() == 100.0
    core.advance(99.0)
    assert core.events_received() == []


# ---------------------------------------------------------------- payload limits


def test_max_payload_from_policy_is_enforced_on_send() -> None:
    """A request bigger than policy.maxPayload raises PayloadTooLarge and is not queued."""
    core = ready_core(max_payload=200)
    assert core.max_payload == 200
    with pytest.raises(PayloadTooLarge) as info:
        core.send_request("chat.send", {"message": "x" * 300})
    assert info.value.limit == 200
    assert info.value.size > 200
    assert core.data_to_send() == []
    assert core.pending_count == 0


def test_request_exactly_at_max_payload_is_sent() -> None:
    """The limit is inclusive."""
    core = ready_core(max_payload=10_000, id_factory=lambda: "fixed")
    overhead = len(b'{"type":"req","id":"fixed","method":"m","params":""}')
    core.send_request("m", "x" * (10_000 - overhead))
    (data,) = core.data_to_send()
    assert len(data) == 10_000


# ---------------------------------------------------------------- close and deadlines


def test_close_requests_a_close_once() -> None:
    """close() emits one CloseRequested; further input and time are ignored."""
    core = ready_core()
    core.close(1001, "going away")
    core.close(1000, "again")
    assert core.events_received() == [CloseRequested(1001, "going away")]
    assert core.state is CLOSING
    core.receive_data(event_bytes("tick", {}), 1.0)
    core.receive_data(b"garbage", 1.0)
    core.advance(10_000.0)
    assert core.events_received() == []
    assert core.violations == {}


def test_next_deadline_is_the_earliest_of_watchdog_and_requests() -> None:
    """next_deadline picks the earliest pending deadline in READY."""
    core = ready_core(now=0.0)
    core.send_request("slow", timeout_s=100.0)
    assert core.next_deadline() == 60.0
    core.send_request("fast", timeout_s=3.0)
    assert core.next_deadline() == 3.0


def test_next_deadline_in_closing_state_lists_only_requests() -> None:
    """Once closing, only pending request deadlines remain; none means None."""
    core = ready_core(now=0.0)
    core.close()
    assert core.next_deadline() is None
    core2 = ready_core(now=0.0)
    core2.send_request("x", timeout_s=5.0)
    core2.close()
    assert core2.next_deadline() == 5.0


def test_operator_plan_with_stored_device_token() -> None:
    """With a stored token the connect uses it and requests the stored scopes."""
    from openclaw_desktop.identity import StoredDeviceToken

    stored = StoredDeviceToken("dev-tok", "operator", ("operator.read",))
    core = make_core(make_plan(creds=Credentials(shared_token="s", stored_device_token=stored)))
    core.receive_data(challenge_bytes(), 0.0)
    params = connect_params_of(sent_frames(core)[0])
    assert params.auth is not None
    assert params.auth.device_token == "dev-tok"
    assert params.auth.token is None
    assert params.scopes == ["operator.read"]


def test_default_request_ids_are_unique_per_connection() -> None:
    """Without an id factory, ids share a random per-connection prefix and count up."""
    from openclaw_desktop.session import GatewayClientProtocol

    core = GatewayClientProtocol(make_plan(), now=0.0)
    other = GatewayClientProtocol(make_plan(), now=0.0)
    core.receive_data(challenge_bytes(), 0.0)
    other.receive_data(challenge_bytes(), 0.0)
    (connect,) = sent_frames(core)
    (other_connect,) = sent_frames(other)
    prefix, number = connect["id"].rsplit("-", 1)
    assert len(prefix) == 8
    assert number == "1"
    assert other_connect["id"] != connect["id"]
    core.receive_data(res_bytes(connect["id"], payload=hello_payload()), 0.0)
    assert core.send_request("health") == f"{prefix}-2"
