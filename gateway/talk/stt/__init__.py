"""Speech-to-text providers: pocketsphinx (offline default, :mod:`.pocketsphinx`) and
OpenAI-compatible servers (:mod:`.openai`).

Only the interface is imported here: a provider's module (and its HTTP client or model) loads
when :mod:`gateway.talk.setup` builds that provider, not at gateway start.
"""

from __future__ import annotations

from gateway.talk.stt.base import RecognizerStream, SpeechRecognizer, TranscriptionError

__all__ = ["RecognizerStream", "SpeechRecognizer", "TranscriptionError"]
