"""While screen.record runs (a real recording of an Xvfb screen, with the test microphone
through real PortAudio), the capture indicator names the screen and the microphone; its
Stop cancels the recording, which frees both at once and hides the indicator."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication

from openclaw_desktop.config import NodeSettings
from openclaw_desktop.devices import audio
from openclaw_desktop.devices.screen_record import AUDIO_RATE
from openclaw_desktop.node.context import NodeContext
from openclaw_desktop.node.dispatcher import InvokeDispatcher
from openclaw_desktop.node.handlers.screen_record import screen_record_area
from openclaw_desktop.node.registry import CommandRegistry
from openclaw_desktop.node.results import InvokeResult
from tests.helpers.alsa_mic import PCM_NAME, AlsaTestMic
from tests.helpers.desktop_session import (
    XPainter,
    XServer,
    xvfb_fixture,  # noqa: F401 - provides the x_server fixture
)
from tests.helpers.qt import run_in_qt, screenshot_folder, shot
from tests.ui.test_chat_window import until
from ui.widgets.capture import CaptureIndicator

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def mic(tmp_path: Path) -> Iterator[AlsaTestMic]:
    with AlsaTestMic(tmp_path, sample_rate=AUDIO_RATE, idle="tone") as test_mic:
        yield test_mic


@pytest.mark.usefixtures("mic")
def test_stop_in_the_indicator_ends_a_recording(
    qapp: QApplication, x_server: XServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Indicator text while recording, Stop cancels by the screen prefix, everything freed."""
    folder = screenshot_folder(tmp_path_factory, "screen-record")
    settings = NodeSettings(screen=True, microphone=True, microphone_device=PCM_NAME)
    ctx = NodeContext(settings=lambda: settings)
    area = screen_record_area(ctx)
    dispatcher = InvokeDispatcher(
        CommandRegistry(area.specs), area.handlers, lambda: settings.toggles()
    )
    running: dict[str, asyncio.Task[InvokeResult]] = {}
    stopped: list[str] = []

    def stop(prefix: str) -> int:
        """What the window's Stop does: cancel the running invokes under ``prefix``."""
        stopped.append(prefix)
        hits = [task for name, task in running.items() if name.startswith(prefix)]
        for task in hits:
            task.cancel()
        return len(hits)

    indicator = CaptureIndicator(stop)
    indicator.resize(760, 40)
    ctx.activity.listeners.append(indicator.report)

    async def scenario() -> None:
        with XPainter(x_server.display) as paint:
            paint.fill_root((30, 144, 255))
            task = asyncio.ensure_future(
                dispatcher.dispatch("screen.record", {"durationMs": 20_000, "includeAudio": True})
            )
            running["screen.record"] = task
            await until(lambda: "microphone (screen.record)" in indicator.label.text(), "mic")
            assert not indicator.isHidden()
            assert indicator.label.text() == (
                "● In use by the agent: microphone (screen.record), screen (screen.record)"
            )
            shot(indicator, folder / "recording.png")
            indicator.stop_button.click()
            with pytest.raises(asyncio.CancelledError):
                await task
            await until(indicator.isHidden, "the indicator hidden", 5)
            assert "screen." in stopped
            await until(lambda: audio.streams_open() == 0, "the microphone closed", 5)

    run_in_qt(qapp, scenario)
