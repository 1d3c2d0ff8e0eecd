"""Golden frames of the real gateway 2026.9.6 parse with our codec and models.

Two kinds of fixture live in ``tests/fixtures/protocol`` (its README says which is which):

* **captured** by ``tools/capture_golden.py`` from the real gateway over raw websockets, with
  secrets redacted (listed in ``capture.json``); ``tests/interop/test_golden_frames.py``
  captures them again and fails when the real gateway's frames drift from these files;
* **transcribed** from the reference notes of earlier live sessions
  (``reference/real-gateway-observed.md``), kept because other unit tests replay their exact
  values.

Every frame in every file must validate with the model for its kind (``req`` with its params
model, ``res`` with its result model, ``event`` with its payload model), and serialise back
to the same JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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
    MIN_NODE_PROTOCOL_VERSION,
    AgentEvent,
    CancelFrame,
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
    RequestFrame,
    ResponseFrame,
    TickEvent,
    decode_frame,
    encode_frame,
)
from openclaw_desktop.protocol.methods.nodes import NodeInvokeResultParams
from tests.helpers.golden_capture import (
    CAPTURE_FILES,
    NODE_COMMANDS,
    RESULT_PAYLOADS,
    drift,
    event_drift,
    iter_frames,
    shape,
    validate_frame,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "protocol"
TRANSCRIBED = {
    "chat_events.json",
    "connect_rejections.json",
    "connect_request_node_host.json",
    "connect_request_operator.json",
    "hello_ok_operator.json",
    "node_invoke_request.json",
    "node_pair_list_entry.json",
}
MANIFEST = "capture.json"
SECRET_KEYS = {"token", "deviceToken", "bootstrapToken", "password", "signature", "nonce"}
HEX64 = re.compile(r"^[0-9a-f]{64}$")


def load(name: str) -> Any:
    """One golden fixture as parsed JSON."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def raw(name: str) -> bytes:
    """One golden fixture as the bytes a socket would deliver."""
    return (FIXTURES / name).read_bytes()


FRAMES = [
    frame
    for name in sorted(TRANSCRIBED | set(CAPTURE_FILES))
    for frame in iter_frames(name, load(name))
]


# ---------------------------------------------------------------- every fixture, every frame


def test_every_fixture_file_is_known() -> None:
    """Each JSON file is either captured (listed in capture.json) or a known transcription."""
    on_disk = {path.name for path in FIXTURES.glob("*.json")}
    assert on_disk == TRANSCRIBED | set(CAPTURE_FILES) | {MANIFEST}
    assert not TRANSCRIBED & set(CAPTURE_FILES)


def test_capture_manifest_matches_the_tool() -> None:
    """capture.json names the gateway version, the date, the command and every captured file."""
    manifest = load(MANIFEST)
    assert manifest["gateway"] == {"package": "openclaw", "version": "2026.9.6"}
    assert manifest["buildId"].startswith("2026.9.6-release-")
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", manifest["capturedAt"])
    assert manifest["command"] == ".venv/bin/python -m tools.capture_golden"
    assert manifest["files"] == CAPTURE_FILES


@pytest.mark.parametrize(("label", "frame", "method"), FRAMES, ids=[f[0] for f in FRAMES])
def test_frame_validates_and_serialises_back(
    label: str, frame: dict[str, Any], method: str | None
) -> None:
    """The frame passes decode_frame and its models, and to_wire gives back the same JSON."""
    assert decode_frame(encode_frame(frame)) == frame
    models = validate_frame(frame, method=method)
    outer, inner = models[0], models[1:]
    assert outer.to_wire() == frame
    for model in inner:
        wire = model.model_dump(by_alias=True, exclude_unset=True, mode="json")
        if isinstance(model, ErrorShape):
            assert wire == frame["error"]
        elif frame["type"] == "req":
            # Closed params models: exactly what is on the wire, nothing more or less.
            assert model.to_wire() == frame["params"]
        else:
            # Open payload models keep every field they do not name.
            assert wire == frame["payload"]


def test_every_successful_res_with_a_model_was_checked_with_it() -> None:
    """The frame walk above gives each modelled result its method (not just ResponseFrame)."""
    checked = {
        method
        for _label, frame, method in FRAMES
        if frame["type"] == "res" and frame["ok"] and method in RESULT_PAYLOADS
    }
    assert checked == {"connect", "chat.send", "node.invoke", "node.event"}
    assert len(FRAMES) > 100


