"""The payload model of every event the gateway sends, and the event table.

:data:`EVENTS` maps each event the bundled gateway advertises in
``hello-ok.features.events`` to its payload model, in that list's order
(:func:`event_names`); :data:`UNADVERTISED_EVENTS` holds the ones the real gateway also
sends without listing them. Both sides use them: the gateway checks what it sends
(``gateway.hub``), the client reads events with the same models.

Fields are the real gateway 2026.9.6's (its ``packages/gateway-protocol`` schemas and the
payloads its handlers build). Every model is open (:class:`OpenModel`): newer gateways add
fields and the bundled gateway adds a few of its own, so only the fields the real gateway
always sends are required. Models that already existed are reused from :mod:`.chat`,
:mod:`.connect` and :mod:`.node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field, StrictBool, StrictInt, ValidationError

from openclaw_desktop.protocol.base import OpenModel, WireModel
from openclaw_desktop.protocol.chat import (
    AgentEvent,
    ChatEvent,
    ShutdownEvent,
    TalkEvent,
    TickEvent,
)
from openclaw_desktop.protocol.connect import ConnectChallenge
from openclaw_desktop.protocol.enums import EventName
from openclaw_desktop.protocol.node import NodeInvokeCancel, NodeInvokeRequest

__all__ = [
    "EVENTS",
    "UNADVERTISED_EVENTS",
    "ChatSendTimingEvent",
    "DevicePairRequestedEvent",
    "DevicePairResolvedEvent",
    "HealthEvent",
    "HostStats",
    "NodeHostStatsEvent",
    "NodePairRequestedEvent",
    "NodePairResolvedEvent",
    "PresenceEntry",
    "PresenceEvent",
    "SessionCompactedEvent",
    "SessionMessageEvent",
    "SessionsChangedEvent",
    "TalkModeEvent",
    "event_names",
    "payload_errors",
    "payload_model",
]

NonEmpty = Annotated[str, Field(min_length=1)]
#: Milliseconds since the epoch (or a duration): a JSON integer, never negative.
Millis = Annotated[StrictInt, Field(ge=0)]


# ---------------------------------------------------------------- presence and health


class PresenceEntry(OpenModel):
    """One ``presence`` record: the gateway itself (``reason: self``) or a connected client.
    Only ``ts`` (heartbeat freshness) is always there."""

    ts: Millis
    host: str | None = None
    client_id: str | None = None
    ip: str | None = None
    version: str | None = None
    platform: str | None = None
    device_family: str | None = None
    model_identifier: str | None = None
    mode: str | None = None
    reason: str | None = None
    text: str | None = None
    device_id: str | None = None
    instance_id: str | None = None
    roles: list[str] | None = None
    scopes: list[str] | None = None


class PresenceEvent(OpenModel):
    """``presence``: the whole presence list (the frame carries ``stateVersion``)."""

    presence: list[PresenceEntry]


class HealthEvent(OpenModel):
    """``health``: the gateway health snapshot, the same as the ``health`` answer and
    ``hello-ok.snapshot.health`` (on both gateways). Every field is optional in the real
    schema; the real gateway adds ``plugins``, ``configReload`` and ``eventLoop``, which the
    bundled gateway does not measure and leaves out."""

    ok: bool | None = None
    ts: Millis | None = None
    duration_ms: Millis | None = None
    plugins: dict[str, Any] | None = None
    channels: dict[str, Any] | None = None
    default_agent_id: str | None = None
    agents: list[dict[str, Any]] | None = None
    sessions: dict[str, Any] | None = None


# ---------------------------------------------------------------- pairing


class NodePairRequestedEvent(OpenModel):
    """``node.pair.requested``: a node's pending command surface, as ``node.pair.list``
    lists it (``silent`` only when true)."""

    request_id: NonEmpty
    node_id: NonEmpty
    ts: Millis
    client_id: str | None = None
    client_mode: str | None = None
    display_name: str | None = None
    platform: str | None = None
    version: str | None = None
    core_version: str | None = None
    ui_version: str | None = None
    device_family: str | None = None
    model_identifier: str | None = None
    caps: list[str] | None = None
    commands: list[str] | None = None
    required_approve_scopes: list[str] | None = None
    permissions: dict[str, bool] | None = None
    remote_ip: str | None = None
    silent: bool | None = None


class NodePairResolvedEvent(OpenModel):
    """``node.pair.resolved``: ``approved``, ``rejected`` or ``removed`` (a removed node's
    event has the empty ``requestId``)."""

    request_id: str
    node_id: NonEmpty
    decision: NonEmpty
    ts: Millis


class DevicePairRequestedEvent(OpenModel):
    """``device.pair.requested``: a device's pending pairing request."""

    request_id: NonEmpty
    device_id: NonEmpty
    public_key: NonEmpty
    ts: Millis
    display_name: str | None = None
    platform: str | None = None
    device_family: str | None = None
    client_id: str | None = None
    client_mode: str | None = None
    browser_origin: str | None = None
    role: str | None = None
    roles: list[str] | None = None
    scopes: list[str] | None = None
    remote_ip: str | None = None
    silent: bool | None = None
    is_repair: bool | None = None


class DevicePairResolvedEvent(OpenModel):
    """``device.pair.resolved``: ``approved`` or ``rejected``."""

    request_id: NonEmpty
    device_id: NonEmpty
    decision: NonEmpty
    ts: Millis


# ---------------------------------------------------------------- nodes


