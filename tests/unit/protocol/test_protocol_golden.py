"""Golden frames captured from the real gateway 2026.9.6 parse with our codec and models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from openclaw_desktop.errors import (
    AuthError,
    GatewayError,
    PairingRequired,
    ProtocolMismatch,
    gateway_error_from_shape,
)
from openclaw_desktop.identity import (
    build_payload_v3,
    device_id_for,
    normalize_public_key,
    signature_token,
    verify_signature,
)
from openclaw_desktop.protocol import (
    AgentEvent,
    ChatEvent,
    ChatSendAck,
    ClientId,
    ClientMode,
    ConnectChallenge,
    ConnectParams,
    ErrorShape,
    EventFrame,
    HelloOk,
    NodeErrorCode,
    NodeEventResult,
    NodeInvokeRequest,
    NodeInvokeResponse,
    NodeInvokeResultParams,
    RequestFrame,
    ResponseFrame,
    TickEvent,
    decode_frame,
    encode_frame,
)

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"


def load(name: str) -> Any:
    """One golden fixture as parsed JSON."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def raw(name: str) -> bytes:
    """One golden fixture as the bytes a socket would deliver."""
    return (FIXTURES / name).read_bytes()


# ---------------------------------------------------------------- handshake


def test_challenge_decodes_from_bytes_and_text() -> None:
    """The real connect.challenge decodes from bytes and from str alike."""
    assert decode_frame(raw("connect_challenge.json")) == load("connect_challenge.json")
    assert decode_frame(raw("connect_challenge.json").decode()) == load("connect_challenge.json")


def test_challenge_payload_validates() -> None:
    """The challenge payload gives nonce, integer ts and the capability list."""
    frame = EventFrame.model_validate(load("connect_challenge.json"))
    challenge = ConnectChallenge.model_validate(frame.payload)
    assert challenge.nonce == "d9b822e8-4000-4987-9480-cf4472d36881"
    assert challenge.ts == 1796023931231
    assert challenge.capabilities == ["model-catalog-snapshot"]


@pytest.mark.parametrize(
    "name", ["connect_request_operator.json", "connect_request_node_host.json"]
)
def test_real_connect_request_frame_decodes(name: str) -> None:
    """Both captured connect requests pass decode_frame and the closed RequestFrame model."""
    frame = decode_frame(raw(name))
    assert frame["method"] == "connect"
    model = RequestFrame.model_validate(frame)
    assert model.to_wire() == frame


@pytest.mark.parametrize(
    "name", ["connect_request_operator.json", "connect_request_node_host.json"]
)
def test_real_connect_params_round_trip_exactly(name: str) -> None:
    """ConnectParams accepts the captured params as they are and serialises them back unchanged."""
    params = load(name)["params"]
    model = ConnectParams.model_validate(params)
    assert model.to_wire() == params
    assert ConnectParams.model_validate(model.to_wire()) == model


def test_operator_connect_params_fields() -> None:
    """The operator capture maps to the expected typed fields."""
    model = ConnectParams.model_validate(load("connect_request_operator.json")["params"])
    assert model.client.id is ClientId.CLI
    assert model.client.mode is ClientMode.CLI
    assert model.client.instance_id == "probe-5739"
    assert model.caps == []
    assert model.auth is not None
    assert model.auth.token == "test-token-123"
    assert model.device is not None
    assert model.device.signed_at == 1796023931231


def test_node_host_connect_params_fields() -> None:
    """The node host capture keeps its commands, caps, pathEnv and empty scopes."""
    model = ConnectParams.model_validate(load("connect_request_node_host.json")["params"])
    assert model.client.id is ClientId.NODE_HOST
    assert model.client.mode is ClientMode.NODE
    assert model.client.device_family == "Linux"
    assert model.client.display_name == "real-node-host"
    assert model.role == "node"
    assert model.scopes == []
    assert model.commands is not None
    assert len(model.commands) == 21
    assert model.caps == ["browser", "file", "local-inference", "mcp", "system"]
    assert model.path_env == "…:/usr/bin:…"


