"""What a node command returns: a payload or a typed error, never an exception."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["Handler", "InvokeResult"]


@dataclass(frozen=True, slots=True)
class InvokeResult:
    """The outcome of one ``node.invoke.request``."""

    ok: bool
    payload: Any = None
    error_code: str | None = None
    error_message: str | None = None

    @classmethod
    def success(cls, payload: Any = None) -> InvokeResult:
        """A successful result."""
        return cls(True, payload)

    @classmethod
    def error(cls, code: NodeErrorCode | str, message: str) -> InvokeResult:
        """A failed result; the wire message repeats the code as prefix (``CODE: text``)."""
        code_text = str(code)
        text = message if message.startswith(f"{code_text}:") else f"{code_text}: {message}"
        return cls(False, None, code_text, text)

    def to_wire(self, invoke_id: str, node_id: str) -> dict[str, Any]:
        """``node.invoke.result`` params."""
        params: dict[str, Any] = {"id": invoke_id, "nodeId": node_id, "ok": self.ok}
        if self.ok:
            if self.payload is not None:
                params["payload"] = self.payload
        else:
            # The gateway itself prefixes the code ("CODE: message"), as observed on the real
            # one; sending the prefix too would double it.
            message = self.error_message or ""
            prefix = f"{self.error_code}: "
            if message.startswith(prefix):
                message = message[len(prefix) :]
            # The reference's schema refuses an empty code or message: leave either out.
            error = {"code": self.error_code, "message": message}
            params["error"] = {key: text for key, text in error.items() if text}
        return params


#: A command handler: decoded params in, a result out. It may also raise
#: :class:`~openclaw_desktop.devices.DeviceError` for a typed failure.
Handler = Callable[[Any], Awaitable[InvokeResult]]
