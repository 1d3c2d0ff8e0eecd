"""Unit tests for gateway.handshake.iterative_json: json.loads' values, at any depth."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.handshake import parse_first_frame
from gateway.handshake.iterative_json import loads_iterative

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, database=None, deadline=None)
@given(value=json_values, pretty=st.booleans())
def test_reads_what_json_loads_reads(value: Any, pretty: bool) -> None:
    """Any JSON text (compact or indented, escaped or not) gives json.loads' value."""
    text = json.dumps(value, indent=1 if pretty else None, ensure_ascii=pretty)
    assert json.dumps(loads_iterative(text)) == json.dumps(json.loads(text))


def _reject_constant(name: str) -> Any:
    raise ValueError(name)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "{",
        "[1,]",
        '{"a":1,}',
        '{"a"}',
        '{"a":}',
        "[1 2]",
        "NaN",
        "[Infinity]",
        "\ufeff{}",
        '"\x01"',
        "01",
        "1.",
        ".5",
        "-",
        '{"a":1}x',
        "[]]",
        "tru",
        '"\\x"',
        "{1:2}",
        "[,1]",
        "1 2",
        "[" * 5 + "]" * 4,
    ],
)
def test_refuses_what_json_loads_refuses(text: str) -> None:
    """Not exactly one JSON value: ValueError, as json.loads (constants refused)."""
    with pytest.raises(ValueError, match=r"."):
        json.loads(text, parse_constant=_reject_constant)
    with pytest.raises(ValueError, match=r"."):
        loads_iterative(text)


def test_duplicate_keys_keep_the_last_value() -> None:
    """As JSON.parse and json.loads, the last of duplicate keys wins."""
    assert loads_iterative('{"a":1,"b":2,"a":3}') == json.loads('{"a":1,"b":2,"a":3}')


def test_parses_far_past_the_recursion_limit() -> None:
    """20,000 levels parse; json.loads gives up."""
    text = "[" * 20_000 + "]" * 20_000
    with pytest.raises(RecursionError):
        json.loads(text)
    value = loads_iterative(text)
    for _ in range(19_999):
        (value,) = value
    assert value == []


def test_a_deep_first_frame_is_judged_like_a_shallow_one() -> None:
    """A connect request with params nested 3,000 deep reaches the params check."""
    deep = "[" * 3000 + "]" * 3000
    request_id, params = parse_first_frame(
        '{"type":"req","id":"c1","method":"connect","params":{"x":' + deep + "}}"
    )
    assert request_id == "c1"
    assert list(params) == ["x"]
