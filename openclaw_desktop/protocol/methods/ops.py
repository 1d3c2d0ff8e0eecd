"""``models.list``, ``cron.*``, ``exec.approvals.*``, ``logs.tail`` and the other operations'
params, in the reference's property order.

The open models (``health``, ``status``, ``system-presence``, ``models.authStatus``, the
approval lists) list what the gateway reads of params the reference serves whatever they
hold, objects or not; the method table declares them with ``check=False``, because the
derived schema (``type: object``) would refuse params that are not an object, which the
reference serves. ``diagnostics.stability`` and ``usage.cost`` are read by hand, as the
reference reads them (:mod:`~openclaw_desktop.protocol.methods.lenient`): their models
refuse in the reference's own sentences.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from openclaw_desktop.protocol.base import ClosedModel, OpenModel, WireModel
from openclaw_desktop.protocol.methods.lenient import (
    LenientParams,
    ParamsRefused,
    js_number,
    js_trim,
    optional_string,
    safe_integer,
)
from openclaw_desktop.protocol.methods.schema import NotTogether

__all__ = [
    "PARAMS",
    "ApprovalListParams",
    "CronListParams",
    "DiagnosticsStabilityParams",
    "EmptyParams",
    "ExecApprovalsNodeGetParams",
    "ExecApprovalsNodeSetParams",
    "HealthParams",
    "LogsTailParams",
    "ModelsAuthStatusParams",
    "ModelsListParams",
    "StabilityQuery",
    "StatusParams",
    "SystemPresenceParams",
    "UsageCostParams",
    "UsageWindow",
    "ZoneLookup",
]

NonEmpty = Annotated[str, Field(min_length=1)]


class ModelsListParams(ClosedModel):
    """``models.list``: not ``preparedOnly`` with ``refresh``, nor a ``sessionKey`` with an
    ``authProfileId`` (the reference's ``allOf`` of two ``not``)."""

    NOT_TOGETHER: ClassVar[tuple[NotTogether, ...]] = (
        NotTogether(("prepared_only", "refresh"), equal=(True, True)),
        NotTogether(("session_key", "auth_profile_id")),
    )

    agent_id: NonEmpty | None = None
    session_key: NonEmpty | None = None
    auth_profile_id: Annotated[str | None, Field(min_length=1, max_length=256)] = None
    provider: NonEmpty | None = None
    include_details: bool | None = None
    include_provider_capabilities: bool | None = None
    include_default_models: bool | None = None
    prepared_only: bool | None = None
    refresh: bool | None = None
    view: Literal["default", "configured", "provider-config", "all"] | None = None


class ModelsAuthStatusParams(OpenModel):
    """``models.authStatus``: the reference declares a closed schema but its handler
    checks none, so any params are served; what it reads is listed (any value: a
    non-string ``agentId`` is named by its JavaScript type in the refusal)."""

    refresh: Any = None
    agent_id: Any = None


class CronListParams(ClosedModel):
    """``cron.list``: a page of cron jobs, filtered and sorted."""

    session_key: NonEmpty | None = None
    session_agent_id: NonEmpty | None = None
    include_disabled: bool | None = None
    limit: Annotated[int | None, Field(ge=1, le=200)] = None
    offset: Annotated[int | None, Field(ge=0)] = None
    query: str | None = None
    enabled: Literal["all", "enabled", "disabled"] | None = None
    schedule_kind: Literal["all", "at", "every", "cron", "on-exit", "stream"] | None = None
    last_run_status: Literal["all", "ok", "error", "skipped", "unknown"] | None = None
    trigger: Literal["all", "conditional", "unconditional"] | None = None
    sort_by: Literal["nextRunAtMs", "updatedAtMs", "name"] | None = None
    sort_dir: Literal["asc", "desc"] | None = None
    agent_id: NonEmpty | None = None
    compact: bool | None = None
    include_delivery_previews: bool | None = None


class ExecApprovalsNodeGetParams(ClosedModel):
    """``exec.approvals.node.get``: a node's exec policy."""

    node_id: NonEmpty


class ExecApprovalsNodeSetParams(ClosedModel):
    """``exec.approvals.node.set`` without its ``oneOf`` (``file``, or ``native`` with
    ``baseHash``: the gateway's handler checks it)."""

    node_id: NonEmpty
    file: dict[str, Any] | None = None
    native: dict[str, Any] | None = None
    base_hash: NonEmpty | None = None


class LogsTailParams(ClosedModel):
    """``logs.tail``: the newest lines of the gateway's log, from ``cursor`` when given."""

    cursor: Annotated[int | None, Field(ge=0)] = None
    limit: Annotated[int | None, Field(ge=1, le=5000)] = None
    max_bytes: Annotated[int | None, Field(ge=1, le=1_000_000)] = None


class EmptyParams(ClosedModel):
    """The params of a method that takes none (``agents.list``, ``config.get``,
    ``cron.status``, ``exec.approvals.get``): an empty closed object."""


class HealthParams(OpenModel):
    """``health``: served whatever its params hold (the reference checks none); ``probe:
    true`` asks for a fresh snapshot instead of the cached one."""

    probe: Any = None


class StatusParams(OpenModel):
    """``status``: served whatever its params hold; ``includeCliProjection: true`` adds
    the roster ``openclaw status`` reads, ``includeChannelSummary: false`` leaves the
    channel summary out."""

    include_channel_summary: Any = None
    include_cli_projection: Any = None


class SystemPresenceParams(OpenModel):
    """``system-presence``: served whatever its params hold (it reads none)."""


class ApprovalListParams(OpenModel):
    """``exec.approval.list``, ``plugin.approval.list``, ``openclaw.approval.list``: served
    whatever their params hold (the reference's handlers read none)."""


#: ``diagnostics.stability``'s largest ``limit`` and the one it takes when none is given.
STABILITY_MAX_LIMIT = 1000
STABILITY_DEFAULT_LIMIT = 50


@dataclass(frozen=True)
class StabilityQuery:
    """What ``diagnostics.stability`` asks for: the newest ``limit`` events, of one
    ``type`` (None: any), after ``since_seq`` (None: from the first)."""

    limit: int
    type: str | None
    since_seq: int | None


def _non_negative(value: Any, field: str) -> int | None:
    """The reference's optional non-negative integer: absent, null or ``""`` is None; a
    string must be digits only; the number must be a safe integer."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and not re.fullmatch(r"[0-9]+", value):
        raise ParamsRefused(f"{field} must be a non-negative integer")
    parsed = safe_integer(value)
    if parsed is None or parsed < 0:
        raise ParamsRefused(f"{field} must be a non-negative integer")
    return parsed


class DiagnosticsStabilityParams(LenientParams):
    """``diagnostics.stability``: any params served; ``limit``, ``type`` and ``sinceSeq``
    read as the reference reads them (:meth:`query`)."""

    limit: Any = None
    type: Any = None
    since_seq: Any = None

    def query(self) -> StabilityQuery:
        """The query, or :class:`ParamsRefused` (``limit must be between 1 and 1000``,
        ``type must be a non-empty string``, ``sinceSeq must be a non-negative integer``;
        the first problem in that order)."""
        limit = _non_negative(self.limit, "limit")
        if limit is not None and not 1 <= limit <= STABILITY_MAX_LIMIT:
            raise ParamsRefused(f"limit must be between 1 and {STABILITY_MAX_LIMIT}")
        kind: str | None = None
        if self.type is not None and self.type != "":
            if not isinstance(self.type, str) or not js_trim(self.type):
                raise ParamsRefused("type must be a non-empty string")
            kind = js_trim(self.type)
        since = _non_negative(self.since_seq, "sinceSeq")
        return StabilityQuery(STABILITY_DEFAULT_LIMIT if limit is None else limit, kind, since)


#: ``usage.cost``: the most ``days`` it reads, and the days it sums when none are named.
USAGE_MAX_DAYS = 36_600
USAGE_DEFAULT_DAYS = 30
#: ``range`` presets (``all``: every day since the epoch).
USAGE_RANGES = {"7d": 7, "30d": 30, "90d": 90, "1y": 365}
#: A time zone by name (an IANA name or a UTC offset), None when it names none: the
#: gateway's lookup, handed to :meth:`UsageCostParams.window`.
ZoneLookup = Callable[[str], datetime.tzinfo | None]

_DAY_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_UTC_OFFSET_RE = re.compile(r"UTC([+-])([0-9]{1,2})(?::([0-5][0-9]))?")


@dataclass(frozen=True)
class UsageWindow:
    """The calendar days ``usage.cost`` sums, ``first`` to ``last`` inclusive, in ``zone``
    (None: the gateway host's local time, ``mode: "gateway"``), and whose: one agent
    (``agent_id``, None: the default one) or every agent."""

    first: datetime.date
    last: datetime.date
    zone: datetime.tzinfo | None
    agent_id: str | None
    all_agents: bool

    @property
    def days(self) -> int:
        """How many calendar days the window holds."""
        return (self.last - self.first).days + 1


def _calendar_day(value: Any) -> datetime.date | None:
    """A ``YYYY-MM-DD`` string (trimmed) naming a real day, else None. Years before 100
    are no day for the reference (its ``Date.UTC`` reads them as 19xx)."""
    match = _DAY_RE.fullmatch(js_trim(value)) if isinstance(value, str) else None
    if match is None or int(match[1]) < 100:
        return None
    try:
        return datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


def _utc_offset(value: Any) -> datetime.tzinfo | None:
    """``UTC+5``, ``UTC-03:30``... between UTC-12:00 and UTC+14:00, else None."""
    match = _UTC_OFFSET_RE.fullmatch(js_trim(value)) if isinstance(value, str) else None
    if match is None:
        return None
    minutes = (int(match[2]) * 60 + int(match[3] or 0)) * (1 if match[1] == "+" else -1)
    if not -720 <= minutes <= 840:
        return None
    return datetime.timezone(datetime.timedelta(minutes=minutes))


def _day_count(value: Any) -> int | None:
    """``days`` as the reference reads it: a finite number (or a string ``Number`` reads
    as one), floored and capped at :data:`USAGE_MAX_DAYS`; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if not js_trim(value):
            return None
        value = js_number(value)
    if not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer past any double: JavaScript's Infinity
        return None
    if not math.isfinite(number):
        return None
    return min(value if isinstance(value, int) else math.floor(number), USAGE_MAX_DAYS)


def _day_exists(day: datetime.date, zone: datetime.tzinfo | None) -> bool:
    """Whether ``day`` is a calendar day in ``zone`` (one a time zone skipped is not)."""
    if zone is None:
        return True
    noon = datetime.datetime.combine(day, datetime.time(12), zone)
    return noon.astimezone(datetime.UTC).astimezone(zone).date() == day


class UsageCostParams(LenientParams):
    """``usage.cost``: any params served; which days (``startDate``+``endDate``, else
    ``range``, else ``days``), in which calendar (``mode: "gateway"`` the gateway host's,
    ``mode: "specific"`` with ``timeZone`` or ``utcOffset``, else UTC), whose (``agentId``,
    ``agentScope: "all"``), read as the reference reads them (:meth:`window`)."""

    mode: Any = None
    utc_offset: Any = None
    time_zone: Any = None
    start_date: Any = None
    end_date: Any = None
    range: Any = None
    days: Any = None
    agent_id: Any = None
    agent_scope: Any = None

    def window(self, now: datetime.datetime, zone_named: ZoneLookup) -> UsageWindow:
        """The days asked for, ending today (``now`` in the calendar asked for) unless
        named; ``zone_named`` looks a ``timeZone`` up. Raises :class:`ParamsRefused` with
        the reference's text, its first problem in its order: the calendar, then the
        dates, then ``agentScope=all`` with an ``agentId``."""
        zone = self._zone(zone_named)
        first, last = self._days(now.astimezone(zone).date(), zone)
        agent = optional_string(self.agent_id)
        everyone = self.agent_scope == "all"
        if everyone and agent is not None:
            raise ParamsRefused("agentScope=all cannot be combined with agentId")
        return UsageWindow(first, last, zone, agent, everyone)

    def _zone(self, zone_named: ZoneLookup) -> datetime.tzinfo | None:
        if self.mode == "gateway":
            return None
        if self.mode != "specific":
            return datetime.UTC
        offset = _utc_offset(self.utc_offset)
        if self.time_zone is not None:
            name = optional_string(self.time_zone)
            found = zone_named(name) if name is not None else None
            if found is not None:
                return found
            if offset is not None:
                return offset
            raise ParamsRefused("invalid timeZone: expected a valid IANA time zone")
        if offset is not None:
            return offset
        blank = isinstance(self.utc_offset, str) and not js_trim(self.utc_offset)
        if self.utc_offset is not None and not blank:
            raise ParamsRefused("invalid utcOffset: expected UTC-12:00 through UTC+14:00")
        return datetime.UTC

    def _days(
        self, today: datetime.date, zone: datetime.tzinfo | None
    ) -> tuple[datetime.date, datetime.date]:
        for field, value in (("startDate", self.start_date), ("endDate", self.end_date)):
            absent = value is None or (isinstance(value, str) and not js_trim(value))
            if not absent and _calendar_day(value) is None:
                raise ParamsRefused(f"invalid {field}: expected a valid YYYY-MM-DD calendar date")
        start, end = _calendar_day(self.start_date), _calendar_day(self.end_date)
        if (start is None) != (end is None):
            raise ParamsRefused("startDate and endDate must be provided together")
        missing = ParamsRefused("calendar day does not exist in requested time zone")
        if start is not None and end is not None:
            if not (_day_exists(start, zone) and _day_exists(end, zone)):
                raise missing
            if start > end:
                raise ParamsRefused("startDate must not be after endDate")
            return start, end
        if self.range == "all":
            epoch = datetime.datetime.fromtimestamp(0, datetime.UTC).astimezone(zone)
            return epoch.date(), today
        preset = USAGE_RANGES.get(self.range) if isinstance(self.range, str) else None
        counted = preset if preset is not None else _day_count(self.days)
        days = max(1, USAGE_DEFAULT_DAYS if counted is None else counted)
        first = today - datetime.timedelta(days=days - 1)
        if not _day_exists(first, zone):
            raise missing
        return first, today


#: The params model of each of these methods, by method name.
PARAMS: dict[str, type[WireModel]] = {
    "models.list": ModelsListParams,
    "models.authStatus": ModelsAuthStatusParams,
    "health": HealthParams,
    "status": StatusParams,
    "system-presence": SystemPresenceParams,
    "cron.list": CronListParams,
    "exec.approvals.node.get": ExecApprovalsNodeGetParams,
    "exec.approvals.node.set": ExecApprovalsNodeSetParams,
    "logs.tail": LogsTailParams,
    "agents.list": EmptyParams,
    "config.get": EmptyParams,
    "cron.status": EmptyParams,
    "exec.approvals.get": EmptyParams,
    "exec.approval.list": ApprovalListParams,
    "plugin.approval.list": ApprovalListParams,
    "openclaw.approval.list": ApprovalListParams,
    "diagnostics.stability": DiagnosticsStabilityParams,
    "usage.cost": UsageCostParams,
}
