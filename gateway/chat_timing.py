"""``chat.send_timing``: how far a ``chat.send`` of an operator UI got, told to its sender.

As the real gateway: only the Control UI, the browser copilot and the TUI get it (they show
it), only on the connection that sent the message, and their ``chat.send`` ack carries
``serverTiming`` (``receivedToAckMs``, ``loadSessionMs``). The phases follow the run:
``dispatch-started`` right after the ack, ``model-selected`` (``provider``, ``model``),
``agent-run-started`` (the real gateway picks the model before it starts the agent run;
our engine announces its start first, so that phase waits for the model, or for the
run's first output where no model is used), ``first-assistant-event``, then
``dispatch-completed`` and
``post-dispatch-completed`` (``postDispatchMs``) when it ends. Each says the milliseconds
since the ack (``ackToPhaseMs``), since the request arrived (``receivedToPhaseMs``) and,
after dispatch started, since then (``dispatchStartedToPhaseMs``).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.protocol import EventName

__all__ = ["UI_CLIENTS", "SendTimings"]

#: The client ids the real gateway times ``chat.send`` for.
UI_CLIENTS = frozenset({"openclaw-control-ui", "openclaw-browser-copilot", "openclaw-tui"})
#: Runs timed at once at most (a run that never ends, e.g. one steered into another, is
#: forgotten oldest first).
MAX_TIMED_RUNS = 512

#: Sends ``(conn_id, event, payload)`` to one connection, if it is still there.
SendTo = Callable[[str, EventName, dict[str, Any]], None]


def _ms(seconds: float) -> float:
    return max(0.0, round(seconds * 1000, 3))


@dataclass
class _Timing:
    conn_id: str
    session_key: str
    agent_id: str | None
    received: float
    acked: float
    dispatch_started: float | None = None
    run_started: bool = False
    run_announced: bool = False
    first_assistant: bool = False


class SendTimings:
    """The timed ``chat.send`` runs, keyed by run id."""

    def __init__(self, send_to: SendTo, clock: Callable[[], float] = time.perf_counter) -> None:
        self._send_to = send_to
        self._clock = clock
        self._runs: OrderedDict[str, _Timing] = OrderedDict()

    def now(self) -> float:
        """The clock the timings are read from (when a request arrives)."""
        return self._clock()

    def acked(
        self,
        client_id: Any,
        conn_id: str,
        run_id: str,
        session_key: str,
        agent_id: str | None,
        received: float,
        load_session_s: float,
    ) -> dict[str, float] | None:
        """The ack's ``serverTiming`` for a UI client's send (and its run is timed from
        now on), or None for any other client."""
        if client_id not in UI_CLIENTS:
            return None
        acked = self._clock()
        self._runs[run_id] = _Timing(conn_id, session_key, agent_id, received, acked)
        self._runs.move_to_end(run_id)
        while len(self._runs) > MAX_TIMED_RUNS:
            self._runs.popitem(last=False)
        return {"receivedToAckMs": _ms(acked - received), "loadSessionMs": _ms(load_session_s)}

    def dispatch_started(self, run_id: str) -> None:
        """The ack went out and the run is handed to the agent."""
        timing = self._runs.get(run_id)
        if timing is not None and timing.dispatch_started is None:
            timing.dispatch_started = self._clock()
            self._emit(run_id, timing, "dispatch-started")

    def observe(self, event: EventName, payload: Mapping[str, Any]) -> None:
        """Follow the chat engine's ``agent`` events of the timed runs."""
        if event != EventName.AGENT:
            return
        run_id = payload.get("runId")
        timing = self._runs.get(run_id) if isinstance(run_id, str) else None
        if timing is None or run_id is None:
            return
        if timing.dispatch_started is None:  # the run started before the call_soon ran
            self.dispatch_started(run_id)
        stream = payload.get("stream")
        raw = payload.get("data")
        data: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        phase = data.get("phase") if stream == "lifecycle" else None
        if phase == "start":
            timing.run_started = True
        elif phase == "model":
            extra = {"provider": data.get("provider"), "model": data.get("model")}
            self._emit(run_id, timing, "model-selected", extra)
            self._run_started(run_id, timing)
        elif stream == "assistant" and not timing.first_assistant:
            self._run_started(run_id, timing)
            timing.first_assistant = True
            self._emit(run_id, timing, "first-assistant-event")
        elif phase in ("end", "error"):
            self._run_started(run_id, timing)
            del self._runs[run_id]
            self._emit(run_id, timing, "dispatch-completed")
            self._emit(run_id, timing, "post-dispatch-completed", {"postDispatchMs": 0.0})

    def _run_started(self, run_id: str, timing: _Timing) -> None:
        if timing.run_started and not timing.run_announced:
            timing.run_announced = True
            self._emit(run_id, timing, "agent-run-started")

    def _emit(
        self, run_id: str, timing: _Timing, phase: str, extra: Mapping[str, Any] | None = None
    ) -> None:
        now = self._clock()
        payload: dict[str, Any] = {
            "phase": phase,
            "runId": run_id,
            "sessionKey": timing.session_key,
        }
        if timing.agent_id:
            payload["agentId"] = timing.agent_id
        payload["ackToPhaseMs"] = _ms(now - timing.acked)
        payload["receivedToPhaseMs"] = _ms(now - timing.received)
        if timing.dispatch_started is not None and phase != "dispatch-started":
            payload["dispatchStartedToPhaseMs"] = _ms(now - timing.dispatch_started)
        payload.update(extra or {})
        self._send_to(timing.conn_id, EventName.CHAT_SEND_TIMING, payload)
