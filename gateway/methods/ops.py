"""Operator diagnostics: ``logs.tail`` (this gateway's own log file), ``diagnostics.stability``,
``usage.cost`` (the token usage recorded in the transcripts) and the ``cron.*`` reads (this
gateway schedules nothing, so they answer the empty result in the reference's shape)."""

from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.events import now_ms
from gateway.errors import invalid_request
from gateway.logfile import log_path, read_tail
from gateway.methods.chat import _service
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ
from gateway.usage import daily_usage
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods import CronListParams, EmptyParams, LogsTailParams

if TYPE_CHECKING:
    from gateway.chat.service import ChatService
    from gateway.config import GatewayConfig

__all__ = ["OpsServices", "table"]

table = MethodTable()
"""The methods this module declares."""


class OpsServices(Protocol):
    """What the diagnostics methods use of the gateway: its settings (where the log is)
    and the chat engine (the transcripts ``usage.cost`` sums)."""

    @property
    def config(self) -> GatewayConfig: ...
    @property
    def chat(self) -> ChatService | None: ...


#: The reference's defaults when ``limit`` / ``maxBytes`` are left out.
LOGS_DEFAULT_LIMIT = 500
LOGS_DEFAULT_MAX_BYTES = 250_000


@table.method(Method.LOGS_TAIL, scope=READ, params=LogsTailParams)
async def logs_tail(gw: OpsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``logs.tail {cursor?, limit?, maxBytes?}``: the newest lines of this gateway's log
    file (JSON lines, redacted as they were written), from ``cursor`` when given."""
    path = log_path(gw.config.state_dir)
    tail = await asyncio.to_thread(
        read_tail,
        path,
        cursor=p.get("cursor"),
        limit=p.get("limit", LOGS_DEFAULT_LIMIT),
        max_bytes=p.get("maxBytes", LOGS_DEFAULT_MAX_BYTES),
    )
    return {"file": str(path), **tail}


_DIAG_LIMIT_MAX = 1000
_DIAG_DEFAULT_LIMIT = 50


def _non_negative(value: Any, field: str) -> int | None:
    """The reference's lenient integer reading (a digit string counts)."""
    if value is None or value == "":
        return None
    if isinstance(value, str) and re.fullmatch(r"\d+", value):
        return int(value)
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if numeric and float(value).is_integer() and value >= 0:
        return int(value)
    raise invalid_request(f"{field} must be a non-negative integer")


@table.method(Method.DIAGNOSTICS_STABILITY, scope=READ)
async def diagnostics_stability(gw: OpsServices, peer: Peer, params: Any) -> Any:
    """``diagnostics.stability {limit?, type?, sinceSeq?}``: the diagnostic event record.
    This gateway records no diagnostic events, so the record is empty."""
    p = params if isinstance(params, dict) else {}
    limit = _non_negative(p.get("limit"), "limit")
    if limit is not None and not 1 <= limit <= _DIAG_LIMIT_MAX:
        raise invalid_request(f"limit must be between 1 and {_DIAG_LIMIT_MAX}")
    kind = p.get("type")
    if kind not in (None, "") and (not isinstance(kind, str) or not kind.strip()):
        raise invalid_request("type must be a non-empty string")
    _non_negative(p.get("sinceSeq"), "sinceSeq")
    return {
        "generatedAt": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")[:-6]
        + "Z",
        "capacity": 0,
        "count": 0,
        "dropped": 0,
        "events": [],
        "summary": {"byType": {}},
    }


#: The longest ``usage.cost`` range this gateway answers (one row per day), ten years.
USAGE_MAX_DAYS = 3660

_DATE_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def _date(params: dict[str, Any], name: str) -> datetime.date | None:
    value = params.get(name)
    if value is None:
        return None
    match = _DATE_RE.match(value) if isinstance(value, str) else None
    try:
        if match is None:
            raise ValueError(value)
        return datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        raise invalid_request(
            f"invalid {name}: expected a valid YYYY-MM-DD calendar date"
        ) from None


def _days(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def _usage_range(params: dict[str, Any]) -> tuple[datetime.date, datetime.date]:
    """The first and last UTC day asked for (``startDate``+``endDate``, else ``days``,
    default 30, ending today)."""
    start, end = _date(params, "startDate"), _date(params, "endDate")
    if (start is None) != (end is None):
        raise invalid_request("startDate and endDate must be provided together")
    if start is not None and end is not None:
        if start > end:
            raise invalid_request("startDate must not be after endDate")
    else:
        end = datetime.datetime.now(datetime.UTC).date()
        days = max(1, _days(params.get("days")) or 30)
        try:
            start = end - datetime.timedelta(days=days - 1)
        except (OverflowError, ValueError):
            raise invalid_request("calendar day does not exist in requested time zone") from None
    if (end - start).days >= USAGE_MAX_DAYS:
        # Our bound, not the reference's: one row per day must fit in one answer.
        raise invalid_request(f"date range too large: at most {USAGE_MAX_DAYS} days")
    return start, end


@table.method(Method.USAGE_COST, scope=READ)
async def usage_cost(gw: OpsServices, peer: Peer, params: Any) -> Any:
    """``usage.cost {days? | startDate+endDate, agentId?}``: token usage per UTC day, summed
    from the assistant messages of the transcripts (this gateway knows no prices: the cost
    columns stay 0)."""
    p = params if isinstance(params, dict) else {}
    start, end = _usage_range(p)
    if p.get("agentScope") == "all" and p.get("agentId"):
        raise invalid_request("agentScope=all cannot be combined with agentId")
    folder = _service(gw).store.folder
    daily, totals = await asyncio.to_thread(daily_usage, folder, start, end)
    return {
        "updatedAt": now_ms(),
        "days": len(daily),
        "daily": daily,
        "totals": totals,
        "cacheStatus": {"status": "fresh", "cachedFiles": 0, "pendingFiles": 0, "staleFiles": 0},
    }


_CRON_DEFAULT_LIMIT = 50


@table.method(Method.CRON_LIST, scope=READ, params=CronListParams)
async def cron_list(gw: OpsServices, peer: Peer, p: dict[str, Any]) -> Any:
    """``cron.list``: the scheduled jobs; this gateway has no scheduler, so there are none."""
    jobs: list[dict[str, Any]] = []
    return {
        "jobs": jobs,
        "snapshotRevision": _revision(jobs),
        "total": 0,
        "offset": p.get("offset", 0),
        "limit": p.get("limit", _CRON_DEFAULT_LIMIT),
        "hasMore": False,
        "nextOffset": None,
        "deliveryPreviews": {},
    }


def _revision(jobs: list[dict[str, Any]]) -> str:
    """``sha256:<base64url>`` of the job inventory (the reference's revision format)."""
    digest = hashlib.sha256(json.dumps(jobs, sort_keys=True).encode("utf-8")).digest()
    return "sha256:" + base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


@table.method(Method.CRON_STATUS, scope=READ, params=EmptyParams)
async def cron_status(gw: OpsServices, peer: Peer, params: dict[str, Any]) -> Any:
    """``cron.status``: the scheduler's state; this gateway has none (disabled, no jobs)."""
    return {"enabled": False, "triggersEnabled": False, "jobs": 0, "nextWakeAtMs": None}
