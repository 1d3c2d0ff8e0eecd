"""Voice on the client: dictation into the chat and talk mode, over gateway talk sessions.

* :class:`~openclaw_desktop.voice.talk_session.TalkSession`: ``talk.session.*`` over the SDK.
* :class:`~openclaw_desktop.voice.dictation.Dictation`: microphone -> transcript.
* :func:`~openclaw_desktop.voice.microphone.open_microphone`: the configured input, or the
  default one when it is gone.
"""

from __future__ import annotations

from openclaw_desktop.voice.dictation import Dictation, DictationResult
from openclaw_desktop.voice.microphone import open_microphone
from openclaw_desktop.voice.talk_session import AudioContract, TalkSession

__all__ = ["AudioContract", "Dictation", "DictationResult", "TalkSession", "open_microphone"]
