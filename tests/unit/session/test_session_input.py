"""Bad input fed to GatewayClientProtocol is dropped and reported, never raised."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_desktop.errors import ProtocolError
from openclaw_desktop.session import (
    CloseRequested,
    EventReceived,
    GatewayClientProtocol,
    HandshakeComplete,
    HandshakeFailed,
    ProtocolViolation,
    ResponseReceived,
    SequenceGap,
)
from openclaw_desktop.session.protocol import (
    AUTHENTICATING,
    AWAITING_CHALLENGE,
    CLOSING,
    DEFAULT_MAX_INBOUND_BYTES,
    MESSAGE_TOO_BIG_CLOSE_CODE,
    READY,
)
from tests.helpers.session_builders import (
    challenge_bytes,
    event_bytes,
    make_core,
    ready_core,
    res_bytes,
    sent_frames,
)

BAD_INPUT: list[tuple[str, str | bytes, str]] = [
    ("malformed-json", '{"type":"event",', "json"),
    ("huge-garbage", "x" * 1_000_000, "json"),
    ("non-utf8", b'{"type":"event","event":"\xff"}', "encoding"),
    ("lone-surrogate", '{"type":"event","event":"\udc80"}', "json"),
    ("json-array", "[1,2,3]", "invalid-frame"),
    ("json-null", "null", "invalid-frame"),
    ("json-number", "17", "invalid-frame"),
    ("unknown-type", '{"type":"hello"}', "unknown-type"),
    ("no-type", '{"event":"tick"}', "unknown-type"),
    ("req-from-server", '{"type":"req","id":"s1","method":"health"}', "unexpected-frame"),
    ("cancel-from-server", '{"type":"cancel","id":"s1"}', "unexpected-frame"),
    ("res-for-unknown-id", '{"type":"res","id":"nobody","ok":true}', "unknown-response"),
    ("event-bad-seq", '{"type":"event","event":"tick","seq":-4}', "invalid-frame"),
]


def drain(core: GatewayClientProtocol) -> list[Any]:
    """Everything the core produced: frames and events."""
    return [*core.data_to_send(), *core.events_received()]


@pytest.mark.parametrize(
    ("data", "kind"), [(d, k) for _, d, k in BAD_INPUT], ids=[n for n, _, _ in BAD_INPUT]
)
def test_bad_input_when_ready_is_reported_once_per_kind(data: str | bytes, kind: str) -> None:
    """Each bad frame is dropped: one ProtocolViolation, counted, state unchanged."""
    core = ready_core()
    core.receive_data(data, 1.0)
    (violation,) = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == kind
    assert violation.detail
    assert core.violations == {kind: 1}
    assert core.state is READY
    assert core.data_to_send() == []
    for count in (2, 3):
        core.receive_data(data, 1.0)
        assert drain(core) == []
        assert core.violations == {kind: count}
    assert core.state is READY


@pytest.mark.parametrize("data", [d for _, d, _ in BAD_INPUT], ids=[n for n, _, _ in BAD_INPUT])
def test_bad_input_before_the_challenge_keeps_waiting(data: str | bytes) -> None:
    """Garbage before the challenge does not start or fail the handshake."""
    core = make_core()
    core.receive_data(data, 0.1)
    events = core.events_received()
    assert len(events) == 1
    assert isinstance(events[0], ProtocolViolation)
    assert core.state is AWAITING_CHALLENGE
    assert core.data_to_send() == []


@pytest.mark.parametrize("data", [d for _, d, _ in BAD_INPUT], ids=[n for n, _, _ in BAD_INPUT])
def test_bad_input_during_authentication_keeps_the_handshake(data: str | bytes) -> None:
    """Garbage while waiting for hello-ok is dropped; the real hello-ok still completes."""
    core = make_core()
    core.receive_data(challenge_bytes(), 0.0)
    (connect,) = sent_frames(core)
    core.receive_data(data, 0.1)
    assert all(isinstance(e, ProtocolViolation) for e in core.events_received())
    assert core.state is AUTHENTICATING
    from tests.helpers.session_builders import hello_payload

    core.receive_data(res_bytes(connect["id"], payload=hello_payload()), 0.2)
    (done,) = core.events_received()
    assert isinstance(done, HandshakeComplete)


def test_every_kind_is_reported_once_in_a_mixed_stream() -> None:
    """Interleaved bad input: one report per kind, counts per kind, good frames unaffected."""
    core = ready_core()
    for _ in range(3):
        for _, data, _ in BAD_INPUT:
            core.receive_data(data, 1.0)
        core.receive_data(event_bytes("tick", {"ts": 1}), 1.0)
    events = core.events_received()
    violations = [e for e in events if isinstance(e, ProtocolViolation)]
    kinds = [v.kind for v in violations]
    assert len(kinds) == len(set(kinds))
    assert set(kinds) == {k for _, _, k in BAD_INPUT}
    expected_counts: dict[str, int] = {}
    for _, _, kind in BAD_INPUT:
        expected_counts[kind] = expected_counts.get(kind, 0) + 3
    assert core.violations == expected_counts
    assert [e for e in events if isinstance(e, EventReceived)] == [
        EventReceived("tick", {"ts": 1}, None, None)
    ] * 3
    assert core.state is READY


def test_bad_input_still_counts_as_inbound_traffic() -> None:
    """Any inbound message, even a bad one, shows the gateway is alive (watchdog reset)."""
    core = ready_core(now=0.0)
    core.receive_data("garbage", 59.0)
    core.advance(60.0)
    assert not any(isinstance(e, CloseRequested) for e in core.events_received())


# ---------------------------------------------------------------- oversized frames

LIMIT = 100_000  # above the hello-ok the builders send


def big_event(size: int) -> bytes:
    """A valid event frame of exactly ``size`` bytes."""
    frame = event_bytes("chat", {"text": ""})
    padded = event_bytes("chat", {"text": "x" * (size - len(frame))})
    assert len(padded) == size
    return padded


@pytest.mark.parametrize(
    "data",
    [big_event(LIMIT + 1), "x" * (LIMIT + 1), big_event(LIMIT + 1).decode()],
    ids=["valid-event-bytes", "garbage-text", "valid-event-text"],
)
def test_oversized_frame_when_ready_closes_with_1009(data: str | bytes) -> None:
    """A frame over the inbound limit, valid or not, is not parsed or delivered: one
    violation, and the connection closes with 1009 (message too big)."""
    core = ready_core(max_inbound_bytes=LIMIT)
    rid = core.send_request("status")
    sent_frames(core)
    core.receive_data(data, 1.0)
    violation, close = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert violation.kind == "oversized-frame"
    assert f"{LIMIT + 1} bytes" in violation.detail and str(LIMIT) in violation.detail
    assert close == CloseRequested(MESSAGE_TOO_BIG_CLOSE_CODE, "frame too large")
    assert core.state is CLOSING
    # Nothing more is read; the pending request fails when the socket goes.
    core.receive_data(event_bytes("tick"), 1.1)
    assert core.events_received() == []
    core.connection_lost(MESSAGE_TOO_BIG_CLOSE_CODE, "frame too large")
    (failed,) = core.events_received()
    assert failed.request_id == rid  # type: ignore[union-attr]


def test_frame_at_the_limit_is_delivered() -> None:
    """The limit is inclusive: a frame of exactly max_inbound_bytes is read normally."""
    core = ready_core(max_inbound_bytes=LIMIT)
    core.receive_data(big_event(LIMIT), 1.0)
    (event,) = core.events_received()
    assert isinstance(event, EventReceived)
    assert core.state is READY


def test_multibyte_text_is_measured_in_utf8_bytes() -> None:
    """Text frames count UTF-8 bytes, not characters."""
    core = ready_core(max_inbound_bytes=LIMIT)
    text = event_bytes("chat", {"text": "é" * (LIMIT // 2)}).decode()
    assert len(text) < LIMIT < len(text.encode())
    core.receive_data(text, 1.0)
    assert isinstance(core.events_received()[0], ProtocolViolation)
    assert core.state is CLOSING


@pytest.mark.parametrize("stage", ["challenge", "authenticating"])
def test_oversized_frame_during_the_handshake_fails_it(stage: str) -> None:
    """Before hello-ok an oversized frame fails the handshake and closes with 1009."""
    core = make_core(max_inbound_bytes=LIMIT)
    if stage == "authenticating":
        core.receive_data(challenge_bytes(), 0.0)
        sent_frames(core)
    core.receive_data(big_event(LIMIT + 1), 0.1)
    violation, failed, close = core.events_received()
    assert isinstance(violation, ProtocolViolation)
    assert isinstance(failed, HandshakeFailed)
    assert isinstance(failed.error, ProtocolError)
    assert isinstance(close, CloseRequested) and close.code == MESSAGE_TOO_BIG_CLOSE_CODE
    assert core.state is CLOSING


def test_default_inbound_limit_matches_the_connection_default() -> None:
    """The core's default limit is the transport's (64 MiB)."""
    from openclaw_desktop.transport import ConnectionOptions

    assert make_core().max_inbound_bytes == DEFAULT_MAX_INBOUND_BYTES
    assert ConnectionOptions.__dataclass_fields__["max_inbound_bytes"].default == (
        DEFAULT_MAX_INBOUND_BYTES
    )


# ---------------------------------------------------------------- property tests

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)

frame_like = st.fixed_dictionaries(
    {"type": st.sampled_from(["event", "res", "req", "cancel", "other"])},
    optional={
        "id": st.one_of(
            st.text(max_size=6), st.integers(-(2**63), 2**63), st.sampled_from(["r1", "r2"])
        ),
        "ok": st.one_of(st.booleans(), json_values),
        "event": st.one_of(st.sampled_from(["connect.challenge", "tick", "chat", ""]), json_values),
        "seq": st.one_of(st.integers(min_value=-3, max_value=10**6), json_values),
        "payload": json_values,
        "error": json_values,
        "method": json_values,
    },
)

messages = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200),
    frame_like.map(orjson.dumps),
    frame_like.map(lambda f: orjson.dumps(f).decode()),
)

ALLOWED_EVENTS = (
    EventReceived,
    ResponseReceived,
    SequenceGap,
    ProtocolViolation,
    HandshakeFailed,
    HandshakeComplete,
    CloseRequested,
)


@settings(max_examples=150, deadline=None, database=None)
@given(stream=st.lists(messages, max_size=8))
def test_arbitrary_input_never_raises_when_ready(stream: list[str | bytes]) -> None:
    """Any sequence of messages fed to a READY core is absorbed without an exception."""
    core = ready_core()
    for i, data in enumerate(stream):
        core.receive_data(data, float(i))
        core.advance(float(i))
    for event in core.events_received():
        assert isinstance(event, ALLOWED_EVENTS)
    assert core.state in (READY, CLOSING)
    for data in core.data_to_send():
        assert isinstance(orjson.loads(data), dict)


@settings(max_examples=150, deadline=None, database=None)
@given(stream=st.lists(messages, max_size=8))
def test_arbitrary_input_never_raises_during_handshake(stream: list[str | bytes]) -> None:
    """Any sequence of messages fed to a fresh core is absorbed without an exception."""
    core = make_core()
    for data in stream:
        core.receive_data(data, 0.5)
    for event in core.events_received():
        assert isinstance(event, ALLOWED_EVENTS)


@settings(
    max_examples=200,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(payload=json_values)
def test_arbitrary_challenge_payload_never_raises(payload: Any) -> None:
    """Any challenge payload either starts authentication or fails the handshake cleanly."""
    core = make_core()
    core.receive_data(event_bytes("connect.challenge", payload), 0.0)
    if core.state is AUTHENTICATING:
        assert len(core.data_to_send()) == 1
        assert core.events_received() == []
    else:
        assert core.state is CLOSING
        failed, close = core.events_received()
        assert isinstance(failed, HandshakeFailed)
        assert isinstance(close, CloseRequested)
        assert core.data_to_send() == []
