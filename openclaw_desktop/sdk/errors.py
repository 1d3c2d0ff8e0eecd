"""Errors of the app SDK (all are :class:`~openclaw_desktop.errors.OpenClawError`)."""

from __future__ import annotations

from collections.abc import Sequence

from openclaw_desktop.errors import GatewayError, OpenClawError

__all__ = ["MissingScope", "Unsupported"]


class Unsupported(OpenClawError):
    """The connected gateway does not offer this method (it is not in ``hello-ok.features``);
    nothing was sent."""

    def __init__(self, method: str, gateway: str = "") -> None:
        where = f" ({gateway})" if gateway else ""
        super().__init__(f"the connected gateway{where} does not support {method}")
        self.method = method


class MissingScope(GatewayError):
    """The gateway refused: the connection lacks an operator scope (``MISSING_SCOPE``).

    Connect again asking for :attr:`missing_scope` (``OpenClaw.connect(scopes=...)``).
    """

    def __init__(self, error: GatewayError) -> None:
        super().__init__(
            error.code,
            error.message,
            error.details,
            retryable=error.retryable,
            retry_after_ms=error.retry_after_ms,
            method=error.method,
        )
        missing = error.detail("missingScope")
        required = error.detail("requiredScopes")
        self.missing_scope: str | None = missing if isinstance(missing, str) else None
        self.required_scopes: Sequence[str] = list(required) if isinstance(required, list) else []
