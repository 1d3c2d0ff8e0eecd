"""How chat runs ended, for the callers that wait on them (``agent``, ``agent.wait``).

:class:`RunOutcomes` keeps the last :data:`OUTCOMES_KEPT` outcomes (a re-sent ``agent`` or a
late ``agent.wait`` is answered from them) and wakes the callers waiting for a run still
going. A waiter that gives up (its timeout, its connection gone) only stops waiting: the run
goes on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from dataclasses import dataclass, field

__all__ = ["OUTCOMES_KEPT", "RunOutcome", "RunOutcomes"]

#: Finished outcomes remembered (the oldest are forgotten first).
OUTCOMES_KEPT = 1_000


@dataclass(frozen=True)
class RunOutcome:
    """One finished run.

    Attributes:
        status: ``completed``, ``failed`` or ``aborted`` (the service's outcome words).
        stop_reason: The model's last stop reason (``stop``, ``toolUse``, ``error``...).
        text: The final assistant text (the partial text of a stopped or failed run).
        provider: The provider of the model that answered (None when none was called).
        model: That model's id.
    """

    run_id: str
    session_key: str
    session_id: str
    status: str
    stop_reason: str
    text: str
    started_at: int
    ended_at: int
    provider: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    model_calls: int = 0
    error: str | None = None


@dataclass
class RunOutcomes:
    """Finished outcomes by run id and the futures of callers waiting for the others."""

    kept: int = OUTCOMES_KEPT
    _done: collections.OrderedDict[str, RunOutcome] = field(default_factory=collections.OrderedDict)
    _waiting: dict[str, list[asyncio.Future[RunOutcome]]] = field(default_factory=dict)

    def get(self, run_id: str) -> RunOutcome | None:
        """The outcome of a finished run still remembered, else None."""
        return self._done.get(run_id)

    def record(self, outcome: RunOutcome) -> None:
        """A run ended: remember it and wake its waiters."""
        self._done[outcome.run_id] = outcome
        self._done.move_to_end(outcome.run_id)
        while len(self._done) > self.kept:
            self._done.popitem(last=False)
        for future in self._waiting.pop(outcome.run_id, []):
            if not future.done():
                future.set_result(outcome)

    async def wait(self, run_id: str, timeout_s: float | None) -> RunOutcome | None:
        """The run's outcome once it ends; None when ``timeout_s`` passes first (None waits
        as long as it takes)."""
        known = self._done.get(run_id)
        if known is not None:
            return known
        future: asyncio.Future[RunOutcome] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(run_id, []).append(future)
        try:
            async with asyncio.timeout(timeout_s):
                return await future
        except TimeoutError:
            return None
        finally:
            self._drop(run_id, future)

    def _drop(self, run_id: str, future: asyncio.Future[RunOutcome]) -> None:
        waiters = self._waiting.get(run_id)
        if waiters is None:
            return
        with contextlib.suppress(ValueError):
            waiters.remove(future)
        if not waiters:
            self._waiting.pop(run_id, None)

    @property
    def waiting(self) -> int:
        """How many callers are waiting (for tests: a caller that left leaves nothing)."""
        return sum(len(w) for w in self._waiting.values())
