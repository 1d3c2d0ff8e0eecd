"""Text-to-speech providers: espeak-ng (offline default) and OpenAI-compatible servers."""

from __future__ import annotations

from gateway.talk.tts.base import (
    OutputFormat,
    SpeakRequest,
    SpeechError,
    SpeechProvider,
    SpeechResult,
    parse_output_format,
)
from gateway.talk.tts.espeak import EspeakSpeech
from gateway.talk.tts.openai import OpenAISpeech

__all__ = [
    "EspeakSpeech",
    "OpenAISpeech",
    "OutputFormat",
    "SpeakRequest",
    "SpeechError",
    "SpeechProvider",
    "SpeechResult",
    "parse_output_format",
]
