"""Why a live session ended without the user asking: what the chat layer needs to label a
reply that was cut ("interrupted: the gateway stopped", not "(stopped)" as after Stop).

A user's Stop goes through ``chat.abort`` and ends the run with its own event; a cut has
no event at all, the connection just ends. :func:`classify_drop` tells the two kinds of cut
apart; :class:`~openclaw_desktop.runtime.DesktopRuntime` announces each one as an
:class:`Interruption` (``on_interruption``) and keeps the last one (``last_interruption``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from openclaw_desktop.errors import ConnectionClosed, OpenClawError
from openclaw_desktop.protocol import GOING_AWAY_CLOSE_CODES

__all__ = ["CutCause", "Interruption", "classify_drop"]


class CutCause(StrEnum):
    """Why the session ended."""

    #: The gateway process stopped (it crashed, was killed, or shut down).
    GATEWAY_STOPPED = "gateway-stopped"
    #: The connection dropped (network, sleep, a proxy); the gateway may still be running.
    CONNECTION_LOST = "connection-lost"
    #: The user switched to another gateway.
    GATEWAY_SWITCHED = "gateway-switched"


@dataclass(frozen=True, slots=True)
class Interruption:
    """One cut of a live session.

    Attributes:
        cause: why (see :class:`CutCause`).
        role: which session (``operator`` or ``node``).
        at_ms: when (Unix milliseconds).
        detail: the close code and reason, for "Show details" (never a secret).
    """

    cause: CutCause
    role: str
    at_ms: int
    detail: str = ""


def classify_drop(
    error: OpenClawError | None, *, bundled: bool, gateway_exited: bool = False
) -> CutCause:
    """Why a live session ended, from what the transport saw.

    Args:
        error: the transport's last error (usually :class:`ConnectionClosed`).
        bundled: the session was to the bundled gateway this app runs on loopback (there
            is no network in between: a drop means the process stopped).
        gateway_exited: the supervisor saw the gateway process exit.
    """
    if gateway_exited or bundled:
        return CutCause.GATEWAY_STOPPED
    if isinstance(error, ConnectionClosed) and error.code in GOING_AWAY_CLOSE_CODES:
        return CutCause.GATEWAY_STOPPED
    return CutCause.CONNECTION_LOST
