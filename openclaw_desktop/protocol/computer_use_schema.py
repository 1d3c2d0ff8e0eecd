"""The reference's closed v2 ``computer.act`` wire schema, and the risk a gateway reads from it
before dispatch.

The real gateway (npm ``openclaw`` 2026.9.6) loads its ``cua-computer`` plugin's node-invoke
policy on every platform. That policy classifies every ``computer.act``'s arguments before
they are sent: ``{"action": "__close_execution", ...}`` (any object with that action) is
*ordinary* ``execution_lifecycle``; anything else must be one of the schema's action objects,
else the classification fails and the gateway refuses the invoke itself. The schema is a
union of closed objects (no other field; ``executionId``, when present, a v4-style lowercase
UUID); ``screenshot`` and ``wait`` are v2 action names but not ``computer.act`` objects.
Unlike the node's reading (:mod:`.computer_use`), ``null`` is no value of any field and no
field has the node's upper bounds. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from openclaw_desktop.protocol.computer_use import CLOSE_ACTION, EXECUTION_ID, invalid

__all__ = [
    "HIGH_RISK_FAMILIES",
    "OBSERVATION_ACTIONS",
    "SCHEMA_ACTIONS",
    "ComputerActRisk",
    "check_act_schema",
    "classify_act_risk",
]

Check = Callable[[Any], bool]


_JOINER = "\u200d"


def _modifier(char: str) -> bool:
    """A combining mark or variation selector of the ranges the reference's checker knows."""
    point = ord(char)
    return (
        0x0300 <= point <= 0x036F
        or 0x1AB0 <= point <= 0x1AFF
        or 0x1DC0 <= point <= 0x1DFF
        or 0xFE20 <= point <= 0xFE2F
        or 0xFE00 <= point <= 0xFE0F
    )


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _grapheme_length(value: str) -> int:
    """A string's length as the reference's schema checker counts it: characters, each with
    the combining marks and variation selectors after it, joined to the next one by a
    zero-width joiner that is not last, and regional indicators in pairs (so 150 ``e`` +
    combining acute pass a limit of 200, and a skin tone counts as a character of its own)."""
    count = index = 0
    size = len(value)
    while index < size:
        first = value[index]
        index += 1
        while index < size and _modifier(value[index]):
            index += 1
        while index < size - 1 and value[index] == _JOINER:
            index += 2
            while index < size and _modifier(value[index]):
                index += 1
        if _regional(first) and index < size and _regional(value[index]):
            index += 1
        count += 1
    return count


def _string(min_length: int = 0, max_length: int | None = None, pattern: str = "") -> Check:
    compiled = re.compile(pattern) if pattern else None

    def check(value: Any) -> bool:
        if not isinstance(value, str):
            return False
        size = _grapheme_length(value)
        if size < min_length or (max_length is not None and size > max_length):
            return False
        return compiled is None or compiled.fullmatch(value) is not None

    return check


def _number(minimum: float | None = 0) -> Check:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if not math.isfinite(value):
            return False
        return minimum is None or value >= minimum

    return check


def _integer(minimum: int, maximum: int | None = None) -> Check:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if isinstance(value, float) and not value.is_integer():
            return False
        return value >= minimum and (maximum is None or value <= maximum)

    return check


def _enum(*values: str) -> Check:
    return lambda value: isinstance(value, str) and value in values


def _boolean(value: Any) -> bool:
    return isinstance(value, bool)


def _string_list(item: Check, min_items: int, max_items: int) -> Check:
    def check(value: Any) -> bool:
        if not isinstance(value, list) or not min_items <= len(value) <= max_items:
            return False
        return all(item(entry) for entry in value)

    return check


_RESOURCE = (
    r"openclaw:computer-resource:v1:"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
)
_REF = _string(1)
_TEXT = _string()
_POINT = _number()
_DELIVERY = _enum("background", "foreground")
_INPUT_ROUTE = _enum("trusted", "dom_event")
_DEPTH, _MAX_ELEMENTS = _integer(0, 64), _integer(1, 2000)


@dataclass(frozen=True, slots=True)
class _Object:
    """One closed action object: optional and required fields (besides the common two)."""

    optional: Mapping[str, Check]
    required: Mapping[str, Check]


def _obj(optional: Mapping[str, Check] | None = None, /, **required: Check) -> _Object:
    return _Object(dict(optional or {}), required)


