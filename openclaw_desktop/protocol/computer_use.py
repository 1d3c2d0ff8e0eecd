"""``computer.act`` params as a node that performs the screen actions reads them: the
reference's closed v2 wire schema for those actions, checked field by field, plus this
node's own limits. Pure: no I/O, nothing else of the project (the node wraps
:class:`ComputerParamsError` in its own error type; the gateway's pre-dispatch check is
:mod:`.computer_use_schema`).

Every action object has ``action`` and an ``executionId`` (a UUID; required here, as on the
reference's node hosts). Pointer and keyboard actions may carry ``screenIndex`` and
``refWidth`` (and the window/element reference fields, refused later as unsupported targets).
Clicks, ``mouse_move``, ``left_click_drag``, ``left_mouse_down``/``up`` and ``scroll`` take
``displayFrameId``, ``x``, ``y`` (and ``modifiers``, except the drag, which has ``fromX``,
``fromY``, ``durationMs``); ``scroll`` adds ``scrollDirection`` and ``scrollAmount``;
``type`` takes ``text``; ``key`` takes ``keys``; ``hold_key`` takes ``keys`` and
``durationMs``. ``{"action": "__close_execution", "executionId", "reason"?}`` ends the
execution. Any other field, a wrong type or an unknown action is
``COMPUTER_INVALID_REQUEST: invalid params: ...`` (the reference says ``invalid params``; the
rest names the problem).

Unlike the reference's schema, a ``null`` field counts as absent here, and ``scrollAmount``,
``durationMs`` and ``text`` have this node's upper bounds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACTIONS",
    "CLICKS",
    "CLOSE_ACTION",
    "EXECUTION_ID",
    "INVALID_REQUEST",
    "OTHER_V2_ACTIONS",
    "UNSUPPORTED_ACTION",
    "ActParams",
    "ComputerParamsError",
    "execution_id_of",
    "invalid",
    "parse_act_params",
]

INVALID_REQUEST = "COMPUTER_INVALID_REQUEST"
UNSUPPORTED_ACTION = "COMPUTER_UNSUPPORTED_ACTION"

CLOSE_ACTION = "__close_execution"
CLICKS = {
    "left_click": ("left", 1),
    "right_click": ("right", 1),
    "middle_click": ("middle", 1),
    "double_click": ("left", 2),
    "triple_click": ("left", 3),
}
_POINTER = (*CLICKS, "mouse_move", "left_mouse_down", "left_mouse_up")
_SCREEN = {"screenIndex", "refWidth"}
_REFS = {"windowRef", "elementRef", "observationId", "deliveryMode"}
_COMMON = {"action", "executionId"}
_POINT = {"displayFrameId", "x", "y"}
#: Action -> the fields its object may carry.
ACTIONS: dict[str, frozenset[str]] = {
    **{name: frozenset(_COMMON | _SCREEN | _REFS | _POINT | {"modifiers"}) for name in _POINTER},
    "left_click_drag": frozenset(
        _COMMON | _SCREEN | _REFS | _POINT | {"fromX", "fromY", "durationMs"}
    ),
    "scroll": frozenset(
        _COMMON | _SCREEN | _REFS | _POINT | {"modifiers", "scrollDirection", "scrollAmount"}
    ),
    "type": frozenset(_COMMON | _SCREEN | _REFS | {"text"}),
    "key": frozenset(_COMMON | _SCREEN | _REFS | {"keys"}),
    "hold_key": frozenset(_COMMON | _SCREEN | _REFS | {"keys", "durationMs"}),
    CLOSE_ACTION: frozenset(_COMMON | {"reason"}),
}
#: Actions of the reference's v2 list this node does not perform (window, browser, recording
#: families): refused as unsupported rather than as malformed.
OTHER_V2_ACTIONS = frozenset(
    {
        "list_apps",
        "list_windows",
        "get_accessibility_tree",
        "get_cursor_position",
        "get_window_state",
        "launch_app",
        "kill_app",
        "bring_to_front",
        "set_value",
        "zoom",
        "get_browser_state",
        "browser_prepare",
        "browser_navigate",
        "browser_click",
        "browser_type",
        "browser_dialog",
        "browser_set_input_files",
        "browser_download",
        "browser_pointer",
        "escalate_scope",
        "get_recording_state",
        "start_recording",
        "stop_recording",
        "replay_trajectory",
        "invoke_menu",
    }
)
#: The reference's ``executionId`` pattern (its ``$`` is the very end: match it whole).
EXECUTION_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
)
SCROLL_DIRECTIONS = ("up", "down", "left", "right")
MAX_SCROLL = 100
MAX_HOLD_MS = 10_000
MAX_DRAG_MS = 10_000
MAX_TEXT = 10_000


class ComputerParamsError(ValueError):
    """Malformed ``computer.act`` params: ``code`` (``COMPUTER_INVALID_REQUEST`` or
    ``COMPUTER_UNSUPPORTED_ACTION``) and the human ``message``; ``str`` is ``CODE: message``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def invalid(message: str) -> ComputerParamsError:
    """``COMPUTER_INVALID_REQUEST: <message>``."""
    return ComputerParamsError(INVALID_REQUEST, message)