class HostStats(OpenModel):
    """A node's resource snapshot (``node.event`` ``node.host.stats``) with the gateway's
    receipt time ``updatedAtMs``."""

    cpu_count: Annotated[StrictInt, Field(ge=1)]
    memory_total_bytes: Annotated[StrictInt, Field(ge=0)]
    memory_free_bytes: Annotated[StrictInt, Field(ge=0)]
    load_average: list[float] | None = None
    disk_total_bytes: Annotated[StrictInt, Field(ge=0)] | None = None
    disk_available_bytes: Annotated[StrictInt, Field(ge=0)] | None = None
    updated_at_ms: Millis | None = None


class NodeHostStatsEvent(OpenModel):
    """``node.hostStats``: a node reported its resources."""

    node_id: NonEmpty
    host_stats: HostStats


# ---------------------------------------------------------------- sessions and talk


class SessionsChangedEvent(OpenModel):
    """``sessions.changed`` (to ``sessions.subscribe``'d connections): a session's row, a
    run phase or a keyless list invalidation (``reason: update``, no ``sessionKey``)."""

    ts: Millis
    session_key: str | None = None
    agent_id: str | None = None
    reason: str | None = None
    phase: str | None = None
    run_id: str | None = None
    session_id: str | None = None
    updated_at: Millis | None = None
    session: dict[str, Any] | None = None


class SessionMessageEvent(OpenModel):
    """``session.message``: a transcript message appended to a subscribed session."""

    session_key: NonEmpty
    message: dict[str, Any]
    agent_id: str | None = None
    message_id: str | None = None
    message_seq: Annotated[StrictInt, Field(ge=1)] | None = None
    run_id: str | None = None
    session_id: str | None = None
    session: dict[str, Any] | None = None


class SessionCompactedEvent(OpenModel):
    """``session.compacted`` (the bundled gateway's: the real one reports compaction as an
    ``agent`` event of stream ``compaction``): a run compacted its session's context."""

    session_key: NonEmpty
    run_id: NonEmpty
    ts: Millis


class TalkModeEvent(OpenModel):
    """``talk.mode``: talk mode was set (``phase`` is null when none was given)."""

    enabled: StrictBool
    phase: str | None
    ts: Millis


class ChatSendTimingEvent(OpenModel):
    """``chat.send_timing`` (only to the operator UI connection that sent the message): how
    far its ``chat.send`` got, in milliseconds since the ack and since it arrived."""

    phase: NonEmpty
    run_id: NonEmpty
    session_key: NonEmpty
    ack_to_phase_ms: Annotated[float, Field(ge=0)]
    received_to_phase_ms: Annotated[float, Field(ge=0)]
    agent_id: str | None = None
    dispatch_started_to_phase_ms: Annotated[float, Field(ge=0)] | None = None


# ---------------------------------------------------------------- the table

#: Every event the gateway advertises (``hello-ok.features.events``, in this order) and
#: the model of its payload, keyed by :class:`EventName` (which names these and the
#: unadvertised ones, no more).
EVENTS: Mapping[str, type[WireModel]] = {
    EventName.CONNECT_CHALLENGE: ConnectChallenge,
    EventName.TICK: TickEvent,
    EventName.PRESENCE: PresenceEvent,
    EventName.HEALTH: HealthEvent,
    EventName.SHUTDOWN: ShutdownEvent,
    EventName.NODE_INVOKE_REQUEST: NodeInvokeRequest,
    EventName.NODE_INVOKE_CANCEL: NodeInvokeCancel,
    EventName.NODE_PAIR_REQUESTED: NodePairRequestedEvent,
    EventName.NODE_PAIR_RESOLVED: NodePairResolvedEvent,
    EventName.NODE_HOST_STATS: NodeHostStatsEvent,
    EventName.DEVICE_PAIR_REQUESTED: DevicePairRequestedEvent,
    EventName.DEVICE_PAIR_RESOLVED: DevicePairResolvedEvent,
    EventName.CHAT: ChatEvent,
    EventName.AGENT: AgentEvent,
    EventName.SESSIONS_CHANGED: SessionsChangedEvent,
    EventName.SESSION_MESSAGE: SessionMessageEvent,
    EventName.SESSION_COMPACTED: SessionCompactedEvent,
    EventName.TALK_MODE: TalkModeEvent,
    EventName.TALK_EVENT: TalkEvent,
}

#: Events the real gateway sends too but leaves out of ``features.events``.
UNADVERTISED_EVENTS: Mapping[str, type[WireModel]] = {
    EventName.CHAT_SEND_TIMING: ChatSendTimingEvent,
}


def event_names() -> list[str]:
    """``hello-ok.features.events``: the advertised events, in the table's order."""
    return [str(name) for name in EVENTS]


def payload_model(event: str) -> type[WireModel] | None:
    """The payload model of an event the gateway sends; None for any other name."""
    return EVENTS.get(event) or UNADVERTISED_EVENTS.get(event)


def payload_errors(model: type[BaseModel], payload: Any) -> list[tuple[str, str]]:
    """What in ``payload`` does not fit ``model``, as ``(field path, error type)`` pairs
    (``("seq", "missing")``); empty when it fits. Never the values: payloads may hold
    secrets (tokens, message text), so callers can log these as they are."""
    try:
        model.model_validate(payload)
    except ValidationError as exc:
        return [
            (".".join(str(part) for part in error["loc"]) or "(payload)", error["type"])
            for error in exc.errors(include_url=False, include_input=False)
        ]
    return []
