"""A running command's output as ``node.invoke.progress`` chunks.

:class:`OutputChunker` turns the bytes of stdout and stderr (each decoded on its own, so a
character split across two reads of one stream stays whole) into text chunks of at most
:data:`CHUNK_BYTES` UTF-8 bytes, never splitting a character, in the order the bytes
arrived. :class:`ProgressStream` sends them with increasing ``seq`` (from 0, as the real node
host), batched: a chunk goes when it is full or :data:`FLUSH_INTERVAL_S` after the first byte
of it arrived, never one frame per read. A refused or failed progress request ends the
streaming (logged at debug), never the run: the final result carries the output anyway.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging

from openclaw_desktop.node.progress import ProgressSend

__all__ = ["CHUNK_BYTES", "FLUSH_INTERVAL_S", "OutputChunker", "ProgressStream", "split_utf8"]

log = logging.getLogger("openclaw.node.exec")

#: The largest chunk, in UTF-8 bytes (the gateway's ``MAX_PROGRESS_CHUNK_BYTES``).
CHUNK_BYTES = 16384
#: Seconds a partial chunk waits for more output before it is sent.
FLUSH_INTERVAL_S = 0.1
#: Seconds the end of a run waits for the last chunks to be answered.
CLOSE_TIMEOUT_S = 5.0


def split_utf8(text: str, limit: int = CHUNK_BYTES) -> list[str]:
    """``text`` cut into pieces of at most ``limit`` UTF-8 bytes, on character boundaries."""
    if limit < 4:
        raise ValueError("limit must hold any character (4 bytes)")
    data = text.encode("utf-8", errors="surrogatepass")
    pieces: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:  # inside a character
            end -= 1
        pieces.append(data[start:end].decode("utf-8", errors="surrogatepass"))
        start = end
    return pieces


class OutputChunker:
    """Bytes of named streams in, bounded text chunks out (in arrival order)."""

    def __init__(self, limit: int = CHUNK_BYTES) -> None:
        self.limit = limit
        self._decoders: dict[str, codecs.IncrementalDecoder] = {}
        self._text: list[str] = []
        self._bytes = 0

    @property
    def buffered(self) -> int:
        """UTF-8 bytes of decoded text not yet taken."""
        return self._bytes

    def feed(self, stream: str, data: bytes) -> None:
        """Add bytes read from ``stream`` (an incomplete character waits for its rest)."""
        decoder = self._decoders.get(stream)
        if decoder is None:
            decoder = self._decoders[stream] = codecs.getincrementaldecoder("utf-8")("replace")
        self._add(decoder.decode(data))

    def finish(self) -> None:
        """The streams ended: a character left incomplete becomes U+FFFD, as in the result."""
        for decoder in self._decoders.values():
            self._add(decoder.decode(b"", final=True))

    def _add(self, text: str) -> None:
        if text:
            self._text.append(text)
            self._bytes += len(text.encode("utf-8"))

    def full(self) -> bool:
        """A whole chunk is buffered."""
        return self._bytes >= self.limit

    def take(self) -> list[str]:
        """Everything buffered, as chunks of at most :attr:`limit` bytes."""
        text = "".join(self._text)
        self._text.clear()
        self._bytes = 0
        return split_utf8(text, self.limit) if text else []


class ProgressStream:
    """Sends a command's output while it runs; :meth:`feed` is synchronous (the pipe
    readers call it), the sends happen on a task of their own, one at a time, in order."""

    def __init__(
        self,
        send: ProgressSend,
        *,
        limit: int = CHUNK_BYTES,
        interval_s: float = FLUSH_INTERVAL_S,
    ) -> None:
        self._send = send
        self._chunker = OutputChunker(limit)
        self._interval = interval_s
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._closing = False
        self._failed = False
        self.seq = 0
        self._task = asyncio.get_running_loop().create_task(self._pump(), name="exec-progress")

    def feed(self, stream: str, data: bytes) -> None:
        """Output read from ``stream`` (already within the output cap)."""
        if self._failed or self._closing or not data:
            return
        was_empty = self._chunker.buffered == 0
        self._chunker.feed(stream, data)
        if self._chunker.full():
            self._wake.set()
        elif was_empty and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._interval, self._wake.set)

    async def aclose(self) -> None:
        """Send what is left (bounded by :data:`CLOSE_TIMEOUT_S`), then stop."""
        self._closing = True
        self._chunker.finish()
        self._wake.set()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await asyncio.shield(self._task)
        except TimeoutError:
            log.debug("exec progress: last chunks not answered in time")
            await self.cancel()

    async def cancel(self) -> None:
        """Stop at once (the run was cancelled): nothing more is sent."""
        self._failed = True
        if self._timer is not None:
            self._timer.cancel()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            for chunk in self._chunker.take():
                if self._failed:
                    break
                try:
                    await self._send(self.seq, chunk)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # refused or undeliverable: the result still comes
                    log.debug("exec progress stopped: %s", exc)
                    self._failed = True
                    break
                self.seq += 1
            if self._failed or (self._closing and self._chunker.buffered == 0):
                return
