"""Errors of the app SDK (all are :class:`~openclaw_desktop.errors.OpenClawError`).

:class:`MissingScope` is the core's own class, so code catching either catches both.
"""

from __future__ import annotations

from openclaw_desktop.errors import MissingScope, OpenClawError

__all__ = ["MissingScope", "Unsupported"]


class Unsupported(OpenClawError):
    """The connected gateway does not offer this method (it is not in ``hello-ok.features``);
    nothing was sent."""

    def __init__(self, method: str, gateway: str = "") -> None:
        where = f" ({gateway})" if gateway else ""
        super().__init__(f"the connected gateway{where} does not support {method}")
        self.method = method