def test_captured_secrets_are_redacted() -> None:
    """Tokens, nonces and signatures in captured files are placeholders."""

    def walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in SECRET_KEYS and isinstance(item, str):
                    yield f"{path}/{key}", item
                yield from walk(item, f"{path}/{key}")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from walk(item, f"{path}[{index}]")

    found = [(p, v) for name in CAPTURE_FILES for p, v in walk(load(name), name)]
    assert {p.rsplit("/", 1)[1] for p, _v in found} >= {"deviceToken", "token", "nonce"}
    assert [(p, v) for p, v in found if not v.startswith("<redacted:")] == []
    text = "\n".join((FIXTURES / name).read_text(encoding="utf-8") for name in CAPTURE_FILES)
    assert "/__openclaw__/cap/<redacted:capability>" in text
    assert "/tmp/openclaw-real-" not in text


def test_shape_and_drift_helpers() -> None:
    """shape() keeps keys and types; drift() ignores nulls and empty lists, not new keys."""
    assert shape({"a": [1, 2.5], "b": None, "c": "x"}) == {
        "a": ["number"],
        "b": "null",
        "c": "string",
    }
    assert drift({"a": None, "l": []}, {"a": 3, "l": [{"x": 1}]}) == []
    assert drift({"a": 1}, {"a": 1, "b": 2}) == ["/b: new"]
    assert drift({"a": {"b": 1}}, {"a": {}}) == ["/a/b: missing now"]
    assert drift({"a": [{"x": 1}]}, {"a": [{"x": "1"}]}) == ["/a[]/x: number -> string"]
    # The reference's optional vitals come and go; a neighbour that goes is still drift.
    loop = {"eventLoop": {"cpuBreakdown": {"workerCoreRatio": 0.1}, "utilization": 0.2}}
    assert drift({"h": loop}, {"h": {"eventLoop": {"cpuBreakdown": {}, "utilization": 1}}}) == []
    assert drift({"h": loop}, {"h": {"eventLoop": {"utilization": 1}}}) == []
    assert drift({"h": loop}, {"h": {"eventLoop": {}}}) == ["/h/eventLoop/utilization: missing now"]
    tick = {"event": "tick", "payload": {"ts": 1}}
    chat = {"event": "chat", "payload": {"state": "delta", "seq": 1}}
    assert event_drift([tick, chat], [chat, chat, tick]) == []
    assert event_drift([tick], [chat]) == ["tick//: missing now", "chat/delta/: new"]
    extra = {"event": "tick", "payload": {"ts": 1, "x": 1}}
    assert event_drift([tick], [extra, chat], selection=True) == []
    assert event_drift([extra], [tick], selection=True) == ["tick//[0]/payload/x: missing now"]


# ---------------------------------------------------------------- captured: handshake


def test_captured_challenge() -> None:
    """The challenge decodes from bytes and text, with a nonce, an integer ts and capabilities."""
    assert decode_frame(raw("connect_challenge.json")) == load("connect_challenge.json")
    assert decode_frame(raw("connect_challenge.json").decode()) == load("connect_challenge.json")
    frame = EventFrame.model_validate(load("connect_challenge.json"))
    assert frame.seq is None
    challenge = ConnectChallenge.model_validate(frame.payload)
    assert challenge.nonce == "<redacted:nonce>"
    assert challenge.ts > 1_700_000_000_000
    assert challenge.capabilities == ["model-catalog-snapshot"]


def test_captured_operator_hello_ok() -> None:
    """The captured operator hello-ok has every scope we asked for and a device token."""
    hello = HelloOk.model_validate(load("hello_ok_operator_captured.json")["payload"])
    assert hello.protocol == 4
    assert hello.server.version == "2026.9.6"
    assert hello.auth.role == "operator"
    assert hello.auth.method == "token"
    assert len(hello.auth.scopes) == 8
    assert hello.auth.device_token == "<redacted:deviceToken>"
    assert {"node.invoke", "device.pair.approve", "node.pair.approve"} <= set(
        hello.features.methods
    )
    assert "node.invoke.request" in hello.features.events
    assert hello.policy.tick_interval_ms == 30000
    assert hello.policy.max_payload == 26214400


