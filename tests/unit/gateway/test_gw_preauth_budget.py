"""The pre-auth budget's accounting: per-address cap, the newcomers' share, who is evicted
(only silent sockets, from the largest holder) and waiting for a slot. A hand-driven clock;
the sockets are plain records of what the budget did to them."""

from __future__ import annotations

import asyncio

from gateway.preauth import PreauthBudget


class Sock:
    """A connection as the budget sees it."""

    def __init__(self) -> None:
        self.heard = False
        self.gone = False
        self.evicted = False

    def evict(self) -> None:
        self.evicted = self.gone = True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def budget(clock: Clock, **kw: int | float) -> PreauthBudget:
    options: dict[str, int | float] = {
        "per_address": 3,
        "total": 10,
        "reserved": 2,
        "newcomer_slots": 1,
        "silent_after_s": 2.0,
        "max_waiting_per_address": 2,
        "max_waiting": 4,
    }
    options.update(kw)
    return PreauthBudget(clock=clock, **options)  # type: ignore[arg-type]


async def fill(b: PreauthBudget, address: str, n: int, *, challenged: bool = True) -> list[Sock]:
    socks = [Sock() for _ in range(n)]
    for sock in socks:
        assert await b.acquire(address, sock, 0.01)
        if challenged:
            b.challenged(address, sock)
    return socks


async def test_an_address_at_its_cap_evicts_only_its_own_silent_socket() -> None:
    clock = Clock()
    b = budget(clock)
    a_socks = await fill(b, "a", 3)
    a_socks[0].heard = True  # answering its challenge
    assert not await b.acquire("a", Sock(), 0.01)  # nothing silent yet: waited, then refused
    clock.now += 2.5
    newcomer = Sock()
    assert await b.acquire("a", newcomer, 0.01)
    assert [s.evicted for s in a_socks] == [False, True, False]
    assert b.held_by("a") == 3 and b.evicted == 1


async def test_the_last_slots_are_kept_for_newcomers() -> None:
    clock = Clock()
    b = budget(clock, per_address=10)
    await fill(b, "big", 8)  # total 10, reserved 2: a big holder stops at 8
    assert not await b.acquire("big", Sock(), 0.01)
    assert await b.acquire("new1", Sock(), 0.01)
    assert await b.acquire("new2", Sock(), 0.01)
    assert b.pending == 10


async def test_a_full_budget_makes_room_from_the_largest_holder() -> None:
    clock = Clock()
    b = budget(clock, per_address=10, reserved=0)
    small = await fill(b, "small", 2)
    big = await fill(b, "big", 8)
    clock.now += 3
    assert await b.acquire("third", Sock(), 0.01)
    assert [s.evicted for s in big] == [True] + [False] * 7
    assert not any(s.evicted for s in small)


async def test_an_unchallenged_socket_is_not_silent_yet() -> None:
    clock = Clock()
    b = budget(clock)
    await fill(b, "a", 3, challenged=False)
    clock.now += 60
    assert not await b.acquire("a", Sock(), 0.01)
    assert b.evicted == 0


async def test_a_waiter_gets_the_released_slot() -> None:
    clock = Clock()
    b = budget(clock)
    socks = await fill(b, "a", 3)
    waiter = asyncio.create_task(b.acquire("a", Sock(), 5))
    await asyncio.sleep(0.01)
    assert b.waiting == 1 and not waiter.done()
    b.release("a", socks[1])
    assert await asyncio.wait_for(waiter, 1) is True
    assert b.waiting == 0 and b.held_by("a") == 3
    b.release("a", socks[1])  # idempotent
    assert b.held_by("a") == 3


async def test_waiting_is_bounded() -> None:
    clock = Clock()
    b = budget(clock, total=5, reserved=0, max_waiting=3)
    await fill(b, "a", 3)
    await fill(b, "b", 2)
    waiters = [asyncio.create_task(b.acquire("a", Sock(), 5)) for _ in range(2)]
    await asyncio.sleep(0.01)
    assert not await b.acquire("a", Sock(), 5)  # a third waiter for "a" is refused at once
    gone = Sock()
    late = asyncio.create_task(b.acquire("c", gone, 5))
    await asyncio.sleep(0.01)
    assert b.waiting == 3
    assert not await b.acquire("d", Sock(), 5)  # and so is a fourth in all
    gone.gone = True  # the client hung up while waiting
    assert await asyncio.wait_for(late, 1) is False
    for task in waiters:
        task.cancel()
    await asyncio.gather(*waiters, return_exceptions=True)
    assert b.waiting == 0
