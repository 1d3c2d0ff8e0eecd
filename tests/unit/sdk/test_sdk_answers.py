"""Unit tests of reading gateway answers through their result models
(:mod:`openclaw_desktop.sdk.answers`)."""

from __future__ import annotations

import pytest

from openclaw_desktop.errors import InvalidState, ProtocolError
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.results.nodes import NodeAckResult, NodeInvokeProgressResult
from openclaw_desktop.protocol.results.sessions import SessionsListResult
from openclaw_desktop.sdk.answers import as_wire, parse_result
from openclaw_desktop.sdk.errors import InvalidResult

SECRET = "sk-live-do-not-log"


def test_an_answer_that_fits_is_its_model_and_goes_back_as_sent() -> None:
    sent = {"ok": True, "ignored": None, "newerField": {"x": 1}}
    result = parse_result(Method.NODE_INVOKE_PROGRESS, sent, NodeInvokeProgressResult)
    assert result.ok is True and result.ignored is None
    assert as_wire(result) == sent  # nulls and fields a newer gateway adds are kept


def test_a_misfit_names_the_fields_never_the_values() -> None:
    answer = {"ts": SECRET, "count": 1, "sessions": [{"key": 5, "token": SECRET}]}
    with pytest.raises(InvalidResult) as caught:
        parse_result(Method.SESSIONS_LIST, answer, SessionsListResult)
    error = caught.value
    assert isinstance(error, ProtocolError)
    assert error.method == "sessions.list"
    assert "ts:" in error.problems and "sessions/0/key:" in error.problems
    assert SECRET not in str(error)
    assert str(error).startswith("invalid sessions.list answer: ")


@pytest.mark.parametrize("answer", [None, "ok", [], 3])
def test_an_answer_that_is_not_an_object_is_refused_as_a_whole(answer: object) -> None:
    with pytest.raises(InvalidResult, match=r"invalid node.invoke.result answer: payload: "):
        parse_result(Method.NODE_INVOKE_RESULT, answer, NodeAckResult)


def test_the_model_must_be_the_methods_own() -> None:
    with pytest.raises(InvalidState, match="NodeAckResult is not the result model of"):
        parse_result(Method.SESSIONS_LIST, {"ok": True}, NodeAckResult)
