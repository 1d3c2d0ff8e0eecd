"""Dictation in the window: hold Ctrl+Space, speak into a real ALSA capture device, release;
the transcript (from our gateway's recognizer, here an OpenAI-compatible server over real
HTTP) is sent to the chat and answered. The mic button does the same by clicks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.helpers.alsa_mic import AlsaTestMic
from tests.helpers.bundled_gateway import BundledGateway
from tests.helpers.chat_trace import write_fake_providers
from tests.helpers.fake_audio_api import FakeAudioAPI, Upload
from tests.helpers.fake_llm import FakeLLM
from tests.helpers.qt import run_in_qt, screenshot_folder, shot, window_home  # noqa: F401 (autouse)
from tests.helpers.speech import espeak_pcm16
from tests.integration.gateway.talk.test_gw_talk_sessions import write_talk_json
from tests.ui.test_chat_window import assistant, until
from tests.ui.test_chat_window_more import new_app

pytestmark = pytest.mark.timeout(120)


def test_push_to_talk_sends_the_transcript(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Ctrl+Space held while speaking: listening, level and live text; released: the
    transcript is sent and answered. A second dictation by the mic button."""
    screens = screenshot_folder(tmp_path_factory, "dictation")
    spoken = np.frombuffer(espeak_pcm16("what is the weather", 24_000), dtype="<i2")

    def answer(upload: Upload) -> str:
        return f"dictated {len(api.uploads)}"

    with FakeAudioAPI(transcript=answer) as api, FakeLLM() as llm:
        state = tmp_path / "gw" / "state"
        write_fake_providers(state, llm.port)
        write_talk_json(state, {"transcription": {"provider": "openai", "baseUrl": api.base_url}})
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            with AlsaTestMic(tmp_path, sample_rate=24_000) as mic:
                app = new_app(gw)
                app.window.show()

                async def scenario() -> None:
                    await app.start()
                    chat = app.window.chat
                    assert chat is not None and chat.dictation is not None
                    bar = chat.dictation
                    chat.composer.setFocus()
                    ctrl = Qt.KeyboardModifier.ControlModifier
                    QTest.keyPress(chat.composer, Qt.Key.Key_Space, ctrl)
                    await until(lambda: bar.voice.listening, "listening")
                    assert bar.mic_button.text() == "Stop and send" and bar.meter.isVisible()
                    await asyncio.sleep(0.3)
                    mic.play(spoken)
                    await until(lambda: bar.meter.value() > 30, "the level meter moving")
                    shot(app.window, screens / "01-listening.png")
                    await asyncio.sleep(len(spoken) / 24_000 + 0.3)
                    QTest.keyRelease(chat.composer, Qt.Key.Key_Space, ctrl)
                    await until(lambda: not bar.voice.listening, "the dictation ended", 30)
                    assert chat.composer.toPlainText() == "", "no space typed by the hotkey"
                    await until(lambda: assistant(app, "done"), "the reply to the dictation")
                    presenter = app.presenter
                    assert presenter is not None
                    users = [i.text for i in presenter.timeline.items if i.role == "user"]
                    assert users == ["dictated 1"]
                    assert api.uploads and api.uploads[0].samples > 16_000  # > 1 s of audio
                    shot(app.window, screens / "02-dictated.png")

                    bar.mic_button.click()
                    await until(lambda: bar.voice.listening, "listening again")
                    mic.play(spoken)
                    await asyncio.sleep(len(spoken) / 24_000 + 0.5)
                    bar.mic_button.click()
                    await until(lambda: len(assistant(app, "done")) == 2, "the second reply", 30)
                    users = [i.text for i in presenter.timeline.items if i.role == "user"]
                    assert users == ["dictated 1", "dictated 2"]
                    assert bar.mic_button.text() == "Dictate"
                    await app.aclose()

                run_in_qt(qapp, scenario)
        finally:
            gw.cleanup()


def test_talk_mode_in_the_window(
    qapp: QApplication, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Talk: Listening -> (speech) -> Thinking -> Speaking (Interrupt shown, the reply is
    played) -> Listening; the exchange is in the chat; End talk stops."""
    screens = screenshot_folder(tmp_path_factory, "dictation")
    spoken = np.frombuffer(espeak_pcm16("tell me a joke", 24_000), dtype="<i2")
    speaker = tmp_path / "speaker.raw"
    speaker.touch()
    phases: list[str] = []

    with FakeAudioAPI(transcript="tell me a joke") as api, FakeLLM() as llm:
        state = tmp_path / "gw" / "state"
        write_fake_providers(state, llm.port)
        write_talk_json(
            state,
            {
                "transcription": {"provider": "openai", "baseUrl": api.base_url},
                "silenceDurationMs": 600,
            },
        )
        gw = BundledGateway.start(root=tmp_path / "gw")
        try:
            with AlsaTestMic(tmp_path, sample_rate=24_000, speaker_file=speaker) as mic:
                app = new_app(gw)
                app.window.show()

                async def scenario() -> None:
                    await app.start()
                    chat, presenter = app.window.chat, app.presenter
                    assert chat is not None and chat.dictation is not None
                    assert presenter is not None
                    bar = chat.dictation
                    bar.voice.talk_phase.connect(phases.append)
                    bar.talk_button.click()
                    await until(lambda: bar.phase.text() == "Listening…", "listening")
                    assert bar.talk_button.text() == "End talk"
                    assert not bar.mic_button.isEnabled()
                    mic.play(spoken)
                    await until(lambda: "speaking" in phases, "speaking", 60)
                    assert bar.interrupt_button.isVisible() or "listening" in phases[2:]
                    shot(app.window, screens / "03-talk-mode.png")
                    await until(lambda: phases[-1] == "listening" and len(phases) >= 4, "again", 60)
                    assert phases[:4] == ["listening", "thinking", "speaking", "listening"]
                    users = [i.text for i in presenter.timeline.items if i.role == "user"]
                    assert users == ["tell me a joke"]
                    await until(lambda: assistant(app, "done"), "the reply in the chat")
                    assert speaker.stat().st_size > 24_000, "the reply was played"
                    bar.talk_button.click()
                    await until(lambda: bar.talk_button.text() == "Talk", "stopped", 20)
                    assert bar.mic_button.isEnabled() and bar.phase.text() == ""
                    await app.aclose()

                run_in_qt(qapp, scenario)
        finally:
            gw.cleanup()
