"""Reconnect backoff: the Android schedule, with the gateway's hints on top."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from openclaw_desktop.session.failures import ErrorCategory

__all__ = ["RetryPolicy"]


@dataclass(slots=True)
class RetryPolicy:
    """How long to wait before the next connection attempt.

    ``delay = min(ceiling, base * factor**attempt)`` with the attempt capped at 10; the
    ceiling is 8 s for the first seven attempts and 60 s afterwards, and once the delay
    reaches 60 s it becomes a random 30-60 s, so long outages settle at 30-60 s
    (the Android schedule of the reference). ``attempt`` resets after a successful
    ``hello-ok``.
    """

    base_ms: float = 350.0
    factor: float = 1.7
    early_ceiling_ms: float = 8_000.0
    late_ceiling_ms: float = 60_000.0
    early_attempts: int = 6
    max_attempt: int = 10
    #: Retry interval while a pairing request waits for approval.
    pairing_poll_ms: float = 3_000.0
    rng: Callable[[float, float], float] = field(default=random.uniform)

    def delay_ms(
        self,
        attempt: int,
        category: ErrorCategory | None = None,
        retry_after_ms: int | None = None,
    ) -> float:
        """Milliseconds to wait before attempt number ``attempt + 1``."""
        if category is ErrorCategory.PAIRING:
            return self.pairing_poll_ms
        n = min(max(attempt, 0), self.max_attempt)
        ceiling = self.early_ceiling_ms if n <= self.early_attempts else self.late_ceiling_ms
        delay = min(ceiling, self.base_ms * self.factor**n)
        if delay >= self.late_ceiling_ms:
            delay = self.rng(self.late_ceiling_ms / 2, self.late_ceiling_ms)
        if category is ErrorCategory.SERVER_RESTART:
            delay = max(delay, 1_000.0)
        if retry_after_ms is not None:
            delay = max(delay, float(retry_after_ms))
        return delay
