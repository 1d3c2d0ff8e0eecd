"""Talk limits and vocabulary the gateway answers with; the ``talk.*`` params themselves
are the models of :mod:`openclaw_desktop.protocol.methods.talk`."""

from __future__ import annotations

from typing import get_args

from openclaw_desktop.protocol.methods.talk import TalkBrain, TalkMode, TalkTransport

__all__ = ["BRAINS", "MAX_SESSIONS_PER_CONNECTION", "MODES", "TRANSPORTS"]

#: Open talk sessions one connection may hold.
MAX_SESSIONS_PER_CONNECTION = 4
#: What ``talk.catalog`` lists: the session kinds, transports and brains, in the
#: reference's order.
MODES: tuple[str, ...] = get_args(TalkMode)
TRANSPORTS: tuple[str, ...] = get_args(TalkTransport)
BRAINS: tuple[str, ...] = get_args(TalkBrain)
