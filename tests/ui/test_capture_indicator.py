"""The capture indicator shows what the agent is using, from any thread, and stops it."""

from __future__ import annotations

import threading

from pytestqt.qtbot import QtBot

from ui.widgets.capture import CaptureIndicator


def test_indicator_follows_captures_and_stops_them(qtbot: QtBot) -> None:
    """Reports from a worker thread reach the widget; Stop cancels by command prefix."""
    stopped: list[str] = []

    def stop(prefix: str) -> int:
        stopped.append(prefix)
        return 1

    indicator = CaptureIndicator(stop)
    qtbot.addWidget(indicator)
    worker = threading.Thread(target=indicator.report, args=("camera", "camera.clip", True))
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: "camera (camera.clip)" in indicator.label.text(), timeout=2000)
    assert not indicator.isHidden()
    indicator.report("microphone", "talk.ptt.start", True)
    qtbot.waitUntil(lambda: "microphone" in indicator.label.text(), timeout=2000)
    indicator.stop_button.click()
    assert sorted(stopped) == ["camera.", "talk.ptt"]
    indicator.report("camera", "camera.clip", False)
    indicator.report("microphone", "talk.ptt.start", False)
    qtbot.waitUntil(indicator.isHidden, timeout=2000)
