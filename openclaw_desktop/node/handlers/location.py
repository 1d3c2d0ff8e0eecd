"""``location.get``: this computer's position from GeoClue2, off until the user enables it.

Params (the reference's): ``timeoutMs`` (default 10000, clamped to 1000..60000),
``maxAgeMs`` (a fix older than this is not answered; absent or negative means any age) and
``desiredAccuracy`` (``coarse`` | ``balanced`` | ``precise``, default balanced; GeoClue
levels 4, 6 and 8). A JSON ``null`` counts as absent; other keys are ignored, as on the
reference's nodes.

Decision where the reference is silent: it takes a wrongly typed value as absent; here a
wrong type (``"timeoutMs": "soon"``) or an unknown accuracy name is ``INVALID_REQUEST``
naming the field, so an agent hears its mistake instead of getting a different request.

Result: ``lat``, ``lon``, ``accuracyMeters``, ``altitudeMeters``/``speedMps``/``headingDeg``
when GeoClue knows them, ``timestamp`` (ISO 8601, UTC, milliseconds), ``isPrecise`` (accuracy
of 100 m or better) and ``source`` (``unknown``: GeoClue does not say which provider).

Errors: ``LOCATION_DISABLED`` (the setting is off, or GeoClue refuses this user or app),
``LOCATION_TIMEOUT`` (no fix in time) and ``LOCATION_UNAVAILABLE`` (GeoClue failed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.devices.geoclue import ACCURACY_LEVELS, GeoClue, GeoFix
from openclaw_desktop.node.context import Area, NodeContext
from openclaw_desktop.node.handlers.params import BadParams, params_object
from openclaw_desktop.node.registry import Availability, CommandSpec, Probe
from openclaw_desktop.node.results import Handler, InvokeResult

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "LocationRequest",
    "fix_payload",
    "location_area",
    "make_location_get",
    "parse_location_request",
]

DEFAULT_TIMEOUT_MS = 10_000
MIN_TIMEOUT_MS = 1_000
MAX_TIMEOUT_MS = 60_000
#: Accuracy (metres) at or below which a fix counts as precise, as on the reference.
PRECISE_METERS = 100.0


@dataclass(frozen=True, slots=True)
class LocationRequest:
    """Validated ``location.get`` params."""

    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_age_ms: float | None = None
    accuracy: str = "balanced"


def _number(params: dict[str, Any], key: str) -> float | None:
    value = params.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadParams(f"{key} must be a number (milliseconds)")
    return float(value)


def parse_location_request(params: Any) -> LocationRequest:
    """Validate ``location.get`` params.

    Raises:
        BadParams: not an object, or a field of the wrong type.
    """
    body = params_object(params)
    timeout = _number(body, "timeoutMs")
    timeout_ms = DEFAULT_TIMEOUT_MS if timeout is None else math.floor(timeout)
    timeout_ms = min(MAX_TIMEOUT_MS, max(MIN_TIMEOUT_MS, timeout_ms))
    max_age = _number(body, "maxAgeMs")
    accuracy = body.get("desiredAccuracy")
    if accuracy is None:
        accuracy = "balanced"
    if not isinstance(accuracy, str) or accuracy not in ACCURACY_LEVELS:
        raise BadParams(f"desiredAccuracy must be one of {', '.join(ACCURACY_LEVELS)}")
    return LocationRequest(
        timeout_ms=timeout_ms,
        max_age_ms=max_age if max_age is not None and max_age >= 0 else None,
        accuracy=accuracy,
    )


def _iso(seconds: float) -> str:
    whole = math.floor(seconds)
    millis = min(999, round((seconds - whole) * 1000))
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{millis:03d}Z"


def fix_payload(fix: GeoFix) -> dict[str, Any]:
    """The reference's ``location.get`` payload for one fix."""
    payload: dict[str, Any] = {"lat": fix.lat, "lon": fix.lon, "accuracyMeters": fix.accuracy_m}
    if fix.altitude_m is not None:
        payload["altitudeMeters"] = fix.altitude_m
    if fix.speed_mps is not None:
        payload["speedMps"] = fix.speed_mps
    if fix.heading_deg is not None:
        payload["headingDeg"] = fix.heading_deg
    payload["timestamp"] = _iso(fix.timestamp)
    payload["isPrecise"] = fix.accuracy_m <= PRECISE_METERS
    payload["source"] = "unknown"
    return payload


def make_location_get(geoclue: Callable[[], GeoClue]) -> Handler:
    """The ``location.get`` handler asking the GeoClue that ``geoclue()`` gives (read at
    each invoke, so a changed bus setting applies at once)."""

    async def location_get(params: Any) -> InvokeResult:
        request = parse_location_request(params)
        max_age_s = None if request.max_age_ms is None else request.max_age_ms / 1000
        fix = await geoclue().locate(
            ACCURACY_LEVELS[request.accuracy], request.timeout_ms / 1000, max_age_s
        )
        return InvokeResult.success(fix_payload(fix))

    return location_get


def _probe(geoclue: Callable[[], GeoClue]) -> Probe:
    async def geoclue_available() -> Availability:
        status = await geoclue().probe()
        return Availability.yes() if status.available else Availability.no(status.reason)

    return geoclue_available


def location_area(ctx: NodeContext) -> Area:
    """``location.get``, gated by the location setting (off by default: the reference's
    ``LOCATION_DISABLED: enable Location in Settings``) and by GeoClue2 being on its bus."""

    def geoclue() -> GeoClue:
        return GeoClue(ctx.settings().location_bus or None)

    spec = CommandSpec(
        "location.get",
        "location",
        availability=_probe(geoclue),
        setting="location",
        permission="location",
        disabled_code="LOCATION_DISABLED",
        disabled_message="enable Location in Settings",
        unavailable_code="LOCATION_UNAVAILABLE",
    )
    return Area((spec,), {"location.get": make_location_get(geoclue)})
