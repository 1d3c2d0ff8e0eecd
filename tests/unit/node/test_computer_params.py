"""``computer.act`` params, key chords and frames: the checks that need no X server."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from openclaw_desktop.devices.errors import DeviceError
from openclaw_desktop.devices.x11_keys import KeyError_, char_keysym, parse_chord, parse_modifiers
from openclaw_desktop.node.computer_control import ComputerControl, ScreenGeometry
from openclaw_desktop.node.handlers.computer_params import parse_act_params
from openclaw_desktop.node.handlers.screen import parse_v2_request

EXEC = str(uuid.uuid4())


def code_of(params: Any) -> tuple[str, str]:
    with pytest.raises(DeviceError) as caught:
        parse_act_params(params)
    return caught.value.code, caught.value.message


@pytest.mark.parametrize(
    ("params", "code", "text"),
    [
        (None, "COMPUTER_INVALID_REQUEST", "params must be an object"),
        ([1], "COMPUTER_INVALID_REQUEST", "params must be an object"),
        ({}, "COMPUTER_INVALID_REQUEST", "action must be a string"),
        ({"action": "left_click"}, "COMPUTER_INVALID_REQUEST", "executionId is required"),
        (
            {"action": "left_click", "executionId": "not-a-uuid"},
            "COMPUTER_INVALID_REQUEST",
            "executionId is required",
        ),
        ({"action": "fly", "executionId": EXEC}, "COMPUTER_INVALID_REQUEST", "unknown action"),
        ({"action": "wait", "executionId": EXEC}, "COMPUTER_INVALID_REQUEST", "unknown action"),
        (
            {"action": "left_click", "executionId": EXEC, "text": "a"},
            "COMPUTER_INVALID_REQUEST",
            "text is not a field of left_click",
        ),
        (
            {"action": "left_click", "executionId": EXEC, "x": -1, "y": 0},
            "COMPUTER_INVALID_REQUEST",
            "x must be >= 0",
        ),
        (
            {"action": "left_click", "executionId": EXEC, "x": "10", "y": 0},
            "COMPUTER_INVALID_REQUEST",
            "x must be a number",
        ),
        (
            {"action": "left_click", "executionId": EXEC, "x": True, "y": 0},
            "COMPUTER_INVALID_REQUEST",
            "x must be a number",
        ),
        (
            {"action": "left_click", "executionId": EXEC, "refWidth": 0},
            "COMPUTER_INVALID_REQUEST",
            "refWidth must be an integer >= 1",
        ),
        (
            {"action": "scroll", "executionId": EXEC},
            "COMPUTER_INVALID_REQUEST",
            "scrollDirection is required for scroll",
        ),
        (
            {"action": "scroll", "executionId": EXEC, "scrollDirection": "sideways"},
            "COMPUTER_INVALID_REQUEST",
            "scrollDirection must be up, down, left or right",
        ),
        (
            {"action": "scroll", "executionId": EXEC, "scrollDirection": "up", "scrollAmount": 0},
            "COMPUTER_INVALID_REQUEST",
            "scrollAmount must be an integer from 1 to 100",
        ),
        (
            {"action": "type", "executionId": EXEC},
            "COMPUTER_INVALID_REQUEST",
            "text is required for type",
        ),
        (
            {"action": "type", "executionId": EXEC, "text": ""},
            "COMPUTER_INVALID_REQUEST",
            "text is required for type",
        ),
        ({"action": "key", "executionId": EXEC}, "COMPUTER_INVALID_REQUEST", "keys is required"),
        (
            {"action": "hold_key", "executionId": EXEC, "keys": "a", "durationMs": 60_000},
            "COMPUTER_INVALID_REQUEST",
            "durationMs must be an integer from 0 to 10000",
        ),
        (
            {"action": "left_click", "executionId": EXEC, "deliveryMode": "later"},
            "COMPUTER_INVALID_REQUEST",
            "deliveryMode must be background or foreground",
        ),
        (
            {"action": "list_windows", "executionId": EXEC},
            "COMPUTER_UNSUPPORTED_ACTION",
            "list_windows is not supported by this node",
        ),
    ],
)
def test_malformed_params_are_typed(params: Any, code: str, text: str) -> None:
    """Each malformed request names its problem under the reference's code."""
    got_code, message = code_of(params)
    assert got_code == code and text in message, (got_code, message)


def test_valid_params_keep_their_fields() -> None:
    """Nulls count as absent; integral floats are integers; the rest is kept as sent."""
    parsed = parse_act_params(
        {
            "action": "scroll",
            "executionId": EXEC,
            "displayFrameId": "frame-1",
            "x": 10.5,
            "y": 0,
            "scrollDirection": "down",
            "scrollAmount": 3.0,
            "modifiers": None,
        }
    )
    assert parsed.action == "scroll" and parsed.execution_id == EXEC
    assert parsed.fields == {
        "displayFrameId": "frame-1",
        "x": 10.5,
        "y": 0.0,
        "scrollDirection": "down",
        "scrollAmount": 3,
    }
    close = parse_act_params({"action": "__close_execution", "executionId": EXEC, "reason": "x"})
    assert close.action == "__close_execution"


