"""The voice controls under the composer: the mic button (dictation), Talk (a spoken
conversation, with Listening / Thinking / Speaking and Interrupt), a level meter and the
live transcript. Push-to-talk: hold Ctrl+Space in the chat."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from ui.presenters.voice import VoicePresenter

__all__ = ["DictationBar"]

#: The meter's range in dBFS (silence at the bottom, a shout at the top).
FLOOR_DBFS = -60.0


class DictationBar(QWidget):
    """Mic button, level and transcript of one chat's :class:`VoicePresenter`."""

    def __init__(self, voice: VoicePresenter, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.voice = voice
        self.mic_button = QPushButton("Dictate", self)
        self.mic_button.setObjectName("dictate")
        self.mic_button.setCheckable(True)
        self.mic_button.setToolTip(
            "Speak instead of typing: click to start and again to send "
            "(or hold Ctrl+Space while you speak)"
        )
        self.mic_button.clicked.connect(lambda _checked: voice.toggle())
        self.talk_button = QPushButton("Talk", self)
        self.talk_button.setObjectName("talk")
        self.talk_button.setCheckable(True)
        self.talk_button.setToolTip(
            "A spoken conversation: OpenClaw listens, answers aloud, and listens again"
        )
        self.talk_button.clicked.connect(lambda _checked: voice.toggle_talk())
        self.interrupt_button = QPushButton("Interrupt", self)
        self.interrupt_button.setObjectName("interrupt")
        self.interrupt_button.setToolTip("Stop the spoken reply and listen again")
        self.interrupt_button.clicked.connect(voice.interrupt)
        self.interrupt_button.setVisible(False)
        self.phase = QLabel(self)
        self.phase.setObjectName("phase")
        self.meter = QProgressBar(self)
        self.meter.setObjectName("level")
        self.meter.setRange(0, 100)
        self.meter.setTextVisible(False)
        self.meter.setMaximumWidth(80)
        self.meter.setMaximumHeight(10)
        self.meter.setVisible(False)
        self.transcript = QLabel(self)
        self.transcript.setObjectName("transcript")
        self.transcript.setTextFormat(Qt.TextFormat.PlainText)  # what was heard is never HTML
        self.transcript.setWordWrap(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.mic_button)
        layout.addWidget(self.talk_button)
        layout.addWidget(self.interrupt_button)
        layout.addWidget(self.phase)
        layout.addWidget(self.meter)
        layout.addWidget(self.transcript, 1)
        voice.state.connect(self._state)
        voice.partial.connect(lambda text: self.transcript.setText(f"“{text}”" if text else ""))
        voice.level.connect(self._level)
        voice.failed.connect(self.transcript.setText)
        voice.talk_phase.connect(self._talk_phase)
        voice.microphone_problem.connect(self._microphone)
        self._tips = {b: b.toolTip() for b in (self.mic_button, self.talk_button)}
        self.mic_button.setAccessibleName("Dictate")
        self.talk_button.setAccessibleName("Talk")
        self.interrupt_button.setAccessibleName("Interrupt")
        self.meter.setAccessibleName("Microphone level")
        self.phase.setAccessibleName("Talk phase")
        self.transcript.setAccessibleName("Dictation")
        for button in self._tips:
            button.setAccessibleDescription(self._tips[button])
        if voice.problem is not None:
            self._microphone(voice.problem)
        with contextlib.suppress(RuntimeError):  # no running loop: nothing to watch with
            voice.watch_microphone()

    def _microphone(self, problem: str) -> None:
        """No microphone: Dictate and Talk are disabled, and say why (tooltip, and the
        accessible description screen readers read)."""
        for button, tip in self._tips.items():
            button.setEnabled(not problem)
            text = f"Unavailable: {problem}" if problem else tip
            button.setToolTip(text)
            button.setAccessibleDescription(text)

    def _state(self, state: str) -> None:
        listening = state == "listening"
        self.mic_button.setChecked(state != "idle")
        self.mic_button.setText(
            {"listening": "Stop and send", "finishing": "Sending…"}.get(state, "Dictate")
        )
        self.meter.setVisible(listening)
        if listening:
            self.transcript.setText("Listening…")

    def _talk_phase(self, phase: str) -> None:
        active = phase != "stopped"
        self.talk_button.setChecked(active)
        self.talk_button.setText("End talk" if active else "Talk")
        self.mic_button.setEnabled(not active and not self.voice.problem)
        self.interrupt_button.setVisible(phase == "speaking")
        self.phase.setText(
            {"listening": "Listening…", "thinking": "Thinking…", "speaking": "Speaking…"}.get(
                phase, ""
            )
        )

    def _level(self, dbfs: float) -> None:
        share = (max(dbfs, FLOOR_DBFS) - FLOOR_DBFS) / -FLOOR_DBFS
        self.meter.setValue(round(100 * min(share, 1.0)))
