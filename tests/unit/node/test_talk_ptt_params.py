"""Unit tests for talk.ptt.*: the specs, the settings gate and parameter validation.

Nothing here opens the microphone: bad parameters and unknown capture ids are refused
before any device is touched, and a disabled microphone is refused by the dispatcher
before the availability probe runs.
"""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_desktop.config.settings import NodeSettings
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.talk import talk_area
from openclaw_desktop.node.registry import CommandRegistry

COMMANDS = ("talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once")


async def _stt(pcm: bytes, rate: int) -> str:
    return "unused"


def _handlers(transcriber: Any = _stt) -> Any:
    ctx = NodeContext(settings=lambda: NodeSettings(microphone=True), transcriber=transcriber)
    return talk_area(ctx).handlers


def test_specs_are_the_talk_cap_gated_by_the_microphone_setting() -> None:
    """Four commands, cap talk, setting and permission microphone, NOT_AUTHORIZED text."""
    area = talk_area(NodeContext())
    assert tuple(spec.name for spec in area.specs) == COMMANDS
    assert set(area.handlers) == set(COMMANDS)
    for spec in area.specs:
        assert spec.capability == "talk"
        assert spec.setting == "microphone"
        assert spec.permission == "microphone"
        assert spec.disabled_code == "NOT_AUTHORIZED"
        assert spec.disabled_message == "enable Microphone in Settings"
        assert spec.needs_presence is False
    assert len({spec.availability for spec in area.specs}) == 1  # one shared probe


@pytest.mark.parametrize("command", COMMANDS)
async def test_microphone_off_by_default_gives_not_authorized(command: str) -> None:
    """With default settings every talk.ptt.* command is refused with the setting hint."""
    ctx = NodeContext()
    assert ctx.settings().microphone is False
    area = talk_area(ctx)
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: ctx.settings().toggles()
    )
    result = await dispatcher.dispatch(command, {"captureId": "abc"})
    assert result.ok is False
    assert result.error_code == "NOT_AUTHORIZED"
    assert result.error_message == "NOT_AUTHORIZED: enable Microphone in Settings"


@pytest.mark.parametrize(
    ("command", "params", "message"),
    [
        ("talk.ptt.start", [], "params must be an object"),
        ("talk.ptt.start", "x", "params must be an object"),
        ("talk.ptt.start", {"captureId": 5}, "captureId must be"),
        ("talk.ptt.start", {"captureId": ""}, "captureId must be"),
        ("talk.ptt.start", {"captureId": "a b"}, "captureId must be"),
        ("talk.ptt.start", {"captureId": "x" * 129}, "captureId must be"),
        ("talk.ptt.stop", {}, "captureId must be"),
        ("talk.ptt.stop", None, "captureId must be"),
        ("talk.ptt.stop", {"captureId": None}, "captureId must be"),
        ("talk.ptt.stop", {"captureId": ["a"]}, "captureId must be"),
        ("talk.ptt.stop", {"captureId": "nope"}, "unknown captureId nope"),
        ("talk.ptt.cancel", {"captureId": "nope"}, "unknown captureId nope"),
        ("talk.ptt.cancel", 7, "params must be an object"),
        ("talk.ptt.once", {"maxDurationMs": -1}, "maxDurationMs must be positive"),
        ("talk.ptt.once", {"maxDurationMs": 0}, "maxDurationMs must be positive"),
        ("talk.ptt.once", {"maxDurationMs": "5000"}, "maxDurationMs must be a number"),
        ("talk.ptt.once", {"maxDurationMs": True}, "maxDurationMs must be a number"),
        ("talk.ptt.once", {"maxDurationMs": float("nan")}, "maxDurationMs must be a number"),
        ("talk.ptt.once", {"silenceMs": -100}, "silenceMs must be positive"),
        ("talk.ptt.once", {"silenceMs": [1]}, "silenceMs must be a number"),
    ],
)
async def test_bad_params_are_invalid_request(command: str, params: Any, message: str) -> None:
    """Wrong types, negative durations, malformed or unknown capture ids: INVALID_REQUEST."""
    result = await _handlers()[command](params)
    assert result.ok is False
    assert result.error_code == "INVALID_REQUEST"
    assert message in (result.error_message or "")
    assert (result.error_message or "").startswith("INVALID_REQUEST: ")


async def test_once_without_speech_to_text_refuses_before_recording() -> None:
    """No transcriber: once does not record at all and says why."""
    result = await _handlers(transcriber=None)["talk.ptt.once"]({})
    assert result.ok is False
    assert result.error_code == "UNAVAILABLE"
    assert result.error_message == (
        "UNAVAILABLE: no speech-to-text on this node: run it from the desktop app, which "
        "transcribes through its gateway session; nothing was recorded"
    )