def test_real_operator_signature_verifies_with_our_v3_payload() -> None:
    """Our v3 payload builder reproduces what the real CLI signed, so its signature verifies."""
    challenge = ConnectChallenge.model_validate(load("connect_challenge.json")["payload"])
    params = ConnectParams.model_validate(load("connect_request_operator.json")["params"])
    assert params.device is not None
    raw_key = normalize_public_key(params.device.public_key)
    assert device_id_for(raw_key) == params.device.id
    assert params.device.signed_at == challenge.ts
    assert params.device.nonce == challenge.nonce
    payload = build_payload_v3(
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
    assert payload.endswith("|test-token-123|d9b822e8-4000-4987-9480-cf4472d36881|linux|")
    assert verify_signature(raw_key, payload, params.device.signature)


# ---------------------------------------------------------------- hello-ok


def test_operator_hello_ok_res_frame_decodes() -> None:
    """The full real hello-ok res frame passes decode_frame and ResponseFrame."""
    frame = decode_frame(raw("hello_ok_operator.json"))
    res = ResponseFrame.model_validate(frame)
    assert res.ok is True
    assert res.id == "44703092-4f0d-456b-bc87-0b79632c252b"
    assert res.error is None


def test_operator_hello_ok_validates_with_all_fields() -> None:
    """HelloOk accepts the full capture and exposes the fields the client relies on."""
    hello = HelloOk.model_validate(load("hello_ok_operator.json")["payload"])
    assert hello.protocol == 4
    assert hello.server.version == "2026.9.6"
    assert hello.server.conn_id == "cf2740e9-b9c4-482f-8b0b-f0381cc2a901"
    assert len(hello.features.methods) == 466
    assert "node.invoke.request" in hello.features.events
    assert "profile-binding-v1" in hello.features.capabilities
    assert hello.policy.max_payload == 26214400
    assert hello.policy.max_buffered_bytes == 52428800
    assert hello.policy.tick_interval_ms == 30000
    assert hello.policy.attachments == {"maxBytes": 19464192, "maxImageBytes": 6291456}
    assert hello.auth.role == "operator"
    assert len(hello.auth.scopes) == 8
    assert hello.auth.device_token == "11wp8u12pODPSOA_yIfWDqS2OiI-ngw0otR5hxX5IAY"
    assert hello.auth.issued_at_ms == 1796023931318
    assert hello.snapshot.session_defaults is not None
    assert hello.snapshot.session_defaults.main_session_key == "agent:main:main"
    assert hello.snapshot.state_version == {"presence": 1, "health": 3}
    assert hello.snapshot.auth_mode == "token"


def test_operator_hello_ok_keeps_extra_fields() -> None:
    """Fields our models do not name are kept, at every level, not dropped."""
    hello = HelloOk.model_validate(load("hello_ok_operator.json")["payload"])
    assert set(hello.model_extra or {}) == {
        "controlUiWidgetKinds",
        "controlUiLinkReaders",
        "pluginSurfaceUrls",
    }
    assert (hello.server.model_extra or {})["controlUiBuildSource"] == "bundled"
    assert (hello.snapshot.model_extra or {})["suspension"] == {"phase": "accepting"}
    assert (hello.auth.model_extra or {})["recoveryMigrationAllowed"] is True
    assert (hello.policy.model_extra or {})["hasMultipleSessionSharingIdentities"] is False


def test_operator_hello_ok_round_trips() -> None:
    """Dumping the parsed hello-ok gives back the capture (to_wire only adds deviceTokens: [])."""
    payload = load("hello_ok_operator.json")["payload"]
    hello = HelloOk.model_validate(payload)
    assert hello.model_dump(by_alias=True, exclude_unset=True, mode="json") == payload
    wire = hello.to_wire()
    assert wire["auth"].pop("deviceTokens") == []
    assert wire == payload


def test_node_hello_ok_validates() -> None:
    """The node hello-ok has role node, no scopes and a device token."""
    frame = decode_frame(raw("hello_ok_node.json"))
    hello = HelloOk.model_validate(frame["payload"])
    assert hello.auth.role == "node"
    assert hello.auth.scopes == []
    assert hello.auth.device_token == "nIJA…"
    assert hello.auth.method == "token"


def test_hello_ok_repr_hides_the_device_token() -> None:
    """Neither repr nor str of a parsed hello-ok shows the device token."""
    hello = HelloOk.model_validate(load("hello_ok_operator.json")["payload"])
    token = "11wp8u12pODPSOA_yIfWDqS2OiI-ngw0otR5hxX5IAY"
    assert token not in repr(hello)
    assert token not in str(hello)
    assert token not in repr(hello.auth)


# ---------------------------------------------------------------- rejections

REJECTIONS = load("connect_rejections.json")
EXPECTED_ERROR_TYPE: dict[str, type[GatewayError]] = {
    "wrong shared token": AuthError,
    "no token": AuthError,
    "protocol mismatch": ProtocolMismatch,
    "unknown client.id": GatewayError,
    "unknown client.mode": GatewayError,
    "extra property": GatewayError,
    "role admin": GatewayError,
    "bad signature": AuthError,
    "device.id wrong": AuthError,
    "signedAt=1": AuthError,
    "nonce wrong": AuthError,
    "unpaired device": PairingRequired,
    "first frame health": GatewayError,
}


def test_every_rejection_row_has_an_expectation() -> None:
    """The fixture covers each rejection row of the reference table exactly once."""
    assert [row["case"] for row in REJECTIONS] == list(EXPECTED_ERROR_TYPE)


@pytest.mark.parametrize("row", REJECTIONS, ids=[row["case"] for row in REJECTIONS])
def test_rejection_frame_parses_to_typed_error(row: dict[str, Any]) -> None:
    """Each real rejection is a valid res error frame that maps to the right error type."""
    frame = decode_frame(encode_frame(row["frame"]))
    res = ResponseFrame.model_validate(frame)
    assert res.ok is False
    assert isinstance(res.error, ErrorShape)
    error = gateway_error_from_shape(frame["error"], method="connect")
    assert type(error) is EXPECTED_ERROR_TYPE[row["case"]]
    assert error.code == frame["error"]["code"]
    assert error.message == frame["error"]["message"]
    assert error.method == "connect"
    assert row["close"]["code"] in (1002, 1008)


def test_rejection_details_are_exposed() -> None:
    """Structured details of the real rejections survive on the typed errors."""
    by_case = {row["case"]: row["frame"]["error"] for row in REJECTIONS}
    mismatch = gateway_error_from_shape(by_case["wrong shared token"])
    assert mismatch.detail_code == "AUTH_TOKEN_MISMATCH"
    assert mismatch.detail("canRetryWithDeviceToken") is True
    assert mismatch.detail("recommendedNextStep") == "retry_with_device_token"
    pairing = gateway_error_from_shape(by_case["unpaired device"])
    assert isinstance(pairing, PairingRequired)
    assert pairing.request_id == "4ac5dcae-…"
    assert pairing.approve_command == "openclaw devices approve 4ac5dcae-…"
    protocol = gateway_error_from_shape(by_case["protocol mismatch"])
    assert protocol.detail("expectedProtocol") == 4


# ---------------------------------------------------------------- node invoke


def test_node_invoke_request_event_validates() -> None:
    """The real node.invoke.request decodes and its paramsJSON is parsed."""
    frame = decode_frame(raw("node_invoke_request.json"))
    assert "seq" not in frame
    request = NodeInvokeRequest.model_validate(frame["payload"])
    assert request.id == "1fa60ae7-2f45-4ea9-a9b8-668ff2e10662"
    assert request.command == "system.notify"
    assert request.timeout_ms == 30000
    assert request.idempotency_key == "k1"
    assert request.decoded_params() == {"title": "T", "body": "B"}


@pytest.mark.parametrize("index", [0, 1, 2], ids=["payload", "payloadJSON", "error"])
def test_node_invoke_result_variants_round_trip(index: int) -> None:
    """Each accepted node.invoke.result form validates and serialises back unchanged."""
    frame = load("node_invoke_results.json")["requests"][index]
    assert decode_frame(encode_frame(frame)) == frame
    params = NodeInvokeResultParams.model_validate(frame["params"])
    assert params.to_wire() == frame["params"]


def test_node_invoke_result_acks_decode() -> None:
    """The gateway's acks to node.invoke.result are valid res frames."""
    acks = [ResponseFrame.model_validate(f) for f in load("node_invoke_results.json")["acks"]]
    assert acks[0].payload == {"ok": True}
    assert acks[1].payload == {"ok": True, "ignored": True}
    assert acks[2].error is not None
    assert acks[2].error.message == "nodeId mismatch"


def test_node_invoke_operator_responses() -> None:
    """What the operator gets from node.invoke parses: payload, node error, pairing change."""
    success, node_error, changed = load("node_invoke_results.json")["operator_responses"]
    response = NodeInvokeResponse.model_validate(success["payload"])
    assert response.command == "system.notify"
    assert response.payload == {"delivered": True, "echo": {"title": "T", "body": "B"}}
    assert response.payload_json is None
    error = gateway_error_from_shape(node_error["error"], method="node.invoke")
    assert error.code == "UNAVAILABLE"
    assert error.detail("nodeError") == {"code": "PROBE_FAILURE", "message": "probe asked to fail"}
    retry = gateway_error_from_shape(changed["error"])
    assert retry.retryable is True
    assert retry.detail_code == "PAIRING_CHANGED"


def test_node_error_codes_match_the_wire() -> None:
    """Node error code enum values are the upper-snake wire strings."""
    assert all(code.value == code.name for code in NodeErrorCode)


# ---------------------------------------------------------------- chat and events


def test_chat_send_ack_validates() -> None:
    """chat.send acks with runId and status."""
    ack = ChatSendAck.model_validate(load("chat_events.json")["send_ack"]["payload"])
    assert ack.run_id == "8c8a07cf-b8d4-46cf-aabb-6a0108a29112"
    assert ack.status == "started"


def test_chat_and_agent_events_validate() -> None:
    """Every captured chat/agent event decodes and fits its payload model."""
    events = load("chat_events.json")["events"]
    chat_states: list[str] = []
    streams: list[str] = []
    for frame in events:
        decoded = decode_frame(orjson.dumps(frame))
        EventFrame.model_validate(decoded)
        if decoded["event"] == "chat":
            chat = ChatEvent.model_validate(decoded["payload"])
            chat_states.append(chat.state)
        elif decoded["event"] == "agent":
            agent = AgentEvent.model_validate(decoded["payload"])
            streams.append(agent.stream)
    assert chat_states == ["status", "delta", "final"]
    assert streams == [
        "run_status",
        "lifecycle",
        "lifecycle",
        "assistant",
        "usage",
        "lifecycle",
        "lifecycle",
    ]


def test_chat_delta_and_final_fields() -> None:
    """deltaText, message and stopReason are read from the real chat frames."""
    events = [f for f in load("chat_events.json")["events"] if f["event"] == "chat"]
    delta = ChatEvent.model_validate(events[1]["payload"])
    assert delta.delta_text == "FAKE-LLM"
    assert delta.message is not None
    assert delta.message["content"][0]["text"] == "FAKE-LLM"
    final = ChatEvent.model_validate(events[2]["payload"])
    assert final.stop_reason == "stop"
    assert final.seq == 19


def test_frame_seq_increases_in_the_chat_capture() -> None:
    """The per-connection frame seq of the capture only grows (gaps are allowed)."""
    seqs = [f["seq"] for f in load("chat_events.json")["events"]]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)


