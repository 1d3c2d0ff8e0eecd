"""Token usage per UTC day, summed from the transcripts' assistant messages (their ``usage``
block), for ``usage.cost``. Reads every transcript file of the folder, archived ones too
(a reset session's usage happened all the same); a line that is not JSON is skipped."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

__all__ = ["COUNTERS", "daily_usage"]

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


def daily_usage(
    folder: Path, start: datetime.date, end: datetime.date
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One row per day from ``start`` to ``end`` (UTC, inclusive), and their totals."""
    days: dict[datetime.date, dict[str, Any]] = {}
    day = start
    while day <= end:
        days[day] = _empty()
        day += datetime.timedelta(days=1)
    for message in _messages(folder):
        usage, stamp = message.get("usage"), message.get("timestamp")
        if message.get("role") != "assistant" or not isinstance(usage, dict):
            continue
        if not isinstance(stamp, int | float) or isinstance(stamp, bool):
            continue
        when = datetime.datetime.fromtimestamp(stamp / 1000, datetime.UTC).date()
        row = days.get(when)
        if row is not None:
            _add(row, usage)
    totals = _empty()
    daily = []
    for when, row in days.items():
        for name, value in row.items():
            totals[name] += value
        daily.append({"date": when.isoformat(), **row})
    return daily, totals
