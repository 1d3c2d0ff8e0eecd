"""The ``computer.act`` params model of the wire protocol: the reference's v2 schema (what a
gateway classifies before dispatch) and the node's stricter reading.

The accept/refuse verdicts below were taken from the reference's own schema checker (npm
``openclaw`` 2026.9.6, ``parseComputerActParamsJSON`` run on each case);
``tests/interop/test_computer_act_real_gateway.py`` sends some of them through both gateways.
"""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.protocol.computer_use import ComputerParamsError, parse_act_params
from openclaw_desktop.protocol.computer_use_schema import (
    ComputerActRisk,
    check_act_schema,
    classify_act_risk,
)

EXEC = "0b0c5a8e-3f0e-4c4c-9d7e-1a2b3c4d5e6f"
HANDLE = f"openclaw:computer-resource:v1:{EXEC}"
PAGE = {"browserRef": "b", "pageRef": "p"}
MENU = {"action": "invoke_menu", "windowRef": "w"}

ACCEPTED: list[dict[str, Any]] = [
    {"action": "left_click"},  # executionId is optional in the schema
    {"action": "left_click", "executionId": EXEC, "x": 1, "y": 1},
    {"action": "scroll", "executionId": EXEC, "scrollDirection": "up", "scrollAmount": 500},
    {"action": "scroll", "executionId": EXEC, "scrollDirection": "up", "scrollAmount": 2.0},
    {"action": "type", "executionId": EXEC},
    {"action": "type", "executionId": EXEC, "text": ""},
    {"action": "key", "executionId": EXEC, "keys": "hyper+q"},
    {"action": "hold_key", "executionId": EXEC, "keys": "a", "durationMs": 60000},
    {"action": "left_click_drag", "executionId": EXEC, "fromX": 1, "fromY": 2, "durationMs": 5},
    {"action": "left_mouse_down", "executionId": EXEC, "modifiers": "ctrl"},
    {"action": "list_windows", "executionId": EXEC},
    {"action": "list_apps"},
    {"action": "kill_app", "app": "x"},
    {"action": "get_window_state", "windowRef": "w", "depth": 64, "includeScreenshot": True},
    {**MENU, "path": ["File", "Open"]},
    {**MENU, "path": ["😀" * 200]},  # counted as characters, not UTF-16 units
    {**MENU, "path": ["e\u0301" * 200]},  # a combining mark belongs to its letter
    {**MENU, "path": ["🇩🇪" * 200]},  # regional indicators pair up
    {"action": "get_browser_state", "windowRef": "w"},
    {"action": "get_browser_state", **PAGE},
    {"action": "browser_dialog", **PAGE, "dialogAction": "inspect"},
    {"action": "browser_dialog", **PAGE, "dialogAction": "accept", "dialogRef": "d"},
    {"action": "browser_prepare", "windowRef": "w", "profileName": "ok.1-_"},
    {"action": "replay_trajectory", "resourceHandle": HANDLE},
    {
        "action": "browser_pointer",
        **PAGE,
        "observationId": "o",
        "pointerAction": "drag",
        "deltaX": -5,
    },
    {"action": "escalate_scope", "reason": "other"},
    {"action": "zoom", "windowRef": "w", "observationId": "o", "x1": 0, "y1": 0, "x2": 1, "y2": 1},
    {"action": "set_value", "windowRef": "w", "elementRef": "e", "observationId": "o", "value": ""},
]

REFUSED: list[Any] = [
    None,
    [1, 2],
    "text",
    5,
    {},
    {"action": 1},
    {"action": "left_click", "executionId": "nope", "x": 1, "y": 1},
    {"action": "left_click", "executionId": EXEC + "\n"},
    {"action": "left_click", "executionId": EXEC.upper()},
    {"action": "teleport", "executionId": EXEC},
    {"action": "screenshot"},  # a v2 action name, but no computer.act object
    {"action": "wait"},
    {"action": "left_click", "executionId": EXEC, "x": "ten", "y": 1},
    {"action": "left_click", "executionId": EXEC, "x": 1, "y": 1, "extra": True},
    {"action": "left_click", "executionId": EXEC, "x": -1, "y": 1},
    {"action": "left_click", "executionId": EXEC, "x": True},
    {"action": "left_click", "executionId": EXEC, "x": None},  # null is no value here
    {"action": "left_click", "executionId": EXEC, "modifiers": None},
    {"action": "left_click", "executionId": EXEC, "refWidth": 0},
    {"action": "left_click", "executionId": EXEC, "screenIndex": 1.5},
    {"action": "left_click", "executionId": EXEC, "deliveryMode": "later"},
    {"action": "left_click", "executionId": EXEC, "windowRef": ""},
    {"action": "left_click_drag", "executionId": EXEC, "modifiers": "ctrl"},
    {"action": "scroll", "executionId": EXEC, "scrollDirection": "diagonal"},
    {"action": "scroll", "executionId": EXEC, "scrollDirection": "up", "scrollAmount": 0},
    {"action": "scroll", "executionId": EXEC, "scrollDirection": "up", "scrollAmount": 2.5},
    {"action": "type", "executionId": EXEC, "text": 5},
    {"action": "type", "executionId": EXEC, "text": "a", "x": 1},
    {"action": "hold_key", "executionId": EXEC, "keys": "a", "durationMs": -1},
    {"action": "list_windows", "executionId": EXEC, "windowRef": "w"},
    {"action": "kill_app"},
    {"action": "kill_app", "app": ""},
    {"action": "get_window_state"},
    {"action": "get_window_state", "windowRef": "w", "depth": 65},
    {**MENU, "path": []},
    {**MENU, "path": ["x" * 201]},
    {**MENU, "path": ["😀" * 201]},
    {**MENU, "path": ["👍🏽" * 200]},  # a skin tone counts on its own
    {"action": "get_browser_state", "windowRef": "w", "pageRef": "p"},
    {"action": "browser_dialog", **PAGE, "dialogAction": "accept"},
    {"action": "browser_dialog", **PAGE, "dialogAction": "inspect", "dialogRef": "d"},
    {"action": "browser_prepare", "windowRef": "w", "profileName": "a b"},
    {"action": "replay_trajectory", "resourceHandle": HANDLE, "delayMs": 10001},
    {
        "action": "browser_set_input_files",
        **PAGE,
        "observationId": "o",
        "elementRef": "e",
        "resourceHandles": ["bad"],
    },
    {"action": "escalate_scope", "reason": "whim"},
    {"action": "start_recording", "recordVideo": 1},
    {"action": "__close_execution"},  # not a schema object (the classifier lets it by)
]


