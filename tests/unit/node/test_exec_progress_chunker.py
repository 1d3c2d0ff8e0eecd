"""The ``system.run`` progress chunker: UTF-8 boundaries, the chunk bound, order, and the
stream's batching and failure handling (real asyncio, a recording send)."""

from __future__ import annotations

import asyncio

import pytest

from openclaw_desktop.node.exec.chunker import (
    CHUNK_BYTES,
    OutputChunker,
    ProgressStream,
    split_utf8,
)

pytestmark = pytest.mark.timeout(20)


def test_split_never_cuts_a_character_and_keeps_the_bound() -> None:
    text = "a€😀b" * 5000 + "é"
    pieces = split_utf8(text, 7)
    assert "".join(pieces) == text
    assert all(0 < len(p.encode()) <= 7 for p in pieces)
    # the default bound is the gateway's 16 KiB, and full pieces are as full as a
    # character boundary allows (at most 3 bytes short of it)
    big = split_utf8("€" * 20_000)
    assert [len(p.encode()) for p in big[:-1]] == [CHUNK_BYTES - 1] * (len(big) - 1)
    assert "".join(big) == "€" * 20_000
    assert split_utf8("") == []
    with pytest.raises(ValueError, match="limit must hold any character"):
        split_utf8("x", 3)


def test_a_character_split_across_reads_stays_whole_per_stream() -> None:
    chunker = OutputChunker(limit=64)
    euro = "€".encode()
    chunker.feed("stdout", b"x" + euro[:1])
    chunker.feed("stderr", b"E" + euro[:2])  # the other stream's half does not mix in
    chunker.feed("stdout", euro[1:] + b"y")
    chunker.feed("stderr", euro[2:])
    assert "".join(chunker.take()) == "xE€y€"
    chunker.feed("stdout", euro[:2])
    chunker.finish()  # cut off for good: the replacement character, as in the result
    assert chunker.take() == ["\ufffd"]


def test_take_bounds_every_chunk_and_keeps_arrival_order() -> None:
    chunker = OutputChunker(limit=10)
    for i in range(30):
        chunker.feed("stdout" if i % 2 else "stderr", f"{i:02d}é".encode())
    assert chunker.full()
    chunks = chunker.take()
    assert "".join(chunks) == "".join(f"{i:02d}é" for i in range(30))
    assert all(len(c.encode()) <= 10 for c in chunks)
    assert chunker.buffered == 0 and chunker.take() == []


async def test_stream_batches_orders_and_numbers_its_chunks() -> None:
    sent: list[tuple[int, str]] = []

    async def send(seq: int, chunk: str) -> object:
        await asyncio.sleep(0.01)  # an answer takes a while: later output queues up
        sent.append((seq, chunk))
        return {"ok": True}

    stream = ProgressStream(send, limit=16, interval_s=0.05)
    for i in range(200):  # 200 small reads: far fewer frames
        stream.feed("stdout", f"{i};".encode())
        if i % 50 == 0:
            await asyncio.sleep(0.08)
    await stream.aclose()
    assert [seq for seq, _ in sent] == list(range(len(sent)))
    assert "".join(chunk for _, chunk in sent) == "".join(f"{i};" for i in range(200))
    assert all(0 < len(chunk.encode()) <= 16 for _, chunk in sent)
    assert len(sent) < 200 and stream.seq == len(sent)


async def test_a_partial_chunk_waits_for_the_interval_not_for_the_end() -> None:
    sent: list[str] = []

    async def send(seq: int, chunk: str) -> object:
        sent.append(chunk)
        return {}

    stream = ProgressStream(send, interval_s=0.05)
    stream.feed("stdout", b"first line\n")
    async with asyncio.timeout(5):
        while not sent:
            await asyncio.sleep(0.01)
    assert sent == ["first line\n"]
    await stream.aclose()
    assert sent == ["first line\n"]  # nothing sent twice, no empty frame


async def test_a_refused_progress_ends_the_streaming_not_the_caller() -> None:
    calls: list[int] = []

    async def send(seq: int, chunk: str) -> object:
        calls.append(seq)
        raise RuntimeError("unknown method: node.invoke.progress")

    stream = ProgressStream(send, limit=8, interval_s=0.01)
    stream.feed("stdout", b"a" * 40)
    await asyncio.sleep(0.05)
    stream.feed("stdout", b"more")
    await stream.aclose()
    assert calls == [0]  # refused once, then quiet


async def test_cancel_stops_without_sending_the_rest() -> None:
    started = asyncio.Event()
    sent: list[str] = []

    async def send(seq: int, chunk: str) -> object:
        started.set()
        await asyncio.sleep(30)
        sent.append(chunk)
        return {}

    stream = ProgressStream(send, interval_s=0.01)
    stream.feed("stdout", b"x")
    await started.wait()
    await stream.cancel()
    assert sent == []
