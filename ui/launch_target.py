"""What the app was started with, beyond which gateway: an ``openclaw://pair`` link, and
whether the command line named the gateway."""

from __future__ import annotations

from dataclasses import dataclass, field

from openclaw_desktop.links import PairLink
from ui.runtime import RuntimeTarget

__all__ = ["LaunchTarget"]


@dataclass
class LaunchTarget(RuntimeTarget):
    """The target the launcher hands to :func:`ui.app.run`.

    ``pair_link`` is an ``openclaw://pair?code=...`` link from the command line (a browser or
    the desktop entry's ``%u``), already parsed and checked. The app opens its connect screen
    with that setup code filled in, and connects only when the user confirms: any web page
    can make the system open such a link, so it must never connect (nor offer this
    computer's node) by itself.

    ``explicit`` says the gateway was named on the command line (``--gateway-port`` or
    ``--gateway-url``): this launch uses it, not the gateway remembered from the last one.
    """

    pair_link: PairLink | None = field(default=None, repr=False)
    explicit: bool = False
