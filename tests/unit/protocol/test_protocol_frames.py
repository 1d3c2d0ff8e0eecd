"""Unit tests for openclaw_desktop.protocol.frames: the codec and the frame models."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from openclaw_desktop.protocol import (
    MAX_FRAME_DEPTH,
    CancelFrame,
    ErrorShape,
    EventFrame,
    FrameDecodeError,
    FrameEncodeError,
    RequestFrame,
    ResponseFrame,
    StateVersion,
    decode_frame,
    encode_frame,
    error_shape,
    exceeds_depth,
    unparsed_frame_id,
)

# ---------------------------------------------------------------- decode_frame


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"\xff\xfe{}", "encoding"),
        (b'{"type":"event","event":"\xc3"}', "encoding"),
        ("not json", "json"),
        ("", "json"),
        (b"", "json"),
        ('{"type":"event"', "json"),
        ('"\ud800"', "json"),
        ("NaN", "json"),
        ("[]", "invalid-frame"),
        ("null", "invalid-frame"),
        ("42", "invalid-frame"),
        ('"res"', "invalid-frame"),
        ("{}", "unknown-type"),
        ('{"type":"ping"}', "unknown-type"),
        ('{"type":null}', "unknown-type"),
        ('{"type":"event"}', "invalid-frame"),
        ('{"type":"event","event":""}', "invalid-frame"),
        ('{"type":"event","event":7}', "invalid-frame"),
        ('{"type":"event","event":"tick","seq":-1}', "invalid-frame"),
        ('{"type":"event","event":"tick","seq":"3"}', "invalid-frame"),
        ('{"type":"event","event":"tick","seq":true}', "invalid-frame"),
        ('{"type":"event","event":"tick","seq":1.0}', "invalid-frame"),
        ('{"type":"res","ok":true}', "invalid-frame"),
        ('{"type":"res","id":1,"ok":true}', "invalid-frame"),
        ('{"type":"res","id":"a"}', "invalid-frame"),
        ('{"type":"res","id":"a","ok":"true"}', "invalid-frame"),
        ('{"type":"res","id":"a","ok":false,"error":"bad"}', "invalid-frame"),
        ('{"type":"req","method":"health"}', "invalid-frame"),
        ('{"type":"req","id":"","method":"health"}', "invalid-frame"),
        ('{"type":"req","id":"1","method":""}', "invalid-frame"),
        ('{"type":"req","id":"1"}', "invalid-frame"),
        ('{"type":"cancel"}', "invalid-frame"),
        ('{"type":"cancel","id":""}', "invalid-frame"),
    ],
)
def test_decode_frame_rejects_with_a_kind(data: str | bytes, kind: str) -> None:
    """Bad input raises FrameDecodeError naming the problem."""
    with pytest.raises(FrameDecodeError) as info:
        decode_frame(data)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    "data",
    [
        '{"type":"event","event":"tick"}',
        '{"type":"event","event":"tick","seq":0,"payload":{"ts":1}}',
        '{"type":"event","event":"tick","seq":null}',
        '{"type":"res","id":"a","ok":true}',
        '{"type":"res","id":"","ok":false,"error":null}',
        '{"type":"res","id":"a","ok":false,"error":{"code":"X","message":"m"}}',
        '{"type":"req","id":"1","method":"health"}',
        '{"type":"cancel","id":"1"}',
        b'{"type":"event","event":"caf\xc3\xa9"}',
    ],
)
def test_decode_frame_accepts_minimal_frames(data: str | bytes) -> None:
    """The smallest valid frame of each type decodes to a dict."""
    frame = decode_frame(data)
    assert isinstance(frame, dict)
    assert frame["type"] in ("event", "res", "req", "cancel")


def test_decode_frame_keeps_unknown_fields() -> None:
    """decode_frame checks the required fields only; newer fields pass through."""
    frame = decode_frame('{"type":"event","event":"x","recipientProfileId":"p","future":1}')
    assert frame["future"] == 1


def test_frame_decode_error_is_a_value_error_with_readable_str() -> None:
    """FrameDecodeError is a ValueError and prints as 'kind: detail'."""
    with pytest.raises(ValueError, match="unknown-type: unknown frame type 'ping'"):
        decode_frame('{"type":"ping"}')
    error = FrameDecodeError("json", "oops")
    assert str(error) == "json: oops"
    assert error.detail == "oops"


def test_encoding_error_names_the_offset() -> None:
    """A non-UTF-8 message reports the offending byte offset."""
    with pytest.raises(FrameDecodeError, match="byte 2"):
        decode_frame(b"{}\xff")


# ---------------------------------------------------------------- encode_frame


def test_encode_frame_is_compact_utf8_json() -> None:
    """Frames serialise to compact UTF-8 JSON, non-ASCII left unescaped."""
    data = encode_frame({"type": "req", "id": "1", "method": "chat.send", "params": {"m": "é"}})
    assert data == '{"type":"req","id":"1","method":"chat.send","params":{"m":"é"}}'.encode()


@pytest.mark.parametrize(
    "frame",
    [
        {"type": "req", "id": "1", "method": "health"},
        {"type": "req", "id": "2", "method": "x", "params": {"a": [1, 2.5, None, True]}},
        {"type": "res", "id": "1", "ok": True, "payload": {"nested": {"k": "v"}}},
        {"type": "event", "event": "tick", "payload": {"ts": 1796023931231}, "seq": 3},
        {"type": "cancel", "id": "9"},
    ],
)
def test_encode_then_decode_round_trips(frame: dict[str, Any]) -> None:
    """What we encode decodes back to the same dict."""
    assert decode_frame(encode_frame(frame)) == frame


def _nested(levels: int, leaf: Any = "x") -> Any:
    """``leaf`` inside ``levels`` lists."""
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "limit", "deeper"),
    [
        ("text", 0, False),
        ([], 0, True),
        ([], 1, False),
        ([[]], 1, True),
        ({"a": [{"b": 1}]}, 3, False),
        ({"a": [{"b": {}}]}, 3, True),
        ({"a": 1, "b": [1, [2, [3]]]}, 4, False),
        ({"a": 1, "b": [1, [2, [3]]]}, 3, True),
        (_nested(MAX_FRAME_DEPTH), MAX_FRAME_DEPTH, False),
        (_nested(MAX_FRAME_DEPTH + 1), MAX_FRAME_DEPTH, True),
    ],
)
def test_exceeds_depth_counts_lists_and_dicts(value: Any, limit: int, deeper: bool) -> None:
    """The value itself is level 1; only lists and dicts add levels."""
    assert exceeds_depth(value, limit) is deeper


def test_exceeds_depth_is_safe_at_any_depth() -> None:
    """Far deeper than Python's recursion limit (or orjson's 1,024) is answered, not raised."""
    assert exceeds_depth(_nested(100_000))


def test_encode_frame_refuses_a_frame_deeper_than_the_limit() -> None:
    """The same depth bound on output as on input: a typed error, not orjson's TypeError,
    both below orjson's own 254-level limit and beyond it."""
    ok = {"type": "req", "id": "1", "method": "x", "params": _nested(MAX_FRAME_DEPTH - 1)}
    assert decode_frame(encode_frame(ok)) == ok
    for levels in (MAX_FRAME_DEPTH, 300):
        frame = {"type": "req", "id": "1", "method": "x", "params": _nested(levels)}
        with pytest.raises(FrameEncodeError) as info:
            encode_frame(frame)
        assert info.value.kind == "too-deep"
        assert str(info.value) == f"too-deep: nested deeper than {MAX_FRAME_DEPTH} levels"


