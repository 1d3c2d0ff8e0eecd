"""What every command area needs to check params: one error type, the object check and
bounded integers."""

from __future__ import annotations

from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import NodeErrorCode

__all__ = ["BadParams", "int_param", "params_object"]


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


def int_param(params: dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    """``params[key]`` as an integer from ``low`` to ``high`` (a whole float counts; absent
    is ``default``).

    Raises:
        BadParams: ``<key> must be an integer from <low> to <high>``.
    """
    value = params.get(key)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadParams(f"{key} must be an integer from {low} to {high}")
    return value
