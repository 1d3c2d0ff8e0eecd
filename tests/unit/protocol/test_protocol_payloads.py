"""Unit tests for the node, chat and talk payload models and the protocol package surface."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

import openclaw_desktop.protocol as protocol
from openclaw_desktop.protocol import (
    ChatEvent,
    ChatSendParams,
    EventName,
    Method,
    NodeInvokeCancel,
    NodeInvokeRequest,
    ShutdownEvent,
    TalkEvent,
    base,
    chat,
    connect,
    enums,
    frames,
    node,
    version,
)
from openclaw_desktop.protocol.methods.nodes import (
    NodeEventParams,
    NodeInvokeParams,
    NodeInvokeProgressParams,
    NodeInvokeResultParams,
)

# ---------------------------------------------------------------- node


def test_invoke_request_prefers_params_json() -> None:
    """paramsJSON wins over params when both are present."""
    request = NodeInvokeRequest.model_validate(
        {"id": "i", "nodeId": "n", "command": "c", "paramsJSON": '{"a":1}', "params": {"a": 2}}
    )
    assert request.decoded_params() == {"a": 1}


def test_invoke_request_falls_back_to_params() -> None:
    """Older gateways send params as an object; it is used when paramsJSON is absent."""
    request = NodeInvokeRequest.model_validate(
        {"id": "i", "nodeId": "n", "command": "c", "params": [1, 2]}
    )
    assert request.decoded_params() == [1, 2]
    bare = NodeInvokeRequest.model_validate({"id": "i", "nodeId": "n", "command": "c"})
    assert bare.decoded_params() is None


def test_invoke_request_bad_params_json_is_a_value_error() -> None:
    """Broken paramsJSON raises ValueError with a readable message, not an orjson type."""
    request = NodeInvokeRequest.model_validate(
        {"id": "i", "nodeId": "n", "command": "c", "paramsJSON": "{nope"}
    )
    with pytest.raises(ValueError, match="paramsJSON is not valid JSON"):
        request.decoded_params()


@pytest.mark.parametrize(
    "payload",
    [
        {"nodeId": "n", "command": "c"},
        {"id": "", "nodeId": "n", "command": "c"},
        {"id": "i", "nodeId": "n", "command": ""},
        {"id": "i", "command": "c"},
        {"id": "i", "nodeId": "n", "command": "c", "timeoutMs": -1},
        {"id": "i", "nodeId": "n", "command": "c", "timeoutMs": "1000"},
    ],
)
def test_invoke_request_rejects_malformed_payloads(payload: dict[str, object]) -> None:
    """A request without id, nodeId or command, or with a bad timeout, is refused."""
    with pytest.raises(ValidationError):
        NodeInvokeRequest.model_validate(payload)


def test_invoke_cancel_target_prefers_invoke_id() -> None:
    """node.invoke.cancel names the invoke by invokeId, or by id on older gateways."""
    assert NodeInvokeCancel.model_validate({"invokeId": "a", "id": "b"}).target_id == "a"
    assert NodeInvokeCancel.model_validate({"id": "b"}).target_id == "b"
    assert NodeInvokeCancel.model_validate({}).target_id is None


def test_invoke_result_params_are_closed() -> None:
    """node.invoke.result params refuse unknown properties."""
    with pytest.raises(ValidationError):
        NodeInvokeResultParams.model_validate({"id": "i", "nodeId": "n", "ok": True, "x": 1})


def test_invoke_result_error_is_closed() -> None:
    """The error object of a result has exactly code and message."""
    with pytest.raises(ValidationError):
        NodeInvokeResultParams.model_validate(
            {"id": "i", "nodeId": "n", "ok": False, "error": {"code": "X", "message": "m", "y": 1}}
        )


def test_invoke_progress_chunk_limit() -> None:
    """A progress chunk is at most 16384 characters."""
    base_params = {"invokeId": "i", "nodeId": "n", "seq": 0}
    NodeInvokeProgressParams.model_validate({**base_params, "chunk": "x" * 16384})
    with pytest.raises(ValidationError):
        NodeInvokeProgressParams.model_validate({**base_params, "chunk": "x" * 16385})


def test_operator_invoke_params_need_an_idempotency_key() -> None:
    """node.invoke requires a non-empty idempotencyKey."""
    params = NodeInvokeParams(node_id="n", command="c", idempotency_key="k", timeout_ms=1000)
    assert params.to_wire() == {
        "nodeId": "n",
        "command": "c",
        "idempotencyKey": "k",
        "timeoutMs": 1000,
    }
    with pytest.raises(ValidationError):
        NodeInvokeParams(node_id="n", command="c", idempotency_key="")


def test_node_event_params_wire_names() -> None:
    """node.event params write payloadJSON with its exact wire spelling."""
    params = NodeEventParams(event="node.presence.alive", payload_json='{"trigger":"manual"}')
    assert params.to_wire() == {
        "event": "node.presence.alive",
        "payloadJSON": '{"trigger":"manual"}',
    }


# ---------------------------------------------------------------- chat and talk


def test_chat_event_rejects_unknown_state() -> None:
    """The chat state is one of status, delta, final, aborted, error."""
    payload = {"runId": "r", "sessionKey": "agent:main:main", "state": "thinking"}
    with pytest.raises(ValidationError):
        ChatEvent.model_validate(payload)


def test_chat_error_event_fields() -> None:
    """An error chat event carries errorMessage, errorKind and errorDetail."""
    event = ChatEvent.model_validate(
        {
            "runId": "r",
            "sessionKey": "s",
            "state": "error",
            "errorMessage": "boom",
            "errorKind": "provider",
            "errorDetail": {"provider": "fake", "httpStatus": 500},
        }
    )
    assert event.error_message == "boom"
    assert event.error_detail == {"provider": "fake", "httpStatus": 500}


def test_chat_send_params_wire_shape() -> None:
    """chat.send params serialise with camelCase keys and refuse unknown fields."""
    params = ChatSendParams(session_key="main", message="hi", idempotency_key="k")
    assert params.to_wire() == {"sessionKey": "main", "message": "hi", "idempotencyKey": "k"}
    with pytest.raises(ValidationError):
        ChatSendParams.model_validate(
            {"sessionKey": "main", "message": "hi", "idempotencyKey": "k", "bogus": 1}
        )


def test_talk_event_seq_starts_at_one() -> None:
    """talk.event seq is >= 1."""
    payload = {
        "id": "e",
        "type": "session.started",
        "sessionId": "s",
        "seq": 1,
        "timestamp": 1,
        "mode": "realtime",
        "transport": "webrtc",
        "brain": "none",
    }
    assert TalkEvent.model_validate(payload).seq == 1
    with pytest.raises(ValidationError):
        TalkEvent.model_validate({**payload, "seq": 0})


def test_shutdown_event() -> None:
    """shutdown carries a reason and an optional restart hint."""
    event = ShutdownEvent.model_validate({"reason": "restart", "restartExpectedMs": 1500})
    assert event.restart_expected_ms == 1500


# ---------------------------------------------------------------- surface


def test_package_reexports_every_submodule_name() -> None:
    """protocol.__all__ is exactly the union of the submodules' __all__."""
    names: set[str] = set()
    for module in (base, chat, connect, enums, frames, node, version):
        names.update(module.__all__)
    names -= set(base.__all__)
    assert set(protocol.__all__) == names
    for name in protocol.__all__:
        assert hasattr(protocol, name)


def test_method_and_event_names_are_unique() -> None:
    """No two enum members share a wire string."""
    for enum in (Method, EventName):
        values = [m.value for m in enum]
        assert len(values) == len(set(values))


def test_protocol_constants() -> None:
    """Version numbers and limits are the ones observed on the real gateway."""
    assert version.PROTOCOL_VERSION == 4
    assert version.MIN_NODE_PROTOCOL_VERSION == 3
    assert version.DEFAULT_GATEWAY_PORT == 18789
    assert version.MAX_PREAUTH_PAYLOAD_BYTES == 64 * 1024
    assert version.MAX_PAYLOAD_BYTES == 26214400
    assert version.MAX_BUFFERED_BYTES == 52428800
    assert version.DEVICE_SIGNATURE_SKEW_MS == 120_000
