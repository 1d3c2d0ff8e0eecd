"""Token usage per calendar day, summed from the transcripts' assistant messages (their
``usage`` block), for ``usage.cost``. Reads every transcript file of the folder, archived
ones too (a reset session's usage happened all the same); a line that is not JSON is
skipped. The days are those of the calendar asked for (UTC, a UTC offset, an IANA time
zone, or the host's local time), looked up by :func:`time_zone`."""

from __future__ import annotations

import datetime
import functools
import json
import re
import zoneinfo
from pathlib import Path
from typing import Any

__all__ = ["COUNTERS", "ZERO_FILL_DAYS", "daily_usage", "time_zone"]

#: The token counters of a day (and of the totals), in the reference's order.
COUNTERS = ("input", "output", "cacheRead", "cacheWrite", "totalTokens")
_COSTS = ("totalCost", "inputCost", "outputCost", "cacheReadCost", "cacheWriteCost")


def _empty() -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(COUNTERS, 0)
    row.update(dict.fromkeys(_COSTS, 0))
    row["missingCostEntries"] = 0
    return row


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _add(row: dict[str, Any], usage: dict[str, Any]) -> None:
    for name in ("input", "output", "cacheRead", "cacheWrite"):
        row[name] += _count(usage.get(name))
    total = _count(usage.get("totalTokens"))
    row["totalTokens"] += total or _count(usage.get("input")) + _count(usage.get("output"))


def _messages(folder: Path) -> Any:
    for path in sorted(folder.glob("*.jsonl*")):
        try:
            with path.open("r", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict):
                        yield record
        except OSError:
            continue


#: A range of at most this many days lists every day, used or not (the reference's bound: a
#: longer one lists only the days with usage).
ZERO_FILL_DAYS = 366
#: A UTC offset as JavaScript's ``Intl`` takes it for a time zone: ``+05:30``, ``-03``,
#: ``+0530`` (and U+2212 for the minus).
_OFFSET_RE = re.compile(r"([+\-\u2212])([01][0-9]|2[0-3])(?::?([0-5][0-9]))?")


@functools.cache
def _zone_keys() -> dict[str, str]:
    """The host's IANA time zone names by their lowercase (``Intl`` ignores case)."""
    names = zoneinfo.available_timezones() - {"Factory", "localtime"}
    return {name.lower(): name for name in names}


def time_zone(name: str) -> datetime.tzinfo | None:
    """The time zone ``name`` names as the reference's ``Intl`` reads it: a UTC offset, or
    an IANA name of the host's time zone database in any case (``asia/tokyo``); None for
    anything else."""
    match = _OFFSET_RE.fullmatch(name)
    if match is not None:
        minutes = int(match[2]) * 60 + int(match[3] or 0)
        sign = 1 if match[1] == "+" else -1
        return datetime.timezone(datetime.timedelta(minutes=sign * minutes))
    key = _zone_keys().get(name.lower())
    return zoneinfo.ZoneInfo(key) if key is not None else None


def _day_of(stamp: Any, zone: datetime.tzinfo | None) -> datetime.date | None:
    """The calendar day of a millisecond timestamp in ``zone`` (None: local time)."""
    if not isinstance(stamp, int | float) or isinstance(stamp, bool):
        return None
    try:
        return datetime.datetime.fromtimestamp(stamp / 1000, zone).date()
    except (OverflowError, OSError, ValueError):
        return None


def daily_usage(
    folder: Path, first: datetime.date, last: datetime.date, zone: datetime.tzinfo | None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One row per day from ``first`` to ``last`` (inclusive, days of ``zone``; None: the
    host's local time) in date order, and their totals. Past :data:`ZERO_FILL_DAYS` days
    only the days with usage have a row."""
    days: dict[datetime.date, dict[str, Any]] = {}
    count = (last - first).days + 1
    if count <= ZERO_FILL_DAYS:
        days = {first + datetime.timedelta(days=n): _empty() for n in range(count)}
    for message in _messages(folder):
        usage = message.get("usage")
        if message.get("role") != "assistant" or not isinstance(usage, dict):
            continue
        when = _day_of(message.get("timestamp"), zone)
        if when is None or not first <= when <= last:
            continue
        _add(days.setdefault(when, _empty()), usage)
    totals = _empty()
    daily = []
    for when in sorted(days):
        row = days[when]
        for name, value in row.items():
            totals[name] += value
        daily.append({"date": when.isoformat(), **row})
    return daily, totals