def test_captured_node_hello_ok() -> None:
    """The real node hello-ok: role node, no scopes, a device token, and a slimmer payload."""
    frame = decode_frame(raw("hello_ok_node.json"))
    hello = HelloOk.model_validate(frame["payload"])
    assert hello.protocol == 4
    assert hello.auth.role == "node"
    assert hello.auth.scopes == []
    assert hello.auth.method == "token"
    assert hello.auth.device_token == "<redacted:deviceToken>"
    assert hello.auth.issued_at_ms is not None
    assert "node.invoke.result" in hello.features.methods
    assert hello.policy.tick_interval_ms == 30000
    # Unlike the operator's, the node's hello-ok has no control-UI or plugin-surface fields
    # and a snapshot without the config paths (the made-up fixture it replaces had them).
    assert set(hello.model_extra or {}) == set()
    assert "configPath" not in (hello.snapshot.model_extra or {})
    assert hello.snapshot.presence == []


@pytest.mark.parametrize(
    ("name", "role"),
    [("connect_not_paired_operator.json", "operator"), ("connect_not_paired_node.json", "node")],
)
def test_captured_not_paired(name: str, role: str) -> None:
    """NOT_PAIRED / PAIRING_REQUIRED carries the request id, also in the 1008 close reason."""
    data = load(name)
    error = gateway_error_from_shape(data["frame"]["error"], method="connect")
    assert isinstance(error, PairingRequired)
    assert error.code == "NOT_PAIRED"
    assert error.detail_code == "PAIRING_REQUIRED"
    assert error.request_id
    assert error.approve_command == f"openclaw devices approve {error.request_id}"
    assert HEX64.match(error.detail("deviceId"))
    assert error.detail("requestedRole") == role
    assert ("requestedScopes" in data["frame"]["error"]["details"]) is (role == "operator")
    assert data["close"] == {
        "code": 1008,
        "reason": f"pairing required: device is not approved yet (requestId: {error.request_id})",
    }


def test_captured_token_mismatch() -> None:
    """A wrong shared token: INVALID_REQUEST with AUTH_TOKEN_MISMATCH, closed 1008, same text."""
    data = load("connect_token_mismatch.json")
    error = gateway_error_from_shape(data["frame"]["error"], method="connect")
    assert isinstance(error, AuthError)
    assert error.code == "INVALID_REQUEST"
    assert error.detail_code == "AUTH_TOKEN_MISMATCH"
    assert error.detail("canRetryWithDeviceToken") is True
    assert error.detail("recommendedNextStep") == "retry_with_device_token"
    assert data["close"] == {"code": 1008, "reason": data["frame"]["error"]["message"]}


# ---------------------------------------------------------------- captured: node invoke


def test_captured_node_invoke_request() -> None:
    """node.invoke.request as our node got it: paramsJSON, remaining timeout, no seq."""
    frame = decode_frame(raw("node_invoke_request_captured.json"))
    assert "seq" not in frame
    request = NodeInvokeRequest.model_validate(frame["payload"])
    assert request.command == "system.notify"
    assert request.params_json is not None and request.params is None
    assert request.decoded_params() == {"title": "T", "body": "B"}
    assert request.timeout_ms is not None and 0 < request.timeout_ms <= 15000
    assert request.idempotency_key == "golden-payload"
    assert HEX64.match(request.node_id)


@pytest.mark.parametrize("key", ["payload", "payloadJSON", "error", "wrong nodeId (first)"])
def test_sent_node_invoke_results_round_trip(key: str) -> None:
    """Each node.invoke.result form we sent validates and serialises back unchanged."""
    frame = load("node_invoke_results.json")["requests"][key]
    params = NodeInvokeResultParams.model_validate(frame["params"])
    assert params.to_wire() == frame["params"]
    assert RequestFrame.model_validate(frame).to_wire() == frame


def test_captured_node_invoke_result_acks() -> None:
    """The gateway acks results {ok}, a late one {ok, ignored}, a wrong nodeId with an error."""
    acks = {
        k: ResponseFrame.model_validate(f)
        for k, f in load("node_invoke_results.json")["acks"].items()
    }
    for key in ("payload", "payloadJSON", "error", "wrong nodeId"):
        assert acks[key].payload == {"ok": True}, key
    assert acks["late"].payload == {"ok": True, "ignored": True}
    wrong = acks["wrong nodeId (first)"]
    assert wrong.ok is False and wrong.error is not None
    assert (wrong.error.code, wrong.error.message) == ("INVALID_REQUEST", "nodeId mismatch")