def test_encode_frame_names_an_unencodable_value() -> None:
    """A value JSON has no form for is a typed ``unencodable`` error."""
    with pytest.raises(FrameEncodeError) as info:
        encode_frame({"type": "req", "id": "1", "method": "x", "params": {1, 2}})
    assert info.value.kind == "unencodable"
    assert isinstance(info.value, ValueError)


_PAST_PARSER = "[" * 1_100 + "]" * 1_100


def _deep(template: str) -> str:
    """``template`` with ``DEEP`` replaced by 1,100 nested arrays (past the parser)."""
    return template.replace("DEEP", _PAST_PARSER)


@pytest.mark.parametrize(
    ("frame", "found"),
    [
        (_deep('{"type":"req","id":"a1","method":"health","params":DEEP}'), "a1"),
        (_deep('{"params":DEEP, "id" : "late"}'), "late"),
        (_deep('{"id":"a\\"b","p":DEEP}'), 'a"b'),
        (_deep('{"id":"first","p":DEEP,"id":"last"}'), "last"),
        (_deep('{"id":5,"x":"y","p":DEEP}'), None),
        (_deep('{"x":"id","y":"z","p":DEEP}'), None),
        (_deep('{"a":{"id":"inner"},"p":DEEP}'), None),
        (_deep('[{"id":"in an array"},DEEP]'), None),
        (b'{"id":"bytes","p":' + _PAST_PARSER.encode() + b"}", "bytes"),
    ],
)
def test_unparsed_frame_id_finds_only_the_top_level_string_id(
    frame: str | bytes, found: str | None
) -> None:
    """A frame too deep for the parser still yields its top-level id (the last one, as
    JSON.parse), never a nested one, a non-string one or a string that is a value."""
    with pytest.raises(FrameDecodeError):
        decode_frame(frame)
    assert unparsed_frame_id(frame) == found


