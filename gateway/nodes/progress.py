"""Who hears a node's ``node.invoke.progress`` for an invoke.

A caller that wants a running command's output as it comes (the agent's ``node_invoke``
tool) sets :data:`INVOKE_PROGRESS` around its invoke; the router keeps it with the pending
invoke (whose task inherits the caller's context) and hands it the chunks in ``seq`` order.
An operator's plain ``node.invoke`` sets nothing, so its chunks are ignored, as in the real
gateway (which consumes progress only for its own plugin-runtime streams).
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["INVOKE_PROGRESS", "MAX_PENDING_PROGRESS_CHUNKS", "ProgressListener", "ProgressOrder"]

#: Hears each chunk of the invoke's output, in order.
ProgressListener = Callable[[str], None]

INVOKE_PROGRESS: ContextVar[ProgressListener | None] = ContextVar(
    "gateway_invoke_progress", default=None
)
#: Chunks ahead of a gap kept while waiting for the missing ``seq`` (the real gateway's).
MAX_PENDING_PROGRESS_CHUNKS = 128


@dataclass
class ProgressOrder:
    """Delivers chunks to ``listener`` in ``seq`` order: a repeated or stale ``seq`` is
    ignored, one ahead of a gap waits (at most :data:`MAX_PENDING_PROGRESS_CHUNKS`)."""

    listener: ProgressListener
    next_seq: int = 0
    ahead: dict[int, str] = field(default_factory=dict)

    def accept(self, seq: int, chunk: str) -> bool:
        """Take one chunk; False when it was ignored."""
        if seq < self.next_seq or seq in self.ahead:
            return False
        if seq > self.next_seq and len(self.ahead) >= MAX_PENDING_PROGRESS_CHUNKS:
            return False
        self.ahead[seq] = chunk
        while self.next_seq in self.ahead:
            self.listener(self.ahead.pop(self.next_seq))
            self.next_seq += 1
        return True
