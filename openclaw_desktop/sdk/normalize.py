"""Gateway events -> normalized SDK events (pure: no I/O, no clock of its own).

Mapping (the same for the real gateway and the bundled one):

* ``agent`` lifecycle ``start`` -> ``run.started``;
* ``agent`` ``assistant`` (with an ``itemId``) -> ``assistant.delta`` ``{text, cumulative,
  replace, itemId, messageIndex}``: one item per assistant message of the run, ``cumulative``
  is that message's text so far and ``messageIndex`` its place among the run's assistant
  messages (0 first, counting messages without text, as ``chat.history`` does). Both gateways
  end the ``itemId`` with the message's 1-based number in the run;
* ``chat`` ``delta`` -> ``assistant.delta`` ``{text, cumulative, replace}`` only for runs that
  sent no such ``agent`` event (the real gateway's ``chat`` text is the whole run's, its
  messages joined by blank lines, so it cannot tell where one message ends);
* ``agent`` ``thinking`` -> ``thinking.delta`` ``{text}``;
* ``agent`` ``tool`` ``start`` / ``update`` / ``result`` -> ``tool.call.started`` ``{toolCallId,
  name, args}`` / ``tool.call.delta`` / ``tool.call.completed|failed`` ``{toolCallId, name,
  isError, result}``;
* ``chat`` ``final`` -> ``assistant.message`` ``{text, message}`` + ``run.completed``
  ``{stopReason, usage}``; ``aborted`` -> (``assistant.message`` when partial) +
  ``run.cancelled``; ``error`` -> ``run.failed`` (``run.timed_out`` for ``errorKind: timeout``)
  ``{errorMessage, errorKind, errorDetail}``;
* ``sessions.changed`` -> ``session.updated`` (``session.created`` for reason ``create``);
  ``session.compacted`` (bundled) and ``agent`` ``compaction`` end (real) -> ``session.compacted``;
* ``exec.approval.requested/resolved`` and ``plugin.approval.*`` -> ``approval.requested`` /
  ``approval.resolved``.

``chat`` and ``agent`` payloads are read through their models
(:class:`~openclaw_desktop.protocol.chat.ChatEvent`, :class:`~openclaw_desktop.protocol.chat.
AgentEvent`; open, so fields a newer gateway adds do not matter): one that does not fit is
skipped, counted in :attr:`Normalizer.malformed` and logged with the failing field names
(never their values); the rest of the stream goes on.

Event ids of a run are ``<runId>:<seq, 10 digits>:<type>``: stable for a given gateway event and
sorting in stream order, so they work as replay cursors.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from openclaw_desktop.protocol.base import OpenModel
from openclaw_desktop.protocol.chat import AgentEvent, ChatEvent
from openclaw_desktop.sdk.answers import problems
from openclaw_desktop.sdk.events import Event

__all__ = [
    "APPROVAL_EVENTS",
    "EXEC_APPROVAL_REQUESTED",
    "EXEC_APPROVAL_RESOLVED",
    "INTERRUPTED",
    "PLUGIN_APPROVAL_REQUESTED",
    "PLUGIN_APPROVAL_RESOLVED",
    "Normalizer",
    "is_interruption",
    "message_text",
    "run_event_id",
]

#: The real gateway's approval events (to operators with the approval caps). They are not in
#: the protocol's ``EventName`` / event table, which name what the bundled gateway sends and
#: advertises in ``hello-ok.features.events``: the bundled gateway sends none of them.
EXEC_APPROVAL_REQUESTED = "exec.approval.requested"
EXEC_APPROVAL_RESOLVED = "exec.approval.resolved"
PLUGIN_APPROVAL_REQUESTED = "plugin.approval.requested"
PLUGIN_APPROVAL_RESOLVED = "plugin.approval.resolved"
APPROVAL_EVENTS = frozenset(
    {
        EXEC_APPROVAL_REQUESTED,
        EXEC_APPROVAL_RESOLVED,
        PLUGIN_APPROVAL_REQUESTED,
        PLUGIN_APPROVAL_RESOLVED,
    }
)

#: What a run cut by the gateway stopping (or restarting) failed with.
INTERRUPTED = "interrupted: the gateway stopped"
#: The real gateway's marker of a run aborted for a restart, and its older messages.
RESTART_ABORT_CODE = "OPENCLAW_RESTART_ABORT"
RESTART_ABORT_MESSAGES = frozenset(
    {"agent run aborted for restart", "Request was aborted", "This operation was aborted"}
)


def run_event_id(run_id: str, seq: int, kind: str) -> str:
    """The replay cursor of a run event."""
    return f"{run_id}:{max(seq, 0):010d}:{kind}"


def message_text(message: Any) -> str:
    """The text of an assistant message (its text blocks joined)."""
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


#: Runs whose ``agent`` assistant items are followed at once (older ones are forgotten).
MAX_ITEM_RUNS = 256
_NUMBERED = re.compile(r"^(.*):(\d+)$")

log = logging.getLogger("openclaw.sdk")

_Payload = TypeVar("_Payload", bound=OpenModel)


@dataclass
class _Items:
    """Where one run's assistant messages are: the last item id, its stream (the id without
    its number) and index, and the offset added when a new stream (a retried attempt) starts."""

    item_id: str = ""
    stream: str | None = None
    index: int = -1
    offset: int = 0
    highest: int = -1

    def index_of(self, item_id: str) -> int:
        if item_id == self.item_id:
            return self.index
        match = _NUMBERED.match(item_id)
        if match is None:
            index = self.highest + 1  # unnumbered: the next message
        else:
            stream, number = match.group(1), int(match.group(2))
            if self.stream is not None and stream != self.stream:
                self.offset = self.highest + 1 - max(number - 1, 0)
            self.stream = stream
            index = max(number - 1, 0) + self.offset
        self.item_id, self.index = item_id, index
        self.highest = max(self.highest, index)
        return index


def is_interruption(message: Any) -> bool:
    """Whether a transcript assistant message records a reply the gateway cut by stopping:
    the real gateway's ``errorCode: OPENCLAW_RESTART_ABORT`` (or its older error messages),
    an ``openclawAbort`` of origin ``interrupted`` (how the bundled gateway records a reply
    cut by ``kill -9`` once restarted), or an error message that says so."""
    if not isinstance(message, dict) or message.get("stopReason") not in ("error", "aborted"):
        return False
    if message.get("errorCode") == RESTART_ABORT_CODE:
        return True
    abort = message.get("openclawAbort")
    if isinstance(abort, dict) and abort.get("origin") == "interrupted":
        return True
    error = str(message.get("errorMessage") or "")
    return error in RESTART_ABORT_MESSAGES or "interrupted" in error.lower()


class Normalizer:
    """Turns one connection's gateway events into :class:`Event` objects."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        #: Runs that sent ``agent`` assistant items (their ``chat`` deltas are then ignored).
        self._items: OrderedDict[str, _Items] = OrderedDict()
        #: Gateway events skipped because their payload did not fit its model, by name.
        self.malformed: Counter[str] = Counter()

    def feed(self, name: str, payload: Any, received_ms: int) -> list[Event]:
        """The normalized events for one gateway event (often none; a malformed ``chat`` or
        ``agent`` payload gives none and is counted in :attr:`malformed`)."""
        if not isinstance(payload, dict):
            return []
        if name == "chat":
            chat = self._parsed(name, ChatEvent, payload)
            return [] if chat is None else self._chat(chat, payload, received_ms)
        if name == "agent":
            agent = self._parsed(name, AgentEvent, payload)
            return [] if agent is None else self._agent(agent, payload, received_ms)
        if name in ("sessions.changed", "session.compacted"):
            return self._session(name, payload, received_ms)
        if name.endswith(".approval.requested") or name.endswith(".approval.resolved"):
            return self._approval(name, payload, received_ms)
        return []

    def _parsed(self, name: str, model: type[_Payload], payload: dict[str, Any]) -> _Payload | None:
        """``payload`` as ``model``, or None (counted and logged) when it does not fit."""
        try:
            return model.model_validate(payload)
        except ValidationError as exc:
            self.malformed[name] += 1
            # The first of each event name is a warning, later ones only debug lines.
            level = logging.WARNING if self.malformed[name] == 1 else logging.DEBUG
            log.log(level, "skipped a malformed %s event (%s)", name, problems(exc))
            return None

    # ------------------------------------------------------------------ runs
    def _run_event(
        self,
        event: ChatEvent | AgentEvent,
        raw: dict[str, Any],
        kind: str,
        data: dict[str, Any],
        received: int,
    ) -> Event:
        sent = event.ts if isinstance(event, AgentEvent) else None
        return Event(
            id=run_event_id(event.run_id, event.seq or 0, kind),
            ts=sent or received,
            type=kind,
            data=data,
            run_id=event.run_id or None,
            session_key=event.session_key,
            agent_id=event.agent_id,
            raw=raw,
        )

    def _chat(self, c: ChatEvent, raw: dict[str, Any], ts: int) -> list[Event]:
        state, message = c.state, c.message
        if state == "delta":
            if c.run_id in self._items:
                return []  # the run's agent events carry the same text, message by message
            data = {
                "text": c.delta_text or "",
                "cumulative": message_text(message),
                "replace": bool(c.replace),
            }
            return [self._run_event(c, raw, "assistant.delta", data, ts)]
        if state in ("final", "aborted", "error"):
            self._items.pop(c.run_id, None)
        if state == "final":
            text = message_text(message)
            done = {"stopReason": c.stop_reason, "usage": c.usage}
            return [
                self._run_event(
                    c, raw, "assistant.message", {"text": text, "message": message}, ts
                ),
                self._run_event(c, raw, "run.completed", done, ts),
            ]
        if state == "aborted":
            events = []
            if message is not None:
                data = {"text": message_text(message), "message": message}
                events.append(self._run_event(c, raw, "assistant.message", data, ts))
            cancelled = {"stopReason": c.stop_reason, "errorMessage": c.error_message}
            return [*events, self._run_event(c, raw, "run.cancelled", cancelled, ts)]
        if state == "error":
            kind = "run.timed_out" if c.error_kind == "timeout" else "run.failed"
            data = {
                "errorMessage": c.error_message,
                "errorKind": c.error_kind or "unknown",
                "errorDetail": c.error_detail,
            }
            return [self._run_event(c, raw, kind, data, ts)]
        return []

    def _agent(self, a: AgentEvent, p: dict[str, Any], ts: int) -> list[Event]:
        if "data" not in a.model_fields_set:
            return []  # nothing to tell
        stream, data = a.stream, a.data
        phase = data.get("phase")
        if stream == "lifecycle" and phase == "start":
            return [self._run_event(a, p, "run.started", {"startedAt": data.get("startedAt")}, ts)]
        if stream == "assistant" and isinstance(data.get("itemId"), str) and data["itemId"]:
            return [self._assistant_item(a, p, ts)]
        if stream == "thinking":
            text = data.get("delta") or data.get("text") or ""
            return [self._run_event(a, p, "thinking.delta", {"text": str(text)}, ts)]
        if stream == "tool":
            base = {"toolCallId": data.get("toolCallId"), "name": data.get("name")}
            if phase == "start":
                return [
                    self._run_event(
                        a, p, "tool.call.started", {**base, "args": data.get("args")}, ts
                    )
                ]
            if phase in ("update", "partial", "delta"):
                return [
                    self._run_event(
                        a,
                        p,
                        "tool.call.delta",
                        {**base, "partial": data.get("partialResult") or data.get("result")},
                        ts,
                    )
                ]
            if phase == "result":
                failed = bool(data.get("isError"))
                kind = "tool.call.failed" if failed else "tool.call.completed"
                result = {**base, "isError": failed, "result": data.get("result")}
                return [self._run_event(a, p, kind, result, ts)]
        if stream == "compaction" and phase == "end":
            return [self._run_event(a, p, "session.compacted", dict(data), ts)]
        return []

    def _assistant_item(self, a: AgentEvent, p: dict[str, Any], ts: int) -> Event:
        run_id, data = a.run_id, a.data
        items = self._items.get(run_id)
        if items is None:
            items = self._items[run_id] = _Items()
            while len(self._items) > MAX_ITEM_RUNS:
                self._items.popitem(last=False)
        item_id = str(data["itemId"])
        cumulative = data.get("text")
        delta = str(data.get("delta") or "")
        out = {
            "text": delta,
            "cumulative": cumulative if isinstance(cumulative, str) else None,
            "replace": bool(data.get("replace")),
            "itemId": item_id,
            "messageIndex": items.index_of(item_id),
        }
        return self._run_event(a, p, "assistant.delta", out, ts)

    # ------------------------------------------------------------------ others
    def _plain(
        self,
        name: str,
        kind: str,
        p: dict[str, Any],
        data: dict[str, Any],
        ts: int,
        key: Any,
        run_id: Any = None,
    ) -> Event:
        return Event(
            id=f"{name}:{ts:013d}:{next(self._counter):06d}",
            ts=int(p.get("ts") or ts),
            type=kind,
            data=data,
            run_id=str(run_id or p.get("runId") or "") or None,
            session_key=key if isinstance(key, str) else None,
            raw=p,
        )

    def _session(self, name: str, p: dict[str, Any], ts: int) -> list[Event]:
        session = p.get("session") if isinstance(p.get("session"), dict) else None
        key = p.get("sessionKey") or (session or {}).get("key")
        if name == "session.compacted":
            return [self._plain(name, "session.compacted", p, dict(p), ts, key)]
        kind = "session.created" if p.get("reason") in ("create", "created") else "session.updated"
        data = {"reason": p.get("reason"), "session": session}
        return [self._plain(name, kind, p, data, ts, key)]

    def _approval(self, name: str, p: dict[str, Any], ts: int) -> list[Event]:
        nested = p.get("request")
        request: dict[str, Any] = nested if isinstance(nested, dict) else p
        approval_id = p.get("id") or request.get("id")
        source = name.split(".", 1)[0]
        run_id = p.get("runId") or request.get("runId")
        key = p.get("sessionKey") or request.get("sessionKey")
        if name.endswith(".requested"):
            allowed = request.get("allowedDecisions") or p.get("allowedDecisions")
            data = {
                "id": approval_id,
                "kind": source,
                "command": request.get("command") or request.get("rawCommand"),
                "summary": request.get("summary") or request.get("title") or request.get("command"),
                "risk": request.get("risk"),
                "decisions": list(
                    allowed or p.get("decisions") or ["allow-once", "allow-always", "deny"]
                ),
                "expiresAt": p.get("expiresAtMs") or p.get("expiresAt"),
                "request": request,
            }
            return [self._plain(name, "approval.requested", p, data, ts, key, run_id)]
        data = {"id": approval_id, "kind": source, "decision": p.get("decision")}
        return [self._plain(name, "approval.resolved", p, data, ts, key, run_id)]
