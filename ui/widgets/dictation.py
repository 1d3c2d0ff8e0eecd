"""The dictation controls under the composer: the mic button, a level meter and the live
transcript. Push-to-talk: hold Ctrl+Space in the chat."""

from __future__ import annotations

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
        self.meter = QProgressBar(self)
        self.meter.setObjectName("level")
        self.meter.setRange(0, 100)
        self.meter.setTextVisible(False)
        self.meter.setMaximumWidth(80)
        self.meter.setMaximumHeight(10)
        self.meter.setVisible(False)
        self.transcript = QLabel(self)
        self.transcript.setObjectName("transcript")
        self.transcript.setWordWrap(True)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.mic_button)
        layout.addWidget(self.meter)
        layout.addWidget(self.transcript, 1)
        voice.state.connect(self._state)
        voice.partial.connect(lambda text: self.transcript.setText(f"“{text}”" if text else ""))
        voice.level.connect(self._level)
        voice.failed.connect(self.transcript.setText)

    def _state(self, state: str) -> None:
        listening = state == "listening"
        self.mic_button.setChecked(state != "idle")
        self.mic_button.setText(
            {"listening": "Stop and send", "finishing": "Sending…"}.get(state, "Dictate")
        )
        self.meter.setVisible(listening)
        if listening:
            self.transcript.setText("Listening…")

    def _level(self, dbfs: float) -> None:
        share = (max(dbfs, FLOOR_DBFS) - FLOOR_DBFS) / -FLOOR_DBFS
        self.meter.setValue(round(100 * min(share, 1.0)))