@pytest.mark.parametrize("params", ACCEPTED)
def test_the_reference_schema_accepts(params: dict[str, Any]) -> None:
    assert check_act_schema(params) == params["action"]


@pytest.mark.parametrize("params", REFUSED)
def test_the_reference_schema_refuses_with_its_words(params: Any) -> None:
    with pytest.raises(ComputerParamsError) as caught:
        check_act_schema(params)
    assert (caught.value.code, caught.value.message) == (
        "COMPUTER_INVALID_REQUEST",
        "invalid params",
    )
    assert str(caught.value) == "COMPUTER_INVALID_REQUEST: invalid params"


@pytest.mark.parametrize(
    ("params", "risk"),
    [
        ({"action": "__close_execution"}, ComputerActRisk("ordinary", "execution_lifecycle")),
        (
            {"action": "__close_execution", "anything": [1]},
            ComputerActRisk("ordinary", "execution_lifecycle"),
        ),
        ({"action": "left_click"}, ComputerActRisk("ordinary", "input")),
        ({"action": "type", "text": "x"}, ComputerActRisk("ordinary", "input")),
        ({"action": "list_windows"}, ComputerActRisk("ordinary", "observation")),
        ({"action": "get_recording_state"}, ComputerActRisk("ordinary", "observation")),
        (
            {"action": "browser_dialog", **PAGE, "dialogAction": "inspect"},
            ComputerActRisk("ordinary", "observation"),
        ),
        (
            {"action": "browser_dialog", **PAGE, "dialogAction": "dismiss", "dialogRef": "d"},
            ComputerActRisk("ordinary", "input"),
        ),
        ({"action": "kill_app", "app": "x"}, ComputerActRisk("high", "process_termination")),
        (
            {"action": "browser_navigate", **PAGE, "url": "https://example.test"},
            ComputerActRisk("high", "browser_navigation"),
        ),
        ({"action": "start_recording"}, ComputerActRisk("high", "recording_start")),
        (
            {"action": "escalate_scope", "reason": "other"},
            ComputerActRisk("high", "desktop_scope_escalation"),
        ),
    ],
)
def test_risk_families(params: dict[str, Any], risk: ComputerActRisk) -> None:
    assert classify_act_risk(params) == risk


def test_unclassifiable_arguments_raise() -> None:
    unclassifiable: list[Any] = [
        None,
        [],
        {"action": "teleport"},
        {"action": "left_click", "x": None},
    ]
    for params in unclassifiable:
        with pytest.raises(ComputerParamsError):
            classify_act_risk(params)


def test_the_node_reading_is_the_protocol_error_with_its_texts() -> None:
    """The node's parser lives here too: its refusals are ComputerParamsError with the
    node's codes and words (the node turns them into its DeviceError)."""
    with pytest.raises(ComputerParamsError) as caught:
        parse_act_params({"action": "left_click", "executionId": EXEC + "\n"})
    assert (caught.value.code, caught.value.message) == (
        "COMPUTER_INVALID_REQUEST",
        "executionId is required",
    )
    with pytest.raises(ComputerParamsError) as unsupported:
        parse_act_params({"action": "list_windows", "executionId": EXEC})
    assert unsupported.value.code == "COMPUTER_UNSUPPORTED_ACTION"
    parsed = parse_act_params({"action": "left_click", "executionId": EXEC, "modifiers": None})
    assert parsed.fields == {}  # the node reads null as absent
