"""``talk.catalog``: what this gateway's talk can do, in the reference's shape (groups
``speech``, ``transcription`` and ``realtime``, each with ``ready`` and ``providers``)."""

from __future__ import annotations

from typing import Any

from gateway.talk.params import BRAINS, MODES, TRANSPORTS
from gateway.talk.stt.base import SpeechRecognizer
from gateway.talk.tts.base import SpeechProvider
from openclaw_desktop.protocol.audio import AUDIO_FORMATS, AudioEncoding

__all__ = ["build_catalog"]

_INPUT_FORMATS = [
    AUDIO_FORMATS[AudioEncoding.G711_ULAW].to_wire(),
    AUDIO_FORMATS[AudioEncoding.PCM16].to_wire(),
]
#: Providers this gateway knows, shown unconfigured when they are not the active one.
_KNOWN_TRANSCRIPTION = {
    "pocketsphinx": "pocketsphinx (offline, English only; limited accuracy; not in use)",
    "openai": "OpenAI-compatible transcription (talk.json: transcription.baseUrl)",
}
_KNOWN_SPEECH = {
    "espeak-ng": "espeak-ng (offline; install the espeak-ng package)",
    "openai": "OpenAI-compatible speech (talk.json: speech.baseUrl)",
}


def _transcription(recognizer: SpeechRecognizer | None) -> dict[str, Any]:
    providers = []
    active = recognizer.id if recognizer is not None else None
    for provider_id, label in _KNOWN_TRANSCRIPTION.items():
        entry: dict[str, Any] = {
            "id": provider_id,
            "label": recognizer.label if provider_id == active and recognizer else label,
            "configured": provider_id == active,
            "modes": ["transcription"],
            "transports": ["gateway-relay"],
            "brains": ["none"],
            "inputAudioFormats": list(_INPUT_FORMATS),
            "supportsPartialTranscripts": provider_id == "pocketsphinx",
        }
        providers.append(entry)
    group: dict[str, Any] = {"ready": active is not None, "providers": providers}
    if active is not None:
        group["activeProvider"] = active
    return group


def _speech(speech: SpeechProvider | None) -> dict[str, Any]:
    providers = []
    active = speech.id if speech is not None else None
    for provider_id, label in _KNOWN_SPEECH.items():
        mine = speech if provider_id == active else None
        providers.append(
            {
                "id": provider_id,
                "label": mine.label if mine is not None else label,
                "configured": mine is not None,
                "modes": ["stt-tts"],
                "brains": ["agent-consult"],
                "models": list(mine.models) if mine is not None else [],
                "voices": list(mine.voices) if mine is not None else [],
            }
        )
    group: dict[str, Any] = {"ready": active is not None, "providers": providers}
    if active is not None:
        group["activeProvider"] = active
    return group


def build_catalog(
    recognizer: SpeechRecognizer | None, speech: SpeechProvider | None
) -> dict[str, Any]:
    """The ``talk.catalog`` result."""
    return {
        "modes": list(MODES),
        "transports": list(TRANSPORTS),
        "brains": list(BRAINS),
        "speech": _speech(speech),
        "transcription": _transcription(recognizer),
        "realtime": {"ready": False, "providers": []},
    }
