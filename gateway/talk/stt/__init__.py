"""Speech-to-text providers: pocketsphinx (offline default) and OpenAI-compatible servers."""

from __future__ import annotations

from gateway.talk.stt.base import RecognizerStream, SpeechRecognizer, TranscriptionError
from gateway.talk.stt.openai import OpenAITranscriber
from gateway.talk.stt.pocketsphinx import PocketsphinxRecognizer

__all__ = [
    "OpenAITranscriber",
    "PocketsphinxRecognizer",
    "RecognizerStream",
    "SpeechRecognizer",
    "TranscriptionError",
]
