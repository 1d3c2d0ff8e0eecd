"""location.get and device.apps params and payloads, pure: the reference's defaults and
clamps, the typed refusals, GeoClue's unknown values and the wire shape of a fix."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.devices.geoclue import ACCURACY_LEVELS, GeoFix
from openclaw_desktop.node.handlers.apps import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    AppsRequest,
    parse_apps_request,
)
from openclaw_desktop.node.handlers.location import (
    DEFAULT_TIMEOUT_MS,
    LocationRequest,
    fix_payload,
    parse_location_request,
)
from openclaw_desktop.node.handlers.params import BadParams


def test_location_defaults_and_clamps() -> None:
    """Absent or null: 10 s, any age, balanced; timeoutMs clamped to 1..60 s and floored;
    a negative maxAgeMs means any age, as on the reference."""
    assert parse_location_request(None) == LocationRequest(DEFAULT_TIMEOUT_MS, None, "balanced")
    nulls = {"timeoutMs": None, "maxAgeMs": None, "desiredAccuracy": None}
    assert parse_location_request(nulls) == LocationRequest()
    assert parse_location_request({"timeoutMs": 5}).timeout_ms == 1000
    assert parse_location_request({"timeoutMs": 10**9}).timeout_ms == 60_000
    assert parse_location_request({"timeoutMs": 2500.9}).timeout_ms == 2500
    assert parse_location_request({"maxAgeMs": 15000}).max_age_ms == 15000
    assert parse_location_request({"maxAgeMs": 0}).max_age_ms == 0
    assert parse_location_request({"maxAgeMs": -5}).max_age_ms is None
    assert parse_location_request({"extra": 1}) == LocationRequest()
    assert ACCURACY_LEVELS == {"coarse": 4, "balanced": 6, "precise": 8}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ("x", "params"),
        ({"timeoutMs": "1000"}, "timeoutMs"),
        ({"timeoutMs": False}, "timeoutMs"),
        ({"timeoutMs": float("nan")}, "timeoutMs"),
        ({"maxAgeMs": "old"}, "maxAgeMs"),
        ({"desiredAccuracy": "PRECISE"}, "desiredAccuracy"),
        ({"desiredAccuracy": ["precise"]}, "desiredAccuracy"),
    ],
)
def test_location_refusals_name_the_field(params: Any, field: str) -> None:
    """A wrong type or an unknown accuracy is INVALID_REQUEST naming the field."""
    with pytest.raises(BadParams) as caught:
        parse_location_request(params)
    assert caught.value.code == "INVALID_REQUEST"
    assert field in caught.value.message


def test_fix_payload_has_the_reference_shape() -> None:
    """Known values are sent, unknown ones left out; ISO UTC with milliseconds; precise
    means 100 m or better; the provider is unknown."""
    fix = GeoFix(48.2, 16.37, 100.0, 182.0, 0.0, 270.0, 1767443696.25)
    assert fix_payload(fix) == {
        "lat": 48.2,
        "lon": 16.37,
        "accuracyMeters": 100.0,
        "altitudeMeters": 182.0,
        "speedMps": 0.0,
        "headingDeg": 270.0,
        "timestamp": "2026-01-03T12:34:56.250Z",
        "isPrecise": True,
        "source": "unknown",
    }
    rough = fix_payload(GeoFix(1.0, 2.0, 100.5, None, None, None, 1767443696.0))
    assert "altitudeMeters" not in rough and "speedMps" not in rough and "headingDeg" not in rough
    assert rough["isPrecise"] is False
    assert rough["timestamp"] == "2026-01-03T12:34:56.000Z"


def test_apps_defaults_and_clamps() -> None:
    """Absent: no query, 100, no system apps; limit clamped to 1..200; query trimmed; an
    integral float is an integer (JSON has one number type)."""
    assert parse_apps_request(None) == AppsRequest(None, DEFAULT_LIMIT, False)
    assert parse_apps_request({"limit": 0}).limit == 1
    assert parse_apps_request({"limit": -7}).limit == 1
    assert parse_apps_request({"limit": 10_000}).limit == MAX_LIMIT
    assert parse_apps_request({"limit": 5.0}).limit == 5
    assert parse_apps_request({"query": "  fire "}).query == "fire"
    assert parse_apps_request({"includeSystem": True}).include_system is True


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ([], "params"),
        ({"query": ""}, "query"),
        ({"query": " \t"}, "query"),
        ({"query": None}, "query"),
        ({"limit": None}, "limit"),
        ({"limit": 1.5}, "limit"),
        ({"limit": float("inf")}, "limit"),
        ({"limit": "5"}, "limit"),
        ({"limit": False}, "limit"),
        ({"includeSystem": 1}, "includeSystem"),
        ({"includeSystem": None}, "includeSystem"),
        ({"bundleId": "x"}, "bundleId"),
    ],
)
def test_apps_params_are_closed(params: Any, field: str) -> None:
    """Closed like the reference's schema: unknown keys, nulls and wrong types are refused."""
    with pytest.raises(BadParams) as caught:
        parse_apps_request(params)
    assert caught.value.code == "INVALID_REQUEST"
    assert field in caught.value.message