_SCREEN: dict[str, Check] = {"screenIndex": _integer(0), "refWidth": _integer(1)}
_REFERENCES: dict[str, Check] = {
    "windowRef": _REF,
    "elementRef": _REF,
    "observationId": _REF,
    "deliveryMode": _DELIVERY,
}
_AT: dict[str, Check] = {"displayFrameId": _TEXT, "x": _POINT, "y": _POINT}
_POINTER = _obj({**_AT, "modifiers": _TEXT, **_SCREEN, **_REFERENCES})
_TREE: dict[str, Check] = {"query": _TEXT, "depth": _DEPTH, "maxElements": _MAX_ELEMENTS}
_PAGE: dict[str, Check] = {"browserRef": _REF, "pageRef": _REF}
_ELEMENT_ON_PAGE: dict[str, Check] = {**_PAGE, "observationId": _REF, "elementRef": _REF}

SCHEMA_ACTIONS: Final[Mapping[str, tuple[_Object, ...]]] = {
    **{
        name: (_POINTER,)
        for name in (
            "left_click",
            "right_click",
            "middle_click",
            "double_click",
            "triple_click",
            "mouse_move",
            "left_mouse_down",
            "left_mouse_up",
        )
    },
    "left_click_drag": (
        _obj(
            {
                **_AT,
                "fromX": _POINT,
                "fromY": _POINT,
                "durationMs": _integer(0),
                **_SCREEN,
                **_REFERENCES,
            }
        ),
    ),
    "scroll": (
        _obj(
            {
                **_AT,
                "modifiers": _TEXT,
                "scrollDirection": _enum("up", "down", "left", "right"),
                "scrollAmount": _integer(1),
                **_SCREEN,
                **_REFERENCES,
            }
        ),
    ),
    "type": (_obj({"text": _TEXT, **_SCREEN, **_REFERENCES}),),
    "key": (_obj({"keys": _TEXT, **_SCREEN, **_REFERENCES}),),
    "hold_key": (_obj({"keys": _TEXT, "durationMs": _integer(0), **_SCREEN, **_REFERENCES}),),
    "list_apps": (_obj(),),
    "list_windows": (_obj(),),
    "get_cursor_position": (_obj(),),
    "get_accessibility_tree": (_obj({"windowRef": _REF, **_TREE}),),
    "get_window_state": (_obj({"includeScreenshot": _boolean, **_TREE}, windowRef=_REF),),
    "launch_app": (_obj(app=_REF),),
    "kill_app": (_obj(app=_REF),),
    "bring_to_front": (_obj(windowRef=_REF),),
    "set_value": (
        _obj(
            {"deliveryMode": _DELIVERY},
            windowRef=_REF,
            elementRef=_REF,
            observationId=_REF,
            value=_TEXT,
        ),
    ),
    "invoke_menu": (
        _obj(
            {"deliveryMode": _DELIVERY},
            windowRef=_REF,
            path=_string_list(_string(1, 200), 1, 16),
        ),
    ),
    "zoom": (_obj(windowRef=_REF, observationId=_REF, x1=_POINT, y1=_POINT, x2=_POINT, y2=_POINT),),
    "get_browser_state": (
        _obj(windowRef=_REF),
        _obj(
            {
                "snapshotFormat": _enum("dom_refs_v1", "semantic_v2"),
                "elementRef": _REF,
                "observationId": _REF,
                "query": _TEXT,
                "continuation": _REF,
                "includeScreenshot": _boolean,
            },
            **_PAGE,
        ),
    ),
    "browser_prepare": (
        _obj(
            {
                "profile": _enum("isolated_new", "isolated_named"),
                "profileName": _string(1, 64, r"[A-Za-z0-9._-]+"),
            },
            windowRef=_REF,
        ),
    ),
    "browser_navigate": (_obj(url=_REF, **_PAGE),),
    "browser_click": (
        _obj(
            {"elementRef": _REF, "x": _POINT, "y": _POINT, "inputRoute": _INPUT_ROUTE},
            observationId=_REF,
            **_PAGE,
        ),
    ),
    "browser_type": (
        _obj(
            {"mode": _enum("insert_text", "keystrokes"), "replace": _boolean},
            text=_TEXT,
            **_ELEMENT_ON_PAGE,
        ),
    ),
    "browser_dialog": (
        _obj(dialogAction=_enum("inspect"), **_PAGE),
        _obj(
            {"promptText": _TEXT, "deliveryMode": _DELIVERY},
            dialogAction=_enum("accept"),
            dialogRef=_REF,
            **_PAGE,
        ),
        _obj({"deliveryMode": _DELIVERY}, dialogAction=_enum("dismiss"), dialogRef=_REF, **_PAGE),
    ),
    "browser_set_input_files": (
        _obj(resourceHandles=_string_list(_string(pattern=_RESOURCE), 1, 32), **_ELEMENT_ON_PAGE),
    ),
    "browser_download": (_obj(**_ELEMENT_ON_PAGE),),
    "browser_pointer": (
        _obj(
            {
                "inputRoute": _INPUT_ROUTE,
                "elementRef": _REF,
                "x": _POINT,
                "y": _POINT,
                "destinationElementRef": _REF,
                "toX": _POINT,
                "toY": _POINT,
                "deltaX": _number(None),
                "deltaY": _number(None),
            },
            observationId=_REF,
            pointerAction=_enum("hover", "right_click", "double_click", "scroll", "drag"),
            **_PAGE,
        ),
    ),
    "escalate_scope": (
        _obj(
            reason=_enum(
                "ax_tree_pixel_mismatch",
                "background_delivery_failed",
                "foreground_ineffective",
                "no_window_target",
                "other",
            )
        ),
    ),
    "get_recording_state": (_obj(),),
    "stop_recording": (_obj(),),
    "start_recording": (_obj({"recordVideo": _boolean}),),
    "replay_trajectory": (
        _obj(
            {"delayMs": _integer(0, 10_000), "stopOnError": _boolean},
            resourceHandle=_string(pattern=_RESOURCE),
        ),
    ),
}
"""Each ``computer.act`` action -> the closed objects it may be (any one of them)."""

