"""Failed-auth rate limiting per client address."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["AuthRateLimiter"]

MAX_TRACKED_ADDRESSES = 10_000


@dataclass
class _Entry:
    failures: deque[int] = field(default_factory=deque)
    locked_until_ms: int = 0


class AuthRateLimiter:
    """After ``attempts`` failures within ``window_ms`` an address is locked for ``lockout_ms``."""

    def __init__(self, attempts: int, window_ms: int, lockout_ms: int) -> None:
        self.attempts = attempts
        self.window_ms = window_ms
        self.lockout_ms = lockout_ms
        self._entries: dict[str, _Entry] = {}

    def retry_after_ms(self, address: str, now_ms: int) -> int | None:
        """Milliseconds until the address may try again, or None when it may now."""
        entry = self._entries.get(address)
        if entry is None or entry.locked_until_ms <= now_ms:
            return None
        return entry.locked_until_ms - now_ms

    def record_failure(self, address: str, now_ms: int) -> None:
        """Count one failed attempt."""
        if address not in self._entries and len(self._entries) >= MAX_TRACKED_ADDRESSES:
            self._evict(now_ms)
        entry = self._entries.setdefault(address, _Entry())
        entry.failures.append(now_ms)
        while entry.failures and entry.failures[0] <= now_ms - self.window_ms:
            entry.failures.popleft()
        if len(entry.failures) >= self.attempts:
            entry.locked_until_ms = now_ms + self.lockout_ms
            entry.failures.clear()

    def reset(self, address: str) -> None:
        """Forget an address after a successful authentication."""
        self._entries.pop(address, None)

    def _evict(self, now_ms: int) -> None:
        stale = [
            a
            for a, e in self._entries.items()
            if e.locked_until_ms <= now_ms
            and (not e.failures or e.failures[-1] <= now_ms - self.window_ms)
        ]
        for address in stale or list(self._entries)[: len(self._entries) // 2]:
            del self._entries[address]
