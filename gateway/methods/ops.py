"""Operator diagnostics: ``logs.tail`` (this gateway's own log file), ``diagnostics.stability``,
``usage.cost`` (the token usage recorded in the transcripts) and the ``cron.*`` reads (this
gateway schedules nothing, so they answer the empty result in the reference's shape)."""

from __future__ import annotations

import asyncio
import base64
import datetime
import hashlib
import json
from typing import TYPE_CHECKING, Any, Protocol

from gateway.chat.events import now_ms
from gateway.logfile import log_path, read_tail
from gateway.methods.chat import _service
from gateway.methods.closed import hand_read
from gateway.methods.table import MethodTable
from gateway.peer import Peer
from gateway.scopes import READ
from gateway.usage import daily_usage, time_zone
from openclaw_desktop.protocol import Method
from openclaw_desktop.protocol.methods import CronListParams, EmptyParams, LogsTailParams
from openclaw_desktop.protocol.methods.ops import DiagnosticsStabilityParams, UsageCostParams

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


@table.method(
    Method.DIAGNOSTICS_STABILITY, scope=READ, params=DiagnosticsStabilityParams, check=False
)
async def diagnostics_stability(gw: OpsServices, peer: Peer, params: Any) -> Any:
    """``diagnostics.stability {limit?, type?, sinceSeq?}``: the diagnostic event record.
    This gateway records no diagnostic events, so the record is empty.

    Read by hand, as the reference (any params served, a digit string is a number, a
    problem refused in its own sentence): the model reads them, not the dispatcher."""
    hand_read(DiagnosticsStabilityParams.lenient(params).query)
    return {
        "generatedAt": datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")[:-6]
        + "Z",
        "capacity": 0,
        "count": 0,
        "dropped": 0,
        "events": [],
        "summary": {"byType": {}},
    }


@table.method(Method.USAGE_COST, scope=READ, params=UsageCostParams, check=False)
async def usage_cost(gw: OpsServices, peer: Peer, params: Any) -> Any:
    """``usage.cost {days? | range? | startDate+endDate, mode?, timeZone?, utcOffset?,
    agentId?}``: token usage per calendar day, summed from the assistant messages of the
    transcripts (this gateway knows no prices: the cost columns stay 0).

    Read by hand, as the reference (any params served, ``days`` as JavaScript's ``Number``
    reads it, a problem refused in its own sentence): the model reads them."""
    now = datetime.datetime.now(datetime.UTC)
    window = hand_read(lambda: UsageCostParams.lenient(params).window(now, time_zone))
    folder = _service(gw).store.folder
    daily, totals = await asyncio.to_thread(
        daily_usage, folder, window.first, window.last, window.zone
    )
    return {
        "updatedAt": now_ms(),
        "days": window.days,
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
