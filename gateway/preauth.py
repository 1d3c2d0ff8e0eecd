"""The pre-auth budget: connections between the WebSocket upgrade and the end of ``connect``.

Each connection holds a slot from its challenge until it is admitted or refused:

- at most :data:`PER_ADDRESS` slots per client address (the real gateway's 32) and
  :data:`TOTAL` in all; the last :data:`RESERVED` of them go only to addresses holding fewer
  than :data:`NEWCOMER_SLOTS`, so a handful of addresses cannot fill the server for everyone;
- when there is no room, a *silent* socket makes room: one whose challenge went out more than
  :data:`SILENT_AFTER_S` ago and which has not sent a single byte since. It is taken from the
  newcomer's own address when that address is at its cap, else from the address holding the
  most slots. A socket that has sent anything (it is answering the challenge) is never evicted;
- when nothing can be evicted, the newcomer waits (without a challenge, at most
  :data:`MAX_WAITING_PER_ADDRESS` / :data:`MAX_WAITING`) until a slot is released or a silent
  socket ripens, within its deadline; past that (or past the waiting caps) it is refused.

A burst of honest clients from one address therefore queues instead of being cut off, and a
flood of silent sockets only ever pushes out its own kind.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "MAX_WAITING",
    "MAX_WAITING_PER_ADDRESS",
    "NEWCOMER_SLOTS",
    "PER_ADDRESS",
    "RESERVED",
    "SILENT_AFTER_S",
    "TOTAL",
    "PreauthBudget",
    "PreauthSocket",
]

PER_ADDRESS = 32
TOTAL = 512
RESERVED = 64
NEWCOMER_SLOTS = 4
#: A socket that sent nothing this long after its challenge is silent (eviction candidate).
SILENT_AFTER_S = 2.0
MAX_WAITING_PER_ADDRESS = 32
MAX_WAITING = 256
#: Waiters look again at least this often (a silent socket may have ripened meanwhile).
_RECHECK_S = 0.25


class PreauthSocket(Protocol):
    """What the budget needs of a connection."""

    @property
    def heard(self) -> bool:
        """Whether the peer sent anything since the upgrade."""
        ...

    @property
    def gone(self) -> bool:
        """Whether the connection is already closing (a waiter stops waiting)."""
        ...

    def evict(self) -> None:
        """Drop the connection now."""
        ...


@dataclass(slots=True)
class _Slot:
    challenged_at: float | None = None


class PreauthBudget:
    """Slots per client address (see the module docstring); one instance per server."""

    def __init__(
        self,
        *,
        per_address: int = PER_ADDRESS,
        total: int = TOTAL,
        reserved: int = RESERVED,
        newcomer_slots: int = NEWCOMER_SLOTS,
        silent_after_s: float = SILENT_AFTER_S,
        max_waiting_per_address: int = MAX_WAITING_PER_ADDRESS,
        max_waiting: int = MAX_WAITING,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_address = per_address
        self.total = total
        self.reserved = min(reserved, total - 1)
        self.newcomer_slots = newcomer_slots
        self.silent_after_s = silent_after_s
        self.max_waiting_per_address = max_waiting_per_address
        self.max_waiting = max_waiting
        self._clock = clock
        #: Slots per address, oldest first.
        self._slots: dict[str, dict[PreauthSocket, _Slot]] = {}
        self._count = 0
        self._waiting: Counter[str] = Counter()
        self._changed = asyncio.Event()
        self.evicted = 0
        """Silent sockets dropped to make room (for tests and logs)."""

    @property
    def pending(self) -> int:
        """Slots held."""
        return self._count

    @property
    def waiting(self) -> int:
        """Connections waiting for a slot."""
        return sum(self._waiting.values())

    def held_by(self, address: str) -> int:
        """Slots held by ``address``."""
        return len(self._slots.get(address, ()))

    async def acquire(self, address: str, conn: PreauthSocket, timeout_s: float) -> bool:
        """Take a slot for ``conn`` (evicting a silent socket, or waiting, if need be).

        Returns:
            False when there is no room within ``timeout_s`` or too many are waiting.
        """
        if self._take(address, conn):
            return True
        if (
            self._waiting[address] >= self.max_waiting_per_address
            or self.waiting >= self.max_waiting
        ):
            return False
        self._waiting[address] += 1
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        try:
            while True:
                remaining = deadline - loop.time()
                if remaining <= 0 or conn.gone:
                    return False
                changed = self._changed
                try:
                    async with asyncio.timeout(min(remaining, _RECHECK_S)):
                        await changed.wait()
                except TimeoutError:
                    pass
                if self._take(address, conn):
                    return True
        finally:
            self._waiting[address] -= 1
            if self._waiting[address] <= 0:
                del self._waiting[address]

    def challenged(self, address: str, conn: PreauthSocket) -> None:
        """The challenge went out: from now on silence counts."""
        slot = self._slots.get(address, {}).get(conn)
        if slot is not None:
            slot.challenged_at = self._clock()

    def release(self, address: str, conn: PreauthSocket) -> None:
        """Give the slot back (idempotent: an evicted socket no longer holds one)."""
        held = self._slots.get(address)
        if held is None or held.pop(conn, None) is None:
            return
        self._count -= 1
        if not held:
            del self._slots[address]
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _take(self, address: str, conn: PreauthSocket) -> bool:
        mine = self.held_by(address)
        if mine >= self.per_address:
            if not self._evict_from([address]):
                return False
        else:
            limit = self.total if mine < self.newcomer_slots else self.total - self.reserved
            if self._count >= limit:
                # The largest holders pay; never one smaller than the newcomer.
                ranked = sorted(self._slots, key=lambda a: len(self._slots[a]), reverse=True)
                if not self._evict_from([a for a in ranked if len(self._slots[a]) >= mine]):
                    return False
        self._slots.setdefault(address, {})[conn] = _Slot()
        self._count += 1
        return True

    def _evict_from(self, addresses: list[str]) -> bool:
        """Drop the oldest silent socket of the first of ``addresses`` that has one."""
        now = self._clock()
        for address in addresses:
            held = self._slots.get(address, {})
            for conn, slot in held.items():
                if self._silent(conn, slot, now):
                    del held[conn]
                    self._count -= 1
                    if not held:
                        del self._slots[address]
                    self.evicted += 1
                    conn.evict()
                    return True
        return False

    def _silent(self, conn: PreauthSocket, slot: _Slot, now: float) -> bool:
        return (
            slot.challenged_at is not None
            and now - slot.challenged_at >= self.silent_after_s
            and not conn.heard
        )
