"""``computer.act`` params on this node: the wire protocol's parser
(:mod:`openclaw_desktop.protocol.computer_use`), its refusals as the node's ``DeviceError``
(``COMPUTER_INVALID_REQUEST`` / ``COMPUTER_UNSUPPORTED_ACTION``, same texts)."""

from __future__ import annotations

from typing import Any

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.protocol import computer_use
from openclaw_desktop.protocol.computer_use import (
    ACTIONS,
    CLICKS,
    CLOSE_ACTION,
    OTHER_V2_ACTIONS,
    ActParams,
    ComputerParamsError,
)

__all__ = [
    "ACTIONS",
    "CLICKS",
    "CLOSE_ACTION",
    "OTHER_V2_ACTIONS",
    "ActParams",
    "execution_id_of",
    "invalid",
    "parse_act_params",
]


def _device_error(error: ComputerParamsError) -> DeviceError:
    return DeviceError(error.code, error.message)


def invalid(message: str) -> DeviceError:
    """``COMPUTER_INVALID_REQUEST: <message>``."""
    return _device_error(computer_use.invalid(message))


def execution_id_of(params: dict[str, Any]) -> str:
    """See :func:`openclaw_desktop.protocol.computer_use.execution_id_of`.

    Raises:
        DeviceError: ``COMPUTER_INVALID_REQUEST: executionId is required``.
    """
    try:
        return computer_use.execution_id_of(params)
    except ComputerParamsError as exc:
        raise _device_error(exc) from None


def parse_act_params(params: Any) -> ActParams:
    """See :func:`openclaw_desktop.protocol.computer_use.parse_act_params`.

    Raises:
        DeviceError: ``COMPUTER_INVALID_REQUEST`` or ``COMPUTER_UNSUPPORTED_ACTION``.
    """
    try:
        return computer_use.parse_act_params(params)
    except ComputerParamsError as exc:
        raise _device_error(exc) from None
