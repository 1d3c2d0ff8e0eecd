"""The capture indicator shows what the agent is using, from any thread, and stops it."""

from __future__ import annotations

import threading

from pytestqt.qtbot import QtBot

from ui.widgets.capture import PREFIXES, CaptureIndicator


def test_stop_prefixes_come_from_the_capability_table() -> None:
    """Each capture kind is stopped by its capability's command namespace."""
    assert {kind: PREFIXES[kind] for kind in ("camera", "microphone", "screen", "computer")} == {
        "camera": "camera.",
        "microphone": "talk.ptt.",
        "screen": "screen.",
        "computer": "computer.",
    }


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
    assert sorted(stopped) == ["camera.", "talk.ptt."]
    indicator.report("camera", "camera.clip", False)
    indicator.report("microphone", "talk.ptt.start", False)
    qtbot.waitUntil(indicator.isHidden, timeout=2000)


def test_computer_control_is_shown_while_an_execution_is_live(qtbot: QtBot) -> None:
    """A live computer.act execution (the node's own ComputerControl, reported through the
    capture activity) says the agent is controlling this computer, beside other captures;
    Stop asks the node to stop computer control; the execution's end hides it."""
    import asyncio
    import uuid

    from openclaw_desktop.node import NodeContext
    from openclaw_desktop.node.handlers.computer import computer_area
    from ui.widgets.capture import CONTROL_TEXT

    stopped: list[str] = []

    def stop(prefix: str) -> int:
        stopped.append(prefix)
        return 1

    indicator = CaptureIndicator(stop)
    qtbot.addWidget(indicator)
    ctx = NodeContext()
    computer_area(ctx)
    ctx.activity.listeners.append(indicator.report)
    ctx.computer.claim(str(uuid.uuid4()))
    qtbot.waitUntil(lambda: CONTROL_TEXT in indicator.label.text(), timeout=2000)
    assert "computer (" not in indicator.label.text()
    indicator.report("screen", "screen.snapshot", True)
    qtbot.waitUntil(lambda: "(also using: screen)" in indicator.label.text(), timeout=2000)
    assert indicator.label.text() == f"{CONTROL_TEXT} (also using: screen)"
    indicator.stop_button.click()
    assert sorted(stopped) == ["computer.", "screen."]
    indicator.report("screen", "screen.snapshot", False)
    asyncio.run(ctx.computer.stop())
    qtbot.waitUntil(indicator.isHidden, timeout=2000)
    assert ctx.computer.stopped and ctx.computer.execution_id is None
