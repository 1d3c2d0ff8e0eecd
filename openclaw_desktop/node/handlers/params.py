"""What every command area needs to check params: one error type and the object check."""

from __future__ import annotations

from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["BadParams", "params_object"]


class BadParams(DeviceError):
    """A param the agent got wrong; reaches the wire as ``INVALID_REQUEST: <message>``."""

    def __init__(self, message: str) -> None:
        super().__init__(NodeErrorCode.INVALID_REQUEST, message)


def params_object(params: Any) -> dict[str, Any]:
    """The params as a dict (absent means ``{}``).

    Raises:
        BadParams: They are not a JSON object.
    """
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise BadParams("params must be an object")
    return params
