"""The params models of the operations the reference reads by hand
(:mod:`openclaw_desktop.protocol.methods.lenient`): ``diagnostics.stability``, ``usage.cost``
and the approval lists (the Control UI's two are in test_protocol_control_ui_params), and
the JavaScript readings they rest on. Each is declared on the table unchecked (the
reference serves params a schema would refuse); its model reads them as the reference's
JavaScript does and refuses in the reference's own sentences, which a real dispatch answers
word for word (the texts and the accepted inputs were asked of the real gateway 2026.9.6;
the side-by-side test asks it again: ``tests/interop/test_gw_params_side_by_side.py``)."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest

from gateway.app import GatewayApp
from gateway.methods import TABLE
from gateway.methods.closed import derived_schema
from gateway.usage import time_zone
from openclaw_desktop.protocol.methods import PARAMS
from openclaw_desktop.protocol.methods.lenient import (
    ParamsRefused,
    js_number,
    js_trim,
    optional_string,
    safe_integer,
)
from openclaw_desktop.protocol.methods.ops import (
    ApprovalListParams,
    DiagnosticsStabilityParams,
    StabilityQuery,
    UsageCostParams,
)
from tests.helpers.method_dispatch import answer

#: Each hand-read (or unread) method: its model and what it reads, in the reference's order.
HAND_READ: dict[str, tuple[type[Any], list[str]]] = {
    "diagnostics.stability": (DiagnosticsStabilityParams, ["limit", "type", "sinceSeq"]),
    "usage.cost": (
        UsageCostParams,
        [
            "mode",
            "utcOffset",
            "timeZone",
            "startDate",
            "endDate",
            "range",
            "days",
            "agentId",
            "agentScope",
        ],
    ),
    "exec.approval.list": (ApprovalListParams, []),
    "plugin.approval.list": (ApprovalListParams, []),
    "openclaw.approval.list": (ApprovalListParams, []),
}


@pytest.mark.parametrize("method", sorted(HAND_READ))
def test_the_model_is_declared_unchecked_and_lists_what_is_read(method: str) -> None:
    model, reads = HAND_READ[method]
    assert PARAMS[method] is model
    assert TABLE[method].params is model
    assert not TABLE[method].check
    assert derived_schema(model) == {"type": "object", "properties": {key: {} for key in reads}}


# ------------------------------------------------------------------ JavaScript semantics


def test_js_trim_is_javascripts() -> None:
    assert js_trim(" \ufeff\u3000x\u2028\t") == "x"
    assert js_trim("\x1fx\x85") == "\x1fx\x85"  # str.strip() would take these
    assert optional_string("  ") is None
    assert optional_string(5) is None
    assert optional_string(" a ") == "a"


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        (5, 5),
        (5.0, 5),
        (-0.0, 0),
        (" -12 ", -12),
        ("+7", 7),
        (2**53 - 1, 2**53 - 1),
        (2**53, None),
        ("9007199254740993", None),
        (1e20, None),
        (5.5, None),
        (True, None),
        ("1e3", None),
        ("", None),
        (None, None),
    ],
)
def test_safe_integer_is_parse_strict_integer(value: Any, parsed: int | None) -> None:
    assert safe_integer(value) == parsed


@pytest.mark.parametrize(
    ("text", "number"),
    [
        (" 12 ", 12.0),
        ("1e1", 10.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("-2", -2.0),
        ("0x10", 16.0),
        ("0B101", 5.0),
        ("0o17", 15.0),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("", 0.0),
    ],
)
def test_js_number_reads_what_number_reads(text: str, number: float) -> None:
    assert js_number(text) == number


@pytest.mark.parametrize(
    "text", ["abc", "12abc", "-0x10", "+0x1", "1_000", "0x", "infinity", "--1"]
)
def test_js_number_is_nan_for_the_rest(text: str) -> None:
    assert math.isnan(js_number(text))


# ------------------------------------------------------------------ diagnostics.stability


@pytest.mark.parametrize(
    ("params", "query"),
    [
        ({}, StabilityQuery(50, None, None)),
        ({"limit": "5", "type": " x ", "sinceSeq": 3.0}, StabilityQuery(5, "x", 3)),
        ({"limit": "", "type": "", "sinceSeq": None}, StabilityQuery(50, None, None)),
        ({"limit": 1000}, StabilityQuery(1000, None, None)),
        ({"since_seq": -1, "x": 1}, StabilityQuery(50, None, None)),  # wire names only
        ("abc", StabilityQuery(50, None, None)),
        ([1], StabilityQuery(50, None, None)),
        (None, StabilityQuery(50, None, None)),
    ],
)
def test_stability_reads_as_the_reference(params: Any, query: StabilityQuery) -> None:
    assert DiagnosticsStabilityParams.lenient(params).query() == query


#: (method, params, the reference's INVALID_REQUEST text).
REFUSED: list[tuple[str, Any, str]] = [
    ("diagnostics.stability", {"limit": 0}, "limit must be between 1 and 1000"),
    ("diagnostics.stability", {"limit": 1001}, "limit must be between 1 and 1000"),
    ("diagnostics.stability", {"limit": 1e20}, "limit must be a non-negative integer"),
    ("diagnostics.stability", {"limit": " 5"}, "limit must be a non-negative integer"),
    ("diagnostics.stability", {"limit": True}, "limit must be a non-negative integer"),
    ("diagnostics.stability", {"limit": 5.5}, "limit must be a non-negative integer"),
    ("diagnostics.stability", {"limit": "abc", "type": 5}, "limit must be a non-negative integer"),
    ("diagnostics.stability", {"type": 5}, "type must be a non-empty string"),
    ("diagnostics.stability", {"type": " \ufeff"}, "type must be a non-empty string"),
    ("diagnostics.stability", {"sinceSeq": -1}, "sinceSeq must be a non-negative integer"),
    (
        "diagnostics.stability",
        {"sinceSeq": 9007199254740993},
        "sinceSeq must be a non-negative integer",
    ),
    ("diagnostics.stability", {"sinceSeq": "+1"}, "sinceSeq must be a non-negative integer"),
    ("usage.cost", {"startDate": "2026-01-01"}, "startDate and endDate must be provided together"),
    (
        "usage.cost",
        {"startDate": 5, "endDate": "2026-01-02"},
        "invalid startDate: expected a valid YYYY-MM-DD calendar date",
    ),
    (
        "usage.cost",
        {"startDate": "2026-02-30", "endDate": "bad"},
        "invalid startDate: expected a valid YYYY-MM-DD calendar date",
    ),
    (
        "usage.cost",
        {"startDate": "0001-01-01", "endDate": "2026-01-02"},
        "invalid startDate: expected a valid YYYY-MM-DD calendar date",
    ),
    (
        "usage.cost",
        {"startDate": "2026-01-01", "endDate": "2026-1-2"},
        "invalid endDate: expected a valid YYYY-MM-DD calendar date",
    ),
    (
        "usage.cost",
        {"startDate": "2026-01-03", "endDate": "2026-01-02"},
        "startDate must not be after endDate",
    ),
    (
        "usage.cost",
        {"agentScope": "all", "agentId": " main "},
        "agentScope=all cannot be combined with agentId",
    ),
    (
        "usage.cost",
        {"mode": "specific", "utcOffset": "bad"},
        "invalid utcOffset: expected UTC-12:00 through UTC+14:00",
    ),
    (
        "usage.cost",
        {"mode": "specific", "utcOffset": 5},
        "invalid utcOffset: expected UTC-12:00 through UTC+14:00",
    ),
    (
        "usage.cost",
        {"mode": "specific", "utcOffset": "UTC+15"},
        "invalid utcOffset: expected UTC-12:00 through UTC+14:00",
    ),
    (
        "usage.cost",
        {"mode": "specific", "timeZone": "Nowhere/City"},
        "invalid timeZone: expected a valid IANA time zone",
    ),
    (
        "usage.cost",
        {"mode": "specific", "timeZone": ""},
        "invalid timeZone: expected a valid IANA time zone",
    ),
    (
        "usage.cost",
        {"mode": "specific", "timeZone": 5, "startDate": "x"},
        "invalid timeZone: expected a valid IANA time zone",
    ),
]


@pytest.mark.parametrize(
    ("method", "params", "text"), REFUSED, ids=[f"{m}-{i}" for i, (m, _, _) in enumerate(REFUSED)]
)
async def test_refused_in_the_reference_sentence(
    app: GatewayApp, method: str, params: Any, text: str
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is False
    assert frame["error"] == {"code": "INVALID_REQUEST", "message": text}


@pytest.mark.parametrize(
    "params",
    [None, "abc", [1], 5, {"x": 1}, {"limit": "5", "type": "x", "sinceSeq": "0"}, {"limit": ""}],
)
async def test_stability_serves_what_the_reference_serves(app: GatewayApp, params: Any) -> None:
    frame = await answer(app, "diagnostics.stability", params)
    assert frame["ok"] is True
    assert frame["payload"]["events"] == []


# ------------------------------------------------------------------ usage.cost

NOW = datetime.datetime(2026, 3, 10, 23, 30, tzinfo=datetime.UTC)
DAY = datetime.date


def _window(params: Any) -> tuple[DAY, DAY, Any]:
    window = UsageCostParams.lenient(params).window(NOW, time_zone)
    return window.first, window.last, window.zone


@pytest.mark.parametrize(
    ("params", "first", "last"),
    [
        ({}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ("abc", DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"days": 0}, DAY(2026, 3, 10), DAY(2026, 3, 10)),
        ({"days": "0"}, DAY(2026, 3, 10), DAY(2026, 3, 10)),
        ({"days": 0.5}, DAY(2026, 3, 10), DAY(2026, 3, 10)),
        ({"days": -5}, DAY(2026, 3, 10), DAY(2026, 3, 10)),
        ({"days": " 7 "}, DAY(2026, 3, 4), DAY(2026, 3, 10)),
        ({"days": "1e1"}, DAY(2026, 3, 1), DAY(2026, 3, 10)),
        ({"days": "0x10"}, DAY(2026, 2, 23), DAY(2026, 3, 10)),
        ({"days": "abc"}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"days": True}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"days": [3]}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"days": "Infinity"}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"days": 10**400}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"days": 1e12}, DAY(2026, 3, 10) - datetime.timedelta(days=36_599), DAY(2026, 3, 10)),
        ({"range": "7d", "days": 2}, DAY(2026, 3, 4), DAY(2026, 3, 10)),
        ({"range": "1y"}, DAY(2025, 3, 11), DAY(2026, 3, 10)),
        ({"range": "all"}, DAY(1970, 1, 1), DAY(2026, 3, 10)),
        ({"range": "bogus", "days": 3}, DAY(2026, 3, 8), DAY(2026, 3, 10)),
        ({"range": ["7d"]}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        (
            {"startDate": " 2026-01-01 ", "endDate": "2026-01-02"},
            DAY(2026, 1, 1),
            DAY(2026, 1, 2),
        ),
        ({"startDate": "", "endDate": " "}, DAY(2026, 2, 9), DAY(2026, 3, 10)),
        ({"startDate": None, "days": 2}, DAY(2026, 3, 9), DAY(2026, 3, 10)),
        ({"start_date": "x", "days": 2}, DAY(2026, 3, 9), DAY(2026, 3, 10)),  # wire names only
        ({"mode": "gateway", "utcOffset": "bad", "days": 1}, None, None),
        ({"mode": "other", "utcOffset": "bad", "days": 1}, DAY(2026, 3, 10), DAY(2026, 3, 10)),
        ({"mode": "specific", "utcOffset": " ", "days": 1}, DAY(2026, 3, 10), DAY(2026, 3, 10)),
        ({"mode": "specific", "timeZone": "Asia/Tokyo", "days": 1}, DAY(2026, 3, 11), None),
        ({"mode": "specific", "utcOffset": "UTC+0:30", "days": 1}, DAY(2026, 3, 11), None),
        ({"mode": "specific", "utcOffset": "UTC-12", "days": 1}, DAY(2026, 3, 10), None),
        (
            {"mode": "specific", "timeZone": "Nowhere", "utcOffset": "UTC+14:00", "days": 1},
            DAY(2026, 3, 11),
            None,
        ),
    ],
)
def test_usage_reads_the_days_as_the_reference(params: Any, first: Any, last: Any) -> None:
    """Which days (``None``: the calendar's own today, compared alone): dates trimmed,
    blank ones absent; ``days`` as ``Number`` reads it, floored, at least 1, at most
    36600; ``range`` before ``days``; today of the calendar asked for."""
    got_first, got_last, zone = _window(params)
    if first is None:  # the host's calendar: today there
        assert zone is None and got_first == got_last
    elif last is None:  # another calendar: its today is first and last
        assert got_first == got_last == first and zone is not None
    else:
        assert (got_first, got_last) == (first, last)


def test_usage_names_whose_usage() -> None:
    window = UsageCostParams.lenient({"agentId": " ops "}).window(NOW, time_zone)
    assert (window.agent_id, window.all_agents) == ("ops", False)
    window = UsageCostParams.lenient({"agentScope": "all", "agentId": 5}).window(NOW, time_zone)
    assert (window.agent_id, window.all_agents) == (None, True)
    assert (
        UsageCostParams.lenient({"startDate": "2026-01-01", "endDate": "2026-01-31"})
        .window(NOW, time_zone)
        .days
        == 31
    )


def test_a_day_a_time_zone_skipped_does_not_exist() -> None:
    """Samoa skipped 2011-12-30 (as the reference finds no start of that day)."""
    if time_zone("Pacific/Apia") is None:
        pytest.skip("no time zone database on this host")
    params = {
        "mode": "specific",
        "timeZone": "Pacific/Apia",
        "startDate": "2011-12-30",
        "endDate": "2011-12-31",
    }
    with pytest.raises(ParamsRefused, match="calendar day does not exist in requested time zone"):
        UsageCostParams.lenient(params).window(NOW, time_zone)


@pytest.mark.parametrize(
    ("name", "offset"),
    [("+05:30", 330), ("-03", -180), ("+0530", 330), ("\u221205:00", -300), ("-00", 0)],
)
def test_a_time_zone_may_be_a_utc_offset(name: str, offset: int) -> None:
    zone = time_zone(name)
    assert zone is not None
    assert zone.utcoffset(None) == datetime.timedelta(minutes=offset)


@pytest.mark.parametrize("name", ["+24:00", "+5", "+05:3", "Z", "Factory", " UTC", "Nowhere/City"])
def test_what_names_no_time_zone(name: str) -> None:
    assert time_zone(name) is None


def test_iana_names_in_any_case() -> None:
    if time_zone("Asia/Tokyo") is None:
        pytest.skip("no time zone database on this host")
    assert str(time_zone("asia/tokyo")) == "Asia/Tokyo"


# ------------------------------------------------------------------ approval lists


@pytest.mark.parametrize(
    "method", ["exec.approval.list", "plugin.approval.list", "openclaw.approval.list"]
)
@pytest.mark.parametrize("params", [None, "abc", [1], 5, {"x": 1}])
async def test_the_approval_lists_serve_any_params(
    app: GatewayApp, method: str, params: Any
) -> None:
    frame = await answer(app, method, params)
    assert frame["ok"] is True
    assert frame["payload"] == []