def test_captured_node_invoke_operator_responses() -> None:
    """What the operator gets: payload, payloadJSON parsed and echoed, node error, no node."""
    responses = load("node_invoke_results.json")["operator_responses"]
    plain = NodeInvokeResponse.model_validate(responses["payload"]["payload"])
    assert plain.command == "system.notify"
    assert plain.payload == {"delivered": True}
    assert plain.payload_json is None
    via_json = NodeInvokeResponse.model_validate(responses["payloadJSON"]["payload"])
    assert via_json.payload_json is not None
    assert via_json.payload == json.loads(via_json.payload_json)
    node_error = gateway_error_from_shape(responses["node error"]["error"], method="node.invoke")
    assert node_error.code == "UNAVAILABLE"
    assert node_error.message == "UNAVAILABLE: no display"  # the gateway adds the prefix
    assert node_error.detail("nodeError") == {"code": "UNAVAILABLE", "message": "no display"}
    assert node_error.detail("nodeCommandDispatched") is True
    gone = gateway_error_from_shape(responses["unknown node"]["error"], method="node.invoke")
    assert gone.retryable is True
    assert gone.detail_code == "PAIRING_CHANGED"


def test_node_error_codes_match_the_wire() -> None:
    """Node error code enum values are the upper-snake wire strings."""
    assert all(code.value == code.name for code in NodeErrorCode)


# ---------------------------------------------------------------- captured: events


def test_captured_gateway_events() -> None:
    """tick, presence and the pairing events decode; node-directed events carry no seq."""
    events = load("gateway_events.json")
    assert TickEvent.model_validate(events["tick"]["payload"]).ts > 1_700_000_000_000
    presence = EventFrame.model_validate(events["presence"])
    assert presence.seq is not None and presence.state_version is not None
    assert {p["mode"] for p in presence.payload["presence"]} == {"gateway", "node"}
    requested = events["node.pair.requested"]["payload"]
    assert requested["commands"] == list(NODE_COMMANDS)
    assert requested["requiredApproveScopes"] == ["operator.pairing", "operator.write"]
    assert ClientId(requested["clientId"]) is ClientId.LINUX
    assert ClientMode(requested["clientMode"]) is ClientMode.NODE
    device = events["device.pair.requested"]["payload"]
    assert device["deviceId"] == requested["nodeId"]
    assert device["role"] == "node"
    for key in ("device.pair.resolved", "node.pair.resolved", "node.pair.resolved (to the node)"):
        assert events[key]["payload"]["decision"] == "approved", key
    to_node = [key for key in events if key.endswith("(to the node)")]
    assert to_node and all("seq" not in events[key] for key in to_node)
    to_operator = [events[key]["seq"] for key in events if key not in to_node]
    assert all(isinstance(seq, int) for seq in to_operator)


# ---------------------------------------------------------------- captured: what we sent


SENT = load("sent_frames.json")


@pytest.mark.parametrize("key", list(SENT), ids=list(SENT))
def test_the_real_gateway_accepted_what_we_sent(key: str) -> None:
    """Every frame we serialised got an ok answer (or, for cancel, none and the socket lived)."""
    entry = SENT[key]
    models = validate_frame(entry["sent"])
    if isinstance(models[0], CancelFrame):
        assert entry["reply"] is None
        assert entry["then"]["reply"]["ok"] is True
    elif "reply_in" in entry:
        assert load(entry["reply_in"])["id"] == entry["sent"]["id"]
        assert load(entry["reply_in"])["ok"] is True
    elif key == "node.invoke (error)":
        assert entry["reply"]["error"]["details"]["nodeCommandDispatched"] is True
    elif key == "node.invoke (unknown node)":
        assert entry["reply"]["error"]["details"]["code"] == "PAIRING_CHANGED"
    else:
        assert entry["reply"]["ok"] is True, entry["reply"]
    if "reply" in entry and entry["reply"] is not None:
        assert entry["reply"]["id"] == entry["sent"]["id"]


