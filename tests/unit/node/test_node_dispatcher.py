"""Unit tests for InvokeDispatcher: lookup, gates and handler failures."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from openclaw_desktop.devices import DeviceError
from openclaw_desktop.node import (
    Availability,
    CommandRegistry,
    CommandSpec,
    InvokeDispatcher,
    InvokeResult,
)


class Recorder:
    """A handler that records its params and answers with them."""

    def __init__(self) -> None:
        self.calls: list[Any] = []

    async def __call__(self, params: Any) -> InvokeResult:
        self.calls.append(params)
        return InvokeResult.success({"echo": params})


async def explode(params: Any) -> InvokeResult:
    """A handler with a bug."""
    raise RuntimeError("secret path /home/user/.ssh/id_ed25519 leaked")


async def cancelled(params: Any) -> InvokeResult:
    """A handler whose task is being cancelled."""
    raise asyncio.CancelledError


async def device_error(params: Any) -> InvokeResult:
    """A handler whose device failed in a way the agent should hear about."""
    raise DeviceError("PAYLOAD_TOO_LARGE", "clip is 19 MiB. Reduce durationMs")


def make(
    settings: dict[str, bool] | None = None, *, camera: bool = False, away: bool = False
) -> tuple[InvokeDispatcher, Recorder, dict[str, bool]]:
    """A dispatcher over a small registry, with live settings."""
    live = settings if settings is not None else {}
    recorder = Recorder()

    async def present() -> bool:
        return not away

    async def camera_probe() -> Availability:
        return Availability.yes() if camera else Availability.no("no camera found")

    reg = CommandRegistry(
        [
            CommandSpec("device.info", "device"),
            CommandSpec("system.notify", "system", setting="notifications"),
            CommandSpec("camera.snap", "camera", availability=camera_probe),
            CommandSpec(
                "camera.clip",
                "camera",
                setting="camera",
                disabled_code="CAMERA_DISABLED",
                disabled_message="enable Camera in Settings",
            ),
            CommandSpec("screen.snapshot", "screen", needs_presence=True),
            CommandSpec("probe.explode", "probe"),
            CommandSpec("probe.device_error", "probe"),
            CommandSpec("probe.cancelled", "probe"),
        ]
    )
    handlers = {
        "device.info": recorder,
        "system.notify": recorder,
        "camera.snap": recorder,
        "camera.clip": recorder,
        "screen.snapshot": recorder,
        "probe.explode": explode,
        "probe.device_error": device_error,
        "probe.cancelled": cancelled,
    }
    return InvokeDispatcher(reg, handlers, lambda: live, presence=present), recorder, live


def test_every_spec_needs_a_handler() -> None:
    """Building a dispatcher with unhandled commands fails and names them."""
    reg = CommandRegistry([CommandSpec("a.b", "a"), CommandSpec("c.d", "c")])
    with pytest.raises(ValueError, match=r"commands without a handler: a\.b, c\.d"):
        InvokeDispatcher(reg, {}, dict)


async def test_known_command_reaches_its_handler() -> None:
    """An enabled, available command runs its handler with the params as given."""
    dispatcher, recorder, _ = make()
    result = await dispatcher.dispatch("device.info", {"x": 1})
    assert result == InvokeResult.success({"echo": {"x": 1}})
    assert recorder.calls == [{"x": 1}]


async def test_unknown_command_is_invalid_request() -> None:
    """A command not in the registry is INVALID_REQUEST: unknown command."""
    dispatcher, recorder, _ = make()
    result = await dispatcher.dispatch("system.run", {})
    assert result.ok is False
    assert result.error_code == "INVALID_REQUEST"
    assert result.error_message == "INVALID_REQUEST: unknown command"
    assert recorder.calls == []


async def test_disabled_command_is_not_authorized() -> None:
    """A command turned off in settings is refused with NOT_AUTHORIZED."""
    dispatcher, recorder, _ = make()
    result = await dispatcher.dispatch("system.notify", {"title": "t", "body": "b"})
    assert result.error_code == "NOT_AUTHORIZED"
    assert result.error_message == (
        "NOT_AUTHORIZED: system.notify is disabled in this node's settings"
    )
    assert recorder.calls == []


async def test_settings_are_read_at_invoke_time() -> None:
    """Turning a setting on takes effect for the next invoke, without rebuilding anything."""
    dispatcher, recorder, live = make()
    assert (await dispatcher.dispatch("system.notify", 1)).ok is False
    live["notifications"] = True
    assert (await dispatcher.dispatch("system.notify", 2)).ok is True
    live["notifications"] = False
    assert (await dispatcher.dispatch("system.notify", 3)).ok is False
    assert recorder.calls == [2]


async def test_unavailable_command_reports_the_reason() -> None:
    """A command this machine cannot run is UNAVAILABLE with the availability reason."""
    dispatcher, recorder, _ = make(camera=False)
    result = await dispatcher.dispatch("camera.snap", {})
    assert result.error_code == "UNAVAILABLE"
    assert result.error_message == "UNAVAILABLE: no camera found"
    assert recorder.calls == []
    available, _, _ = make(camera=True)
    assert (await available.dispatch("camera.snap", {})).ok is True


async def test_handler_exception_becomes_unavailable_without_details(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A crashing handler gives UNAVAILABLE; the exception text stays in the local log only."""
    dispatcher, _, _ = make()
    with caplog.at_level(logging.ERROR, logger="openclaw.node"):
        result = await dispatcher.dispatch("probe.explode", {})
    assert result.error_code == "UNAVAILABLE"
    assert result.error_message == "UNAVAILABLE: probe.explode failed on this node"
    wire = str(result.to_wire("i", "n"))
    for leak in ("Traceback", "RuntimeError", "secret", ".ssh", "raise"):
        assert leak not in wire
    (record,) = caplog.records
    assert record.exc_info is not None
    assert "probe.explode" in record.getMessage()


async def test_cancellation_is_not_swallowed() -> None:
    """CancelledError from a handler propagates; it is not turned into a result."""
    dispatcher, _, _ = make()
    with pytest.raises(asyncio.CancelledError):
        await dispatcher.dispatch("probe.cancelled", {})


async def test_disabled_command_uses_its_specs_code() -> None:
    """A spec can name its own disabled code (the camera's CAMERA_DISABLED)."""
    dispatcher, recorder, live = make()
    result = await dispatcher.dispatch("camera.clip", {})
    assert result.error_message == "CAMERA_DISABLED: enable Camera in Settings"
    live["camera"] = True
    assert (await dispatcher.dispatch("camera.clip", {})).ok is True
    assert recorder.calls == [{}]


async def test_presence_gate() -> None:
    """A command that needs the user is refused while the session is locked, and only it."""
    away, recorder, _ = make(away=True)
    result = await away.dispatch("screen.snapshot", {})
    assert result.error_code == "NODE_BACKGROUND_UNAVAILABLE"
    assert (await away.dispatch("device.info", {})).ok is True
    here, _, _ = make()
    assert (await here.dispatch("screen.snapshot", {})).ok is True
    assert recorder.calls == [{}]


async def test_device_error_becomes_its_typed_result() -> None:
    """DeviceError from a handler reaches the wire as its own code and message."""
    dispatcher, _, _ = make()
    result = await dispatcher.dispatch("probe.device_error", {})
    assert result.error_code == "PAYLOAD_TOO_LARGE"
    assert result.error_message == "PAYLOAD_TOO_LARGE: clip is 19 MiB. Reduce durationMs"
