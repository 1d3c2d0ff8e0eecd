"""gateway.memory: after large messages, freed heap memory goes back to the OS, coalesced to
one trim per interval per loop (with glibc; elsewhere nothing happens)."""

from __future__ import annotations

import asyncio

import pytest

from gateway import memory


async def test_trims_are_coalesced_and_run_after_the_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many requests in a burst make one trim, a moment later; the next burst makes another."""
    calls: list[int] = []
    monkeypatch.setattr(memory, "_TRIM", calls.append)
    monkeypatch.setattr(memory, "TRIM_INTERVAL_S", 0.05)
    monkeypatch.setattr(memory, "_scheduled_on", None)
    for _ in range(10):
        memory.trim_soon()
    assert calls == []
    for _ in range(50):  # bounded: the trim comes one interval later
        if calls:
            break
        await asyncio.sleep(0.02)
    assert calls == [0]
    memory.trim_soon()
    for _ in range(50):
        if len(calls) == 2:
            break
        await asyncio.sleep(0.02)
    assert calls == [0, 0]


def test_without_a_loop_or_glibc_nothing_happens(monkeypatch: pytest.MonkeyPatch) -> None:
    """No running loop: no trim is scheduled (and no error)."""
    calls: list[int] = []
    monkeypatch.setattr(memory, "_TRIM", calls.append)
    monkeypatch.setattr(memory, "_scheduled_on", None)
    memory.trim_soon()
    assert memory._scheduled_on is None
    monkeypatch.setattr(memory, "_TRIM", None)
    memory.trim_soon()
    assert calls == []


def test_glibc_malloc_trim_is_found_on_linux() -> None:
    """On glibc Linux the real malloc_trim is loaded and callable."""
    if memory._TRIM is None:
        pytest.skip("no glibc malloc_trim on this platform")
    assert memory._TRIM(0) in (0, 1)