@dataclass(frozen=True, slots=True)
class ActParams:
    """One validated ``computer.act`` request (fields absent from the request are None)."""

    action: str
    execution_id: str
    fields: dict[str, Any]

    def get(self, key: str) -> Any:
        """A field's value, None when absent."""
        return self.fields.get(key)


def _number(key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise invalid(f"invalid params: {key} must be a number")
    if value < 0:
        raise invalid(f"invalid params: {key} must be >= 0")
    return float(value)


def _integer(key: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(f"invalid params: {key} must be an integer")
    if value < low or (high is not None and value > high):
        bound = f"from {low} to {high}" if high is not None else f">= {low}"
        raise invalid(f"invalid params: {key} must be an integer {bound}")
    return value


def _string(key: str, value: Any, min_length: int = 0) -> str:
    if not isinstance(value, str):
        raise invalid(f"invalid params: {key} must be a string")
    if len(value) < min_length:
        raise invalid(f"invalid params: {key} must not be empty")
    return value


_CHECKS: dict[str, Callable[[str, Any], Any]] = {
    "x": lambda k, v: _number(k, v),
    "y": lambda k, v: _number(k, v),
    "fromX": lambda k, v: _number(k, v),
    "fromY": lambda k, v: _number(k, v),
    "screenIndex": lambda k, v: _integer(k, v, 0),
    "refWidth": lambda k, v: _integer(k, v, 1),
    "scrollAmount": lambda k, v: _integer(k, v, 1, MAX_SCROLL),
    "durationMs": lambda k, v: _integer(k, v, 0, MAX_HOLD_MS),
    "displayFrameId": lambda k, v: _string(k, v),
    "modifiers": lambda k, v: _string(k, v),
    "keys": lambda k, v: _string(k, v),
    "text": lambda k, v: _string(k, v),
    "reason": lambda k, v: _string(k, v),
    "windowRef": lambda k, v: _string(k, v, 1),
    "elementRef": lambda k, v: _string(k, v, 1),
    "observationId": lambda k, v: _string(k, v, 1),
}


def execution_id_of(params: dict[str, Any]) -> str:
    """The request's ``executionId`` (a UUID, as the reference requires).

    Raises:
        ComputerParamsError: ``COMPUTER_INVALID_REQUEST: executionId is required``.
    """
    execution_id = params.get("executionId")
    if not isinstance(execution_id, str) or not EXECUTION_ID.fullmatch(execution_id):
        raise invalid("executionId is required")
    return execution_id


def parse_act_params(params: Any) -> ActParams:
    """Validate one ``computer.act`` request (``null`` fields count as absent).

    Raises:
        ComputerParamsError: ``COMPUTER_INVALID_REQUEST`` (malformed, missing ``executionId``),
            ``COMPUTER_UNSUPPORTED_ACTION`` (a v2 action of a family this node lacks).
    """
    if not isinstance(params, dict):
        raise invalid("invalid params: params must be an object")
    action = params.get("action")
    if not isinstance(action, str):
        raise invalid("invalid params: action must be a string")
    execution_id = params.get("executionId")
    if execution_id is not None:
        execution_id_of(params)
    if action in OTHER_V2_ACTIONS:
        raise ComputerParamsError(
            UNSUPPORTED_ACTION, f"{action} is not supported by this node (screen actions only)"
        )
    allowed = ACTIONS.get(action)
    if allowed is None:
        raise invalid(f"invalid params: unknown action {action!r}")
    fields: dict[str, Any] = {}
    for key, value in params.items():
        if key not in allowed:
            raise invalid(f"invalid params: {key} is not a field of {action}")
        if key in _COMMON or value is None:
            continue
        if key == "scrollDirection":
            if value not in SCROLL_DIRECTIONS:
                raise invalid("invalid params: scrollDirection must be up, down, left or right")
        elif key == "deliveryMode":
            if value not in ("background", "foreground"):
                raise invalid("invalid params: deliveryMode must be background or foreground")
        elif key == "durationMs" and action == "left_click_drag":
            value = _integer(key, value, 0, MAX_DRAG_MS)
        else:
            value = _CHECKS[key](key, value)
        fields[key] = value
    if not isinstance(execution_id, str):
        raise invalid("executionId is required")
    if action == "type":
        text = fields.get("text")
        if not text:
            raise invalid("text is required for type")
        if len(text) > MAX_TEXT:
            raise invalid(f"invalid params: text is longer than {MAX_TEXT} characters")
    if action in ("key", "hold_key") and not fields.get("keys"):
        raise invalid(f"keys is required for {action}")
    if action == "scroll" and "scrollDirection" not in fields:
        raise invalid("scrollDirection is required for scroll")
    return ActParams(action, execution_id, fields)