def test_unparsed_frame_id_is_bounded() -> None:
    """Past the scan bound the id is not looked for."""
    from openclaw_desktop.protocol.frames import MAX_ID_SCAN_BYTES

    frame = '{"id":"big","p":' + "[" * MAX_ID_SCAN_BYTES + "}"
    assert unparsed_frame_id(frame) is None


def test_error_shape_leaves_out_absent_fields() -> None:
    """error_shape only writes the fields that were given, falsy ones included."""
    assert error_shape("X", "m") == {"code": "X", "message": "m"}
    assert error_shape("X", "m", {"a": 1}, retryable=False, retry_after_ms=0) == {
        "code": "X",
        "message": "m",
        "details": {"a": 1},
        "retryable": False,
        "retryAfterMs": 0,
    }


# ---------------------------------------------------------------- models


def test_error_shape_model_uses_wire_names() -> None:
    """ErrorShape reads and writes retryAfterMs and keeps unknown fields."""
    shape = ErrorShape.model_validate(
        {"code": "UNAVAILABLE", "message": "m", "retryAfterMs": 500, "extra": 1}
    )
    assert shape.retry_after_ms == 500
    assert shape.to_wire() == {
        "code": "UNAVAILABLE",
        "message": "m",
        "retryAfterMs": 500,
        "extra": 1,
    }


def test_error_shape_rejects_negative_retry_after() -> None:
    """A negative retryAfterMs is not a valid ErrorShape."""
    with pytest.raises(ValidationError):
        ErrorShape.model_validate({"code": "X", "message": "m", "retryAfterMs": -1})


def test_request_frame_is_closed() -> None:
    """RequestFrame rejects an unknown property, as the gateway's closed schema does."""
    with pytest.raises(ValidationError, match="bogus"):
        RequestFrame.model_validate({"type": "req", "id": "1", "method": "m", "bogus": 1})


def test_request_frame_optional_fields() -> None:
    """traceparent and expectedProfileId use wire names; traceparent is capped at 128."""
    frame = RequestFrame(id="1", method="m", traceparent="00-abc", expected_profile_id="p")
    assert frame.to_wire() == {
        "type": "req",
        "id": "1",
        "method": "m",
        "traceparent": "00-abc",
        "expectedProfileId": "p",
    }
    with pytest.raises(ValidationError):
        RequestFrame(id="1", method="m", traceparent="x" * 129)


def test_request_frame_requires_non_empty_id_and_method() -> None:
    """An empty id or method is not a request."""
    with pytest.raises(ValidationError):
        RequestFrame(id="", method="m")
    with pytest.raises(ValidationError):
        RequestFrame(id="1", method="")


def test_response_frame_parses_error_shape() -> None:
    """A res error frame carries a typed ErrorShape."""
    res = ResponseFrame.model_validate(
        {"type": "res", "id": "1", "ok": False, "error": {"code": "X", "message": "m"}}
    )
    assert res.error == ErrorShape(code="X", message="m")


def test_response_frame_rejects_wrong_type_literal() -> None:
    """A req frame is not a ResponseFrame."""
    with pytest.raises(ValidationError):
        ResponseFrame.model_validate({"type": "req", "id": "1", "ok": True})


def test_event_frame_state_version_and_seq() -> None:
    """EventFrame reads stateVersion and refuses a negative seq."""
    frame = EventFrame.model_validate(
        {"type": "event", "event": "presence", "seq": 4, "stateVersion": {"presence": 2}}
    )
    assert frame.state_version == StateVersion(presence=2, health=0)
    with pytest.raises(ValidationError):
        EventFrame.model_validate({"type": "event", "event": "x", "seq": -1})


def test_cancel_frame_wire_shape() -> None:
    """CancelFrame serialises to {type:cancel, id}."""
    assert CancelFrame(id="abc").to_wire() == {"type": "cancel", "id": "abc"}


def test_wire_models_are_frozen() -> None:
    """Wire models are immutable once built."""
    frame = CancelFrame(id="abc")
    with pytest.raises(ValidationError):
        frame.id = "other"  # type: ignore[misc]
