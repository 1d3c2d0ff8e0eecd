"""Unit tests: with ``OPENCLAW_GATEWAY_CHECK_RESULTS=1`` each answer is checked against its
method's result model (``gateway.wire_check.check_result``), and with
``OPENCLAW_GATEWAY_CHECK_EVENTS=1`` each frame's envelope against its frame model
(``check_frame``), naming fields, never values."""

from __future__ import annotations

import logging

import pytest

from gateway.wire_check import check_frame, check_result


def test_a_misfit_answer_is_logged_by_field_never_by_value(
    caplog: pytest.LogCaptureFixture, wire_misfits: list[str]
) -> None:
    """``chat.send`` answers ``{runId, status}``: one without runId is named, its values not."""
    caplog.set_level(logging.ERROR, logger="gateway.wire")
    secret = "s3cret-token-value"
    assert not check_result("chat.send", {"status": secret})
    assert not check_result("no.such.method", {"token": secret})
    messages = [r.getMessage() for r in caplog.records if r.name == "gateway.wire"]
    assert messages[0].startswith("method chat.send answer does not fit ChatSendAck: runId")
    assert messages[-1] == "method no.such.method has no result model"
    assert all(secret not in m for m in messages)
    assert wire_misfits == messages
    wire_misfits.clear()


def test_a_fitting_answer_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    """The answer as the real gateway sends it passes quietly."""
    caplog.set_level(logging.ERROR, logger="gateway.wire")
    assert check_result("chat.send", {"runId": "r1", "status": "started"})
    assert [r for r in caplog.records if r.name == "gateway.wire"] == []


def test_frames_are_held_to_the_protocol_frame_models(
    caplog: pytest.LogCaptureFixture, wire_misfits: list[str]
) -> None:
    """An event or answer envelope outside EventFrame / ResponseFrame is named by field; the
    reference's own echo of an invalid request frame's non-string id passes."""
    caplog.set_level(logging.ERROR, logger="gateway.wire")
    refused = {"code": "INVALID_REQUEST", "message": "invalid request frame: ..."}
    assert check_frame({"type": "event", "event": "tick", "payload": {}, "seq": 3})
    assert check_frame({"type": "res", "id": "r1", "ok": True, "payload": {"a": 1}})
    assert check_frame({"type": "res", "id": 7, "ok": False, "error": refused})
    assert not check_frame({"type": "res", "id": 7, "ok": True, "payload": {}})
    assert not check_frame({"type": "event", "event": "tick", "seq": -1, "extra": "secret"})
    assert not check_frame({"type": "hello"})
    messages = [r.getMessage() for r in caplog.records if r.name == "gateway.wire"]
    assert messages == [
        "res frame does not fit ResponseFrame: id (string_type)",
        "event frame does not fit EventFrame: seq (greater_than_equal)",
        "event frame does not fit EventFrame: extra (extra_forbidden)",
        "frame type 'hello' is not one the gateway sends",
    ]
    assert wire_misfits == messages
    wire_misfits.clear()
