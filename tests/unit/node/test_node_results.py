"""Unit tests for InvokeResult and its node.invoke.result wire shape."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.node import InvokeResult
from openclaw_desktop.protocol import NodeErrorCode
from openclaw_desktop.protocol.methods.nodes import NodeInvokeResultParams


def test_success_with_payload() -> None:
    """A success carries its payload under 'payload'."""
    result = InvokeResult.success({"sent": True})
    assert result.ok is True
    assert result.to_wire("inv-1", "node-1") == {
        "id": "inv-1",
        "nodeId": "node-1",
        "ok": True,
        "payload": {"sent": True},
    }


def test_success_without_payload_leaves_it_out() -> None:
    """A None payload is not written."""
    assert InvokeResult.success().to_wire("i", "n") == {"id": "i", "nodeId": "n", "ok": True}


@pytest.mark.parametrize("payload", [{}, [], 0, False, ""])
def test_falsy_payloads_are_kept(payload: Any) -> None:
    """Empty or falsy payloads are real answers and are sent."""
    assert InvokeResult.success(payload).to_wire("i", "n")["payload"] == payload


def test_error_wire_shape() -> None:
    """An error carries {code, message} and no payload."""
    result = InvokeResult.error(NodeErrorCode.INVALID_REQUEST, "title required")
    assert result.to_wire("i", "n") == {
        "id": "i",
        "nodeId": "n",
        "ok": False,
        "error": {"code": "INVALID_REQUEST", "message": "title required"},
    }


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (NodeErrorCode.UNAVAILABLE, "no camera", "UNAVAILABLE: no camera"),
        (NodeErrorCode.UNAVAILABLE, "UNAVAILABLE: no camera", "UNAVAILABLE: no camera"),
        (NodeErrorCode.UNAVAILABLE, "UNAVAILABLE:no camera", "UNAVAILABLE:no camera"),
        (NodeErrorCode.TIMEOUT, "UNAVAILABLE: x", "TIMEOUT: UNAVAILABLE: x"),
        (NodeErrorCode.CANCELLED, "UNAVAILABLE", "CANCELLED: UNAVAILABLE"),
        ("PROBE_FAILURE", "probe asked to fail", "PROBE_FAILURE: probe asked to fail"),
    ],
)
def test_error_message_prefix_is_never_doubled(
    code: NodeErrorCode | str, message: str, expected: str
) -> None:
    """The message starts with 'CODE: ' exactly once."""
    result = InvokeResult.error(code, message)
    assert result.error_message == expected
    assert result.error_code == str(code)


def test_error_code_is_a_plain_string() -> None:
    """The enum member is stored as its wire string."""
    result = InvokeResult.error(NodeErrorCode.NOT_AUTHORIZED, "disabled")
    assert type(result.error_code) is str
    assert result.error_code == "NOT_AUTHORIZED"


@pytest.mark.parametrize(
    "result",
    [
        InvokeResult.success({"a": 1}),
        InvokeResult.success(),
        InvokeResult.error(NodeErrorCode.UNAVAILABLE, "x"),
        InvokeResult.error(NodeErrorCode.UNAVAILABLE, ""),
    ],
)
def test_wire_shape_is_accepted_by_the_closed_result_model(result: InvokeResult) -> None:
    """What we send validates against the node.invoke.result schema."""
    wire = result.to_wire("inv", "node")
    assert NodeInvokeResultParams.model_validate(wire).to_wire() == wire


def test_an_empty_message_is_left_out() -> None:
    """The reference refuses an empty ``error.message``: a code alone is sent instead."""
    wire = InvokeResult.error(NodeErrorCode.UNAVAILABLE, "").to_wire("inv", "node")
    assert wire["error"] == {"code": "UNAVAILABLE"}
