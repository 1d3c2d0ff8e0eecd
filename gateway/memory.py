"""Giving memory freed after large messages back to the operating system.

CPython frees a large object (a 20 MiB ``params`` string, its JSON copy, the frame that
carried it) with ``free()``, and glibc keeps such freed blocks in the process heap rather than
returning them: after a burst of big ``node.invoke`` calls that were refused or answered,
the gateway's resident memory stays at the burst's peak (hundreds of MiB) although nothing
holds it any more. :func:`trim_soon` asks glibc (``malloc_trim``) to return free heap memory,
at most once per :data:`TRIM_INTERVAL_S`, a little after the last large message let go.
Elsewhere (macOS, Windows, musl) it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
from collections.abc import Callable
from typing import Final

__all__ = ["LARGE_MESSAGE_BYTES", "TRIM_INTERVAL_S", "trim_soon"]

#: A message at least this big is worth a trim once it is released.
LARGE_MESSAGE_BYTES: Final = 1024 * 1024
#: Trims happen at most this often (and this long after the request for one).
TRIM_INTERVAL_S: Final = 1.0


def _load_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    function: Callable[[int], int] = trim
    return function


_TRIM = _load_trim()
#: The loop a trim is scheduled on (a trim scheduled on a loop that since closed never runs).
_scheduled_on: asyncio.AbstractEventLoop | None = None


def _trim() -> None:
    global _scheduled_on
    _scheduled_on = None
    if _TRIM is not None:
        _TRIM(0)


def trim_soon() -> None:
    """Return freed heap memory to the OS a moment from now (coalesced; needs a running
    event loop; a no-op without glibc)."""
    global _scheduled_on
    if _TRIM is None:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if _scheduled_on is loop:
        return
    _scheduled_on = loop
    loop.call_later(TRIM_INTERVAL_S, _trim)
