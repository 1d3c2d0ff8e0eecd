"""Text-to-speech providers: espeak-ng (offline default, :mod:`.espeak`) and OpenAI-compatible
servers (:mod:`.openai`).

Only the interface is imported here: a provider's module loads when :mod:`gateway.talk.setup`
builds that provider, not at gateway start.
"""

from __future__ import annotations

from gateway.talk.tts.base import (
    OutputFormat,
    SpeakRequest,
    SpeechError,
    SpeechProvider,
    SpeechResult,
    parse_output_format,
)

__all__ = [
    "OutputFormat",
    "SpeakRequest",
    "SpeechError",
    "SpeechProvider",
    "SpeechResult",
    "parse_output_format",
]