def test_other_gateway_events_decode() -> None:
    """tick, voicewake.changed, node.pair.resolved and talk.mode frames decode."""
    frames = [decode_frame(encode_frame(f)) for f in load("gateway_events.json")]
    assert TickEvent.model_validate(frames[0]["payload"]).ts == 1796023961231
    assert frames[1]["payload"]["triggers"] == ["openclaw", "claude", "computer"]
    assert frames[2]["payload"]["decision"] == "approved"
    assert frames[3]["seq"] == 9


def test_node_event_result_shapes() -> None:
    """node.event results, new and old, validate."""
    handled = NodeEventResult.model_validate(
        {"ok": True, "event": "node.presence.alive", "handled": True, "reason": "persisted"}
    )
    assert handled.handled is True
    assert NodeEventResult.model_validate({"ok": True}).event is None


def test_node_pair_list_entry_matches_our_client_enums() -> None:
    """The node.pair.list entry names a client id/mode we know and keeps the declared surface."""
    entry = load("node_pair_list_entry.json")
    assert ClientId(entry["clientId"]) is ClientId.NODE_HOST
    assert ClientMode(entry["clientMode"]) is ClientMode.NODE
    assert entry["commands"] == ["system.notify", "camera.list"]
    assert entry["caps"] == ["camera", "system"]
    assert entry["permissions"] == {"camera.capture": True}
    assert entry["requiredApproveScopes"] == ["operator.pairing", "operator.write"]
    assert isinstance(entry["ts"], int)