HIGH_RISK_FAMILIES: Final[Mapping[str, str]] = {
    "kill_app": "process_termination",
    "browser_navigate": "browser_navigation",
    "browser_download": "browser_download",
    "browser_set_input_files": "browser_file_input",
    "start_recording": "recording_start",
    "replay_trajectory": "recording_replay",
    "escalate_scope": "desktop_scope_escalation",
}
"""Actions the reference classifies as *high* risk, with their family."""

OBSERVATION_ACTIONS: Final = frozenset(
    {
        "list_apps",
        "list_windows",
        "get_accessibility_tree",
        "get_cursor_position",
        "get_window_state",
        "zoom",
        "get_browser_state",
        "get_recording_state",
    }
)
"""Ordinary actions of the ``observation`` family (every other ordinary one is ``input``)."""


@dataclass(frozen=True, slots=True)
class ComputerActRisk:
    """A classification: ``level`` ``ordinary`` or ``high``, and the action's ``family``."""

    level: str
    family: str


def _matches(shape: _Object, params: dict[str, Any]) -> bool:
    for key, value in params.items():
        if key in ("action", "executionId"):
            continue
        check = shape.required.get(key) or shape.optional.get(key)
        if check is None or not check(value):
            return False
    return all(key in params for key in shape.required)


def check_act_schema(params: Any) -> str:
    """The action of params the reference's v2 schema accepts.

    Raises:
        ComputerParamsError: ``COMPUTER_INVALID_REQUEST: invalid params`` (the reference's
            words), for anything that is none of the schema's objects.
    """
    if not isinstance(params, dict):
        raise invalid("invalid params")
    action = params.get("action")
    shapes = SCHEMA_ACTIONS.get(action) if isinstance(action, str) else None
    execution_id = params.get("executionId", "")
    if "executionId" in params and not (
        isinstance(execution_id, str) and EXECUTION_ID.fullmatch(execution_id)
    ):
        raise invalid("invalid params")
    if shapes is None or not any(_matches(shape, params) for shape in shapes):
        raise invalid("invalid params")
    assert isinstance(action, str)
    return action


def classify_act_risk(params: Any) -> ComputerActRisk:
    """The risk of one ``computer.act``, as the reference's gateway policy reads it.

    Raises:
        ComputerParamsError: The arguments could not be classified (see
            :func:`check_act_schema`); the gateway refuses such an invoke before dispatch.
    """
    if isinstance(params, dict) and params.get("action") == CLOSE_ACTION:
        return ComputerActRisk("ordinary", "execution_lifecycle")
    action = check_act_schema(params)
    family = HIGH_RISK_FAMILIES.get(action)
    if family is not None:
        return ComputerActRisk("high", family)
    if action == "browser_dialog" and params.get("dialogAction") == "inspect":
        return ComputerActRisk("ordinary", "observation")
    return ComputerActRisk("ordinary", "observation" if action in OBSERVATION_ACTIONS else "input")
