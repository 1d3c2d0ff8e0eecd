"""The one error type device adapters raise."""

from __future__ import annotations

from openclaw_desktop.errors import OpenClawError

__all__ = ["DeviceError"]


class DeviceError(OpenClawError):
    """A device operation failed in a way the agent should hear about.

    ``code`` is a node error code (``UNAVAILABLE``, ``INVALID_REQUEST``,
    ``PAYLOAD_TOO_LARGE``, ...); ``message`` is the human text after it. The dispatcher turns
    this into ``node.invoke.result`` ``{ok: false, error: {code, message: "CODE: message"}}``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
