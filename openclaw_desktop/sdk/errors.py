"""Errors of the app SDK (all are :class:`~openclaw_desktop.errors.OpenClawError`).

:class:`MissingScope` is the core's own class, so code catching either catches both.
"""

from __future__ import annotations

from openclaw_desktop.errors import MissingScope, OpenClawError, ProtocolError

__all__ = ["InvalidParams", "InvalidResult", "MissingScope", "Unsupported"]


class Unsupported(OpenClawError):
    """The connected gateway does not offer this method (it is not in ``hello-ok.features``);
    nothing was sent."""

    def __init__(self, method: str, gateway: str = "") -> None:
        where = f" ({gateway})" if gateway else ""
        super().__init__(f"the connected gateway{where} does not support {method}")
        self.method = method


class InvalidParams(OpenClawError, ValueError):
    """The params do not fit the method's model (:mod:`openclaw_desktop.protocol.methods`,
    the one the gateway checks them with); nothing was sent. ``problems`` says which
    fields and why."""

    def __init__(self, method: str, problems: str) -> None:
        super().__init__(f"invalid {method} params: {problems}")
        self.method = method
        self.problems = problems


class InvalidResult(ProtocolError):
    """The gateway's answer to ``method`` does not fit the method's result model
    (:data:`openclaw_desktop.protocol.results.RESULTS`). ``problems`` names the fields and
    what is wrong with them, never their values (an answer may hold secrets)."""

    def __init__(self, method: str, problems: str) -> None:
        super().__init__(f"invalid {method} answer: {problems}")
        self.method = method
        self.problems = problems