def test_chords_and_text_keysyms() -> None:
    """Modifier aliases, named keys, single characters and X keysym names; text keysyms
    in Latin-1 and the Unicode range; unknown keys are COMPUTER_UNSUPPORTED_KEY material."""
    ctrl, shift, alt, sup = 0xFFE3, 0xFFE1, 0xFFE9, 0xFFEB
    assert parse_chord("ctrl+shift+t").modifiers == (ctrl, shift)
    assert parse_chord("ctrl+shift+t").key == ord("t")
    assert parse_chord("cmd+C").modifiers == (sup,) and parse_chord("cmd+C").key == ord("c")
    assert parse_chord("Return").key == 0xFF0D == parse_chord("enter").key
    assert parse_chord("alt+F4").modifiers == (alt,) and parse_chord("alt+F4").key == 0xFFC1
    assert parse_chord("KP_Enter").key == 0xFF8D
    assert parse_chord("ctrl++").key == ord("+") and parse_chord("+").modifiers == ()
    assert parse_chord("7").key == ord("7")
    assert parse_modifiers("shift+ctrl") == (shift, ctrl) and parse_modifiers(None) == ()
    for bad in ("", "ctrl+", "hyper+a", "NoSuchKeyName"):
        with pytest.raises(KeyError_):
            parse_chord(bad)
    assert char_keysym("é") == 0xE9 and char_keysym("€") == 0x010020AC
    assert char_keysym("\n") == 0xFF0D and char_keysym("\t") == 0xFF09
    with pytest.raises(KeyError_):
        char_keysym("\x07")


def test_v2_snapshot_params_are_the_reference_set() -> None:
    """quality is a fraction; unknown fields (monitor, includePointer) are refused in the
    v2 form."""
    request = parse_v2_request(
        {"executionId": EXEC, "maxWidth": 1280, "quality": 0.85, "format": "jpeg"}
    )
    assert (request.max_width, request.quality, request.format) == (1280, 85, "jpeg")
    for bad in ({"monitor": 0}, {"quality": 85}, {"quality": "high"}, {"maxWidth": 5}):
        with pytest.raises(DeviceError) as caught:
            parse_v2_request({"executionId": EXEC, **bad})
        assert caught.value.code == "COMPUTER_INVALID_REQUEST"


GEO = ScreenGeometry(":9", 0, 100, 50, 1280, 800)


async def test_frames_map_and_go_stale() -> None:
    """A frame maps image pixels onto its screen's rectangle; another execution, a changed
    geometry or another reference width make it stale; ending the execution drops it."""
    control = ComputerControl()
    control.claim(EXEC)
    frame_id = control.issue_frame(EXEC, GEO, 640, 400, 640)

    def same(index: int) -> ScreenGeometry | None:
        return GEO

    frame = control.frame_for(frame_id, EXEC, 640, same)
    assert frame.to_screen(0, 0) == (100, 50)
    assert frame.to_screen(320, 200) == (100 + 640, 50 + 400)
    assert frame.to_screen(639.9, 399.9) == (100 + 1279, 50 + 799)
    with pytest.raises(DeviceError, match="outside the captured frame"):
        frame.to_screen(640, 0)
    stale_cases = [
        (frame_id, str(uuid.uuid4()), 640, same, "missing or no longer current"),
        (frame_id, EXEC, 1280 + 1, same, "reference width changed"),
        ("frame-guess", EXEC, 640, same, "missing or no longer current"),
    ]
    for fid, execution, width, current, text in stale_cases:
        with pytest.raises(DeviceError, match=text) as caught:
            control.frame_for(fid, execution, width, current)
        assert caught.value.code == "COMPUTER_STALE_FRAME"
        assert caught.value.message.endswith("; take a new screenshot")
    resized = ScreenGeometry(":9", 0, 100, 50, 1024, 768)
    with pytest.raises(DeviceError, match="display geometry changed"):
        control.frame_for(frame_id, EXEC, 640, lambda _i: resized)
    with pytest.raises(DeviceError, match="missing"):  # a stale frame stays stale
        control.frame_for(frame_id, EXEC, 640, same)
    second = control.issue_frame(EXEC, GEO, 640, 400, 1280)
    assert control.frame_for(second, EXEC, 1280, same).width == 640  # maxWidth echoed
    with pytest.raises(DeviceError, match="display geometry changed"):
        control.frame_for(second, EXEC, 640, lambda _i: None)  # the screen is gone


async def test_one_execution_owns_the_computer_and_stop_refuses() -> None:
    """Another execution is busy until the first closes; Stop ends it, runs the close hooks
    and refuses until resumed; live listeners hear start and end."""
    heard: list[bool] = []
    hooks: list[str] = []
    control = ComputerControl(live=heard.append)

    async def hook() -> None:
        hooks.append("released")

    control.close_hooks.append(hook)
    control.claim(EXEC)
    control.claim(EXEC)
    other = str(uuid.uuid4())
    with pytest.raises(DeviceError) as busy:
        control.claim(other)
    assert busy.value.code == "COMPUTER_HOST_BUSY"
    await control.close(other)  # not the live one: nothing happens
    assert control.execution_id == EXEC
    await control.close(EXEC)
    control.claim(other)
    await control.stop()
    assert heard == [True, False, True, False] and hooks == ["released", "released"]
    with pytest.raises(DeviceError) as stopped:
        control.claim(EXEC)
    assert stopped.value.code == "COMPUTER_DRIVER_UNAVAILABLE"
    control.resume()
    control.claim(EXEC)
    await control.close(None)