def test_sent_connect_params_are_ours() -> None:
    """Both connects were built by our plan code: operator v4 only, node 3..4 with a surface."""
    operator = ConnectParams.model_validate(SENT["connect (operator)"]["sent"]["params"])
    assert (operator.min_protocol, operator.max_protocol) == (4, 4)
    assert operator.client.id is ClientId.CLI
    assert operator.caps == ["tool-events", "exec-approvals", "plugin-approvals"]
    node = ConnectParams.model_validate(SENT["connect (node)"]["sent"]["params"])
    assert (node.min_protocol, node.max_protocol) == (MIN_NODE_PROTOCOL_VERSION, 4)
    assert node.client.id is ClientId.LINUX and node.client.mode is ClientMode.NODE
    assert node.commands == list(NODE_COMMANDS)
    assert node.scopes == []
    for params in (operator, node):
        assert params.device is not None and params.auth is not None
        assert HEX64.match(params.device.id)
        assert device_id_for(normalize_public_key(params.device.public_key)) == params.device.id
        assert params.device.signature == "<redacted:signature>"


def test_node_event_replies_decode() -> None:
    """node.event with payload and with payloadJSON: {ok, event, handled, reason}."""
    for key in ("node.event (payload)", "node.event (payloadJSON)"):
        result = NodeEventResult.model_validate(SENT[key]["reply"]["payload"])
        assert result.ok is True and result.event == "node.presence.alive", key
        assert result.handled is True
    assert NodeEventResult.model_validate({"ok": True}).event is None


def test_captured_chat_run() -> None:
    """One chat turn: ack {runId = idempotencyKey, started}, status -> delta -> final events."""
    run = load("chat_run.json")
    ack = ChatSendAck.model_validate(run["send_ack"]["payload"])
    assert ack.run_id == SENT["chat.send"]["sent"]["params"]["idempotencyKey"]
    assert ack.status == "started"
    chat = [ChatEvent.model_validate(f["payload"]) for f in run["events"] if f["event"] == "chat"]
    agent = [
        AgentEvent.model_validate(f["payload"]) for f in run["events"] if f["event"] == "agent"
    ]
    assert {event.run_id for event in chat + agent} == {ack.run_id}
    assert chat[0].state == "status" and chat[-1].state == "final"
    assert "delta" in {event.state for event in chat}
    assert chat[-1].stop_reason == "stop"
    assert chat[-1].message is not None
    assert chat[-1].message["content"][0]["text"].startswith("FAKE-LLM")
    assert {"run_status", "lifecycle", "assistant", "usage"} <= {event.stream for event in agent}
    seqs = [f["seq"] for f in run["events"]]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_transcribed_fixtures_have_the_captured_structure() -> None:
    """The transcriptions from the reference notes have the structure of the fresh captures.

    (The interop test checks the captures against the live gateway; this closes the loop for
    the transcribed files that other tests replay.)
    """
    rejections = {row["case"]: row for row in load("connect_rejections.json")}
    assert drift(load("hello_ok_operator.json"), load("hello_ok_operator_captured.json")) == []
    assert drift(load("node_invoke_request.json"), load("node_invoke_request_captured.json")) == []
    token = {"case": "wrong shared token", **load("connect_token_mismatch.json")}
    assert drift(rejections["wrong shared token"], token) == []
    unpaired = {"case": "unpaired device", **load("connect_not_paired_node.json")}
    assert drift(rejections["unpaired device"], unpaired) == []
    chat, run = load("chat_events.json"), load("chat_run.json")
    assert drift(chat["send_ack"], run["send_ack"]) == []
    assert event_drift(chat["events"], run["events"], selection=True) == []


# ---------------------------------------------------------------- transcribed: connect requests


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
    """Our v3 payload builder reproduces what the probe signed, so its signature verifies."""
    params = ConnectParams.model_validate(load("connect_request_operator.json")["params"])
    assert params.device is not None
    raw_key = normalize_public_key(params.device.public_key)
    assert device_id_for(raw_key) == params.device.id
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


# ---------------------------------------------------------------- transcribed: hello-ok


def test_operator_hello_ok_res_frame_decodes() -> None:
    """The full real hello-ok res frame (the reference's byte-for-byte capture) decodes."""
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


def test_hello_ok_repr_hides_the_device_token() -> None:
    """Neither repr nor str of a parsed hello-ok shows the device token."""
    hello = HelloOk.model_validate(load("hello_ok_operator.json")["payload"])
    token = "11wp8u12pODPSOA_yIfWDqS2OiI-ngw0otR5hxX5IAY"
    assert token not in repr(hello)
    assert token not in str(hello)
    assert token not in repr(hello.auth)


# ---------------------------------------------------------------- transcribed: rejections

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


# ---------------------------------------------------------------- transcribed: node invoke


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


# ---------------------------------------------------------------- transcribed: chat


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
