"""The runs one SDK client follows: its own sends while they run, the last few finished
ones, other clients' runs seen live (to know which run a steered message joins), and the
steered messages each run took in (they end with it).

The client feeds it the normalized events; ``Sessions.send`` tracks, steers and settles
through it. It holds no connection: what it learns it hands on through ``publish``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable

from openclaw_desktop.protocol.session_keys import same_session
from openclaw_desktop.sdk.events import Event
from openclaw_desktop.sdk.run import TERMINAL, Run

__all__ = ["FINISHED_KEPT", "LIVE_KEPT", "RunBook", "same_session"]

#: Finished runs still found by ``runs.get`` (older ones are forgotten: a long-running app
#: keeps only what its own objects hold, such as the chat timeline's items).
FINISHED_KEPT = 32
#: Runs of other clients followed (to know what a steered message joins).
LIVE_KEPT = 64


class RunBook:
    """Which runs are going, which ended, and what ends with what."""

    def __init__(
        self, make_run: Callable[[str, str], Run], publish: Callable[[Event], None]
    ) -> None:
        self._make_run = make_run
        self._publish = publish
        #: This client's runs still going (and steered ones waiting for their run's end).
        self.running: dict[str, Run] = {}
        #: The last :data:`FINISHED_KEPT` finished runs, oldest first.
        self.finished: OrderedDict[str, Run] = OrderedDict()
        #: Live runs seen in events (any client's): run id -> session key.
        self._live: OrderedDict[str, str] = OrderedDict()
        #: Run id -> steered runs it took in (they end with it).
        self._absorbed: dict[str, list[Run]] = {}

    # ------------------------------------------------------------------ lookups
    def get(self, run_id: str) -> Run | None:
        """A run by id (a finished one only while it is among the last few)."""
        return self.running.get(run_id) or self.finished.get(run_id)

    def active(self) -> list[Run]:
        """Runs still going."""
        return [r for r in self.running.values() if not r.done]

    def waiting(self) -> list[Run]:
        """Runs still going on their own (a steered one ends with the run it joined, as
        long as that one is followed): what a catch-up after a reconnect looks up."""
        return [
            r
            for r in self.running.values()
            if not r.done and (r.absorbed_by is None or r.absorbed_by not in self.running)
        ]

    # ------------------------------------------------------------------ own sends
    def track(self, run_id: str, key: str) -> Run:
        """The run of a message about to be sent to session ``key`` (the same object when
        the idempotency key is sent again)."""
        run = self.get(run_id)
        if run is None:
            run = self._make_run(run_id, key)
            self.running[run_id] = run
        return run

    def forget(self, run_id: str) -> None:
        """A send that never reached the gateway."""
        self.running.pop(run_id, None)
        self.finished.pop(run_id, None)

    def steer_target(self, key: str, run_id: str) -> str | None:
        """The run a message steered into session ``key`` joins: the session's live run."""
        own = [
            r.run_id
            for r in self.running.values()
            if not r.done and r.run_id != run_id and same_session(r.session_key, key)
        ]
        if own:
            return own[-1]
        seen = [r for r, k in self._live.items() if r != run_id and same_session(k, key)]
        return seen[-1] if seen else None

    def absorb(self, run: Run, target: str) -> None:
        """``run`` (a steered message) was taken into ``target``: it ends when that does."""
        run.absorbed_by = target
        self._absorbed.setdefault(target, []).append(run)

    # ------------------------------------------------------------------ events
    def feed(self, event: Event) -> None:
        """One normalized gateway event: to its run, to the readers, and its ending."""
        run = self.running.get(event.run_id or "")
        if run is None and event.type.startswith("approval."):
            run = self._run_for_session(event.session_key)
        if run is not None:
            run.feed(event)
        self._follow_live(event)
        self._publish(event)
        if event.type in TERMINAL and event.run_id:
            self._ended(event.run_id, event)

    def settle(self, run: Run, added: Iterable[Event]) -> None:
        """Events the SDK added to ``run`` itself (from the history after a reconnect or a
        repeated send): to the readers, and the run's ending."""
        for event in added:
            self._publish(event)
            if event.type in TERMINAL:
                self._ended(run.run_id, event)

    def reset_all(self, reason: str) -> None:
        """Gateway events were missed: every run still going may lack some."""
        for run in self.running.values():
            if not run.done:
                run.reset_stream(reason)

    # ------------------------------------------------------------------ bookkeeping
    def _run_for_session(self, key: str | None) -> Run | None:
        """The live run of a session, for events that name the session but not the run."""
        if not key:
            return None
        live = [r for r in self.running.values() if not r.done and same_session(key, r.session_key)]
        return live[-1] if live else None

    def _follow_live(self, event: Event) -> None:
        run_id = event.run_id
        if not run_id or not event.session_key:
            return
        if event.type in TERMINAL:
            self._live.pop(run_id, None)
        elif event.type in ("run.started", "assistant.delta") or event.type.startswith("tool."):
            self._live[run_id] = event.session_key
            self._live.move_to_end(run_id)
            while len(self._live) > LIVE_KEPT:
                self._live.popitem(last=False)

    def _ended(self, run_id: str, terminal: Event) -> None:
        """A run ended: the steered messages it took in end with it; finished runs are
        forgotten but for the last :data:`FINISHED_KEPT`."""
        for steered in self._absorbed.pop(run_id, []):
            if not steered.has_own_events:
                synthesized = steered.end_with(terminal)
                if synthesized is not None:
                    self._publish(synthesized)
            self._retire(steered)
        run = self.running.get(run_id)
        if run is not None and run.done:
            self._retire(run)

    def _retire(self, run: Run) -> None:
        if not run.done or self.running.get(run.run_id) is not run:
            return
        del self.running[run.run_id]
        self.finished[run.run_id] = run
        while len(self.finished) > FINISHED_KEPT:
            self.finished.popitem(last=False)
